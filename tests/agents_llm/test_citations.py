"""References a reader can follow: one entry per passage, told apart; a section cites the passages it rests on."""

from __future__ import annotations

import asyncio

from agents_llm import export
from agents_llm.collector import Collector
from agents_llm.report_state import ReportState, SourceRef
from agents_llm.sentence_reuse import cited_passages

PINS = SourceRef(
    "guide.md",
    None,
    "c1",
    "## Pinning\n\nPin every dependency with == in the requirements file so that installs repeat exactly. "
    "The pip freeze command prints the installed versions in that format.",
)
VENV = SourceRef(
    "guide.md",
    None,
    "c2",
    "## Virtual environments\n\nThe venv module creates a virtual environment in a directory of its own. "
    "Activate it with the activate script before installing packages.",
)
SPEC = SourceRef("spec.pdf", 4, "c3", "Magic rules match bytes at fixed offsets of a file to tell its type.")


def test_two_passages_of_one_file_are_two_entries_a_reader_can_tell_apart():
    report = ReportState("Python packaging")
    report.append(
        "Pins", "Pin every dependency with == in the requirements file so that installs repeat exactly.", [PINS]
    )
    report.append("Environments", "The venv module creates a virtual environment in a directory of its own.", [VENV])
    md = export.to_markdown(report)
    refs = md[md.index("## References") :].splitlines()[2:]
    # A reference quotes the first sentence a report may quote from its passage: "== " reads as code
    # to sentence reuse (`is_prose`), so the first passage is quoted from its second sentence.
    assert refs == [
        "1. guide.md, section \u201cPinning\u201d, \u201cThe pip freeze command prints the installed versions in that ...\u201d",
        "2. guide.md, section \u201cVirtual environments\u201d, \u201cThe venv module creates a virtual environment in a directory ...\u201d",
    ]
    assert (
        export.reference_label(SPEC)
        == "spec.pdf, p. 4, \u201cMagic rules match bytes at fixed offsets of a file ...\u201d"
    )
    tex = export.to_latex(report)
    assert r"\bibitem{ref2} guide.md, section ``Virtual environments''" in tex


def test_two_parts_of_a_passage_that_read_as_one_place_are_one_entry():
    # A heading's passage over two overlapping chunks: both parts open on the same sentence.
    opening = "Return an IPv4Address or IPv6Address object depending on the IP address passed as argument."
    first = SourceRef("ip.html", None, "c1", f"### `ip_address(address)`\n\n{opening}", heading="ip_address()")
    second = SourceRef("ip.html", None, "c2", f"{opening} A ValueError is raised otherwise.", heading="ip_address()")
    report = ReportState("IP addresses")
    report.append("ip_address()", opening, [first, second])
    report.append(
        "Pins", "Pin every dependency with == in the requirements file so that installs repeat exactly.", [PINS]
    )
    md = export.to_markdown(report)
    refs = md[md.index("## References") :].splitlines()[2:]
    assert len(refs) == 2 and refs[0].startswith("1. ip.html, section") and refs[1].startswith("2. guide.md"), refs
    assert "Sources: [1]\n" in md and "Sources: [2]\n" in md
    tex = export.to_latex(report)
    assert r"\bibitem{ref2} guide.md" in tex and r"\bibitem{ref3}" not in tex


def test_a_reference_opens_on_the_passages_first_prose_not_on_its_markup():
    """A PDF's XML example has no code fence: the reference opens on the prose after it."""
    xml = SourceRef(
        "spec.pdf",
        9,
        "c9",
        '<magic priority="50">\n\n<match type="string" offset="0" value="%PDF"/>\n\n'
        "A match element compares bytes at an offset with a value.",
    )
    assert (
        export.reference_label(xml)
        == "spec.pdf, p. 9, \u201cA match element compares bytes at an offset with a ...\u201d"
    )


def test_a_section_cites_exactly_the_passages_its_sentences_come_from():
    body = (
        "Pin every dependency with == in the requirements file so that installs repeat exactly. "
        "The pip freeze command prints the installed versions in that format."
    )
    assert cited_passages(body, [VENV, PINS, SPEC]) == [PINS]
    # A sentence in the writer's words that states one passage's sentence cites that passage.
    said = "Activate the environment with its activate script before installing packages."
    assert cited_passages(said, [PINS, VENV, SPEC]) == [VENV]
    # Prose supported only by several passages together cites those that share its words most.
    mixed = "Environments and pins and magic offsets."
    assert cited_passages(mixed, [PINS, VENV, SPEC]) != [PINS, VENV, SPEC]


def test_the_collector_files_the_section_under_the_passages_it_quotes():
    report = ReportState("Python packaging with pip and venv")
    replies = [
        "## Pins\nPin every dependency with == in the requirements file so that installs repeat exactly. "
        "The pip freeze command prints the installed versions in that format.",
        "A summary.",
    ]

    async def call(agent, kind, messages, max_tokens):
        return replies.pop(0)

    result = asyncio.run(
        Collector(reuse_sources=True).run(
            call=call,
            report=report,
            contributions=[("DataAnalyst", "notes")],
            objective="Pinning dependencies",
            sources=[VENV, PINS, SPEC],
        )
    )
    assert result.status == "appended"
    assert [s.chunk_id for s in report.sections[0].sources] == ["c1"]
