"""The report's outline from the documents' headings: about the topic, closest first, no junk."""

from __future__ import annotations

import asyncio

from agents_llm.document_outline import document_outline, names
from rag import HashingEmbedding
from rag.heading_passages import PASSAGE_CHUNKS
from rag.headings import DocumentHeading

TOPIC = "Creating and activating virtual environments with venv"


def heading(title: str, under: str = "", source: str = "venv.md", ordinal: int = 0) -> DocumentHeading:
    return DocumentHeading(title, 2, source, f"/docs/{source}", None, f"c{ordinal}", ordinal, 0, under)


HEADINGS = [
    heading("Contents", "Creating virtual environments. Activating a virtual environment.", ordinal=0),
    heading("Creating and activating virtual environments", "This page shows how.", ordinal=1),
    heading(
        "Creating environments",
        "Run python3 -m venv with a directory: venv creates the virtual environment there.",
        ordinal=2,
    ),
    heading("Activating it", "Run source bin/activate in the environment's directory to activate it.", ordinal=3),
    heading("Release notes", "Version 3.1 fixed a crash when the disk was full.", ordinal=4),
    heading("Creating environments", "The same heading again, in another file.", "other.md", 5),
    heading("Briefly introduce the venv module and its purpose.", "venv creates environments.", ordinal=6),
]


def test_the_outline_keeps_the_headings_about_the_topic_closest_first_and_each_once():
    entries = document_outline(HEADINGS, TOPIC, HashingEmbedding(dim=384))
    titles = [e.title for e in entries]
    # Left out: the apparatus (Contents), the topic restated, a heading about something else
    # (no topic word in it or under it), the same heading twice, an order to the writer.
    assert titles == ["Creating environments", "Activating it"]
    assert entries[0].score >= entries[1].score
    assert entries[0].citation == "venv.md"


def test_a_documents_own_title_is_no_section_when_more_headings_follow():
    doc = [
        DocumentHeading(
            "Virtual environments in practice", 1, "venv.md", "/d/venv.md", None, "c0", 0, 0, "venv guide."
        ),
        DocumentHeading("Creating environments", 2, "venv.md", "/d/venv.md", None, "c0", 0, 1, "venv creates one."),
        DocumentHeading("Activating it", 2, "venv.md", "/d/venv.md", None, "c1", 1, 0, "Activate the venv."),
    ]
    titles = [e.title for e in document_outline(doc, TOPIC, HashingEmbedding(dim=384))]
    assert "Virtual environments in practice" not in titles and len(titles) == 2
    # with nothing after it, a file's one heading is its one section
    assert [e.title for e in document_outline(doc[:1], TOPIC, HashingEmbedding(dim=384))] == [doc[0].title]


def test_a_part_and_its_own_subpart_are_not_both_sections():
    def at(title: str, level: int, ordinal: int, source: str = "venv.md") -> DocumentHeading:
        return DocumentHeading(title, level, source, f"/d/{source}", None, f"c{ordinal}", ordinal, 0, "venv.")

    doc = [
        at("Using venv", 1, 0),
        at("Environment basics", 1, 1),
        at("The venv command", 2, 2),  # a subpart of the basics
        at("Activation scripts", 1, 3),
        at("Activation in shells", 2, 4),  # a subpart of the scripts, not of the basics
        at("Environment variables", 2, 0, source="other.md"),  # another file's: nested in nothing here
    ]
    titles = {e.title for e in document_outline(doc, TOPIC, HashingEmbedding(dim=384), size=5)}
    assert not {"Environment basics", "The venv command"} <= titles, titles
    assert not {"Activation scripts", "Activation in shells"} <= titles, titles
    assert {"Using venv", "Environment variables"} <= titles and len(titles) == 4, titles
    # A subpart beyond what the part's passage holds shares no text with it: both stay.
    far = [*doc[:2], at("The venv command", 2, 1 + PASSAGE_CHUNKS)]
    assert {"Environment basics", "The venv command"} <= {
        e.title for e in document_outline(far, TOPIC, HashingEmbedding(dim=384), size=5)
    }
    # Headings of one level, or of unknown level (an unnumbered PDF line), are never nested.
    flat = [at(f"Virtual environment step {n}", 0, n) for n in range(1, 4)]
    assert len(document_outline(flat, TOPIC, HashingEmbedding(dim=384), size=5)) == 3


def test_the_headings_the_topic_names_come_first():
    topic = "Generating UUIDs with the uuid module: uuid1 and uuid4"
    doc = [  # two entries whose text echoes the topic, and the two it names, told in other words
        heading("uuid.uuid3()", "Generating UUIDs with the uuid module from an MD5 hash.", "uuid.html", 0),
        heading("uuid.uuid5()", "Generating UUIDs with the uuid module from a SHA-1 hash.", "uuid.html", 1),
        heading("uuid.uuid1()", "Made from a host ID, a sequence number and the current time.", "uuid.html", 2),
        heading("uuid.uuid4()", "A random UUID.", "uuid.html", 3),
    ]
    embedding = HashingEmbedding(dim=384)
    by_closeness = sorted(document_outline(doc, topic, embedding, size=4), key=lambda e: -e.score)
    assert [e.title for e in by_closeness[:2]] == ["uuid.uuid3()", "uuid.uuid5()"]  # what ranking alone picks
    assert [e.title for e in document_outline(doc, topic, embedding, size=2)] == ["uuid.uuid1()", "uuid.uuid4()"]


def test_a_code_heading_is_named_by_its_whole_names_and_a_prose_heading_by_its_words():
    topic = "Encoding data with base64: b64encode, b64decode and urlsafe_b64encode, and the magic rules"
    assert names(topic, "base64.b64encode()") and names(topic, "`base64.urlsafe_b64encode(s)`")
    # Names that only share parts with the topic's: another function, or a prose word's stem.
    assert not names(topic, "base64.urlsafe_b64decode()") and not names(topic, "base64.encode()")
    assert names(topic, "Magic rules") and names(topic, "Encoded data")
    assert not names(topic, "Magic rules for binary files")


def test_no_heading_about_the_topic_gives_no_outline():
    assert document_outline(HEADINGS, "Sorting networks and their depth", HashingEmbedding(dim=384)) == []


def test_the_size_caps_the_outline():
    many = [heading(f"Virtual environment step {n}", "venv creates it.", ordinal=n) for n in range(9)]
    assert len(document_outline(many, TOPIC, HashingEmbedding(dim=384), size=3)) == 3


def test_a_heading_whose_passage_has_no_sentence_to_quote_takes_no_place():
    import json

    from agents_llm.document_outline import passage_has_prose
    from rag.heading_passages import HeadingPassages

    text = (
        "# Comparators\n\nA comparator in a sorting network swaps two values when they are out of order.\n\n"
        "# Sorting network examples\n\n```\nnet = [(0, 1), (2, 3), (0, 2)]\nsort(net, values)\n```\n"
    )
    locations = {"/d/sorting.md": {"name": "sorting.md", "sha": "x", "kind": "md", "pages": [None]}}
    passages = HeadingPassages([("c0", text, {"ordinal": 0, "locations": json.dumps(locations)})])
    topic, embedding = "How sorting networks sort values", HashingEmbedding(dim=384)
    every = [e.title for e in document_outline(passages.headings, topic, embedding)]
    assert sorted(every) == ["Comparators", "Sorting network examples"]
    # Its passage is all code: a section planned from it could quote nothing, and is not planned.
    quotable = document_outline(passages.headings, topic, embedding, quotable=passage_has_prose(passages))
    assert [e.title for e in quotable] == ["Comparators"]


def test_write_reports_outline_leaves_out_a_heading_over_code_alone(tmp_path):
    from rag import ingest_paths, open_store
    from report_app.outline import plan_outline
    from tests.rag.conftest import make_rag_cfg

    folder = _guide(tmp_path)
    with (folder / "sorting.md").open("a", encoding="utf-8") as f:
        f.write("\n# Sorting network examples\n\n```\nnet = [(0, 1), (2, 3), (0, 2)]\nsort(net, values)\n```\n")
    store = open_store(make_rag_cfg(tmp_path / "store"), embedding=HashingEmbedding(dim=384))
    ingest_paths(store, folder, progress=False)
    titles, said = plan_outline("documents", "How sorting networks sort", store)
    assert sorted(titles) == ["Comparators", "Depth of sorting networks"], said


def _guide(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "sorting.md").write_text(
        "# Comparators\n\nA comparator in a sorting network swaps two values when they are out of order.\n\n"
        "# Depth of sorting networks\n\nThe depth of a sorting network is the number of comparator layers; "
        "Batcher's sorting networks have depth log squared n.\n\n"
        "# License\n\nThis text may be copied freely.\n",
        encoding="utf-8",
    )
    return folder


def test_write_report_writes_the_sections_the_documents_headings_name(tmp_path):
    from report_app import write_report
    from tests.agents_llm.test_export_and_api import api_kwargs

    result = asyncio.run(
        write_report(
            "How sorting networks sort",
            _guide(tmp_path),
            **api_kwargs(tmp_path, algo={"rounds": {"research": 1, "drafting": 4, "review": 0, "revision": 0}}),
        )
    )
    said = next(m for m in result.messages if m.startswith("outline:"))
    assert said.startswith("outline: the documents' headings closest to the task:"), said
    titles = [s.title for s in result.report.sections]
    assert sorted(titles) == ["Comparators", "Depth of sorting networks"], titles  # not the model's "Alpha methods"
    # Each section is written from, and cites, the passage its heading heads in the document.
    depth = next(s for s in result.report.sections if s.title.startswith("Depth"))
    assert "comparator layers" in depth.content, depth.content
    for section in result.report.sections:
        assert {ref.heading for ref in section.sources} == {section.title}, (section.title, section.sources)


def test_write_report_takes_the_models_outline_or_the_users_when_told(tmp_path):
    from report_app import write_report
    from tests.agents_llm.test_export_and_api import api_kwargs

    rounds = {"rounds": {"research": 1, "drafting": 4, "review": 0, "revision": 0}}
    docs = _guide(tmp_path)
    model = asyncio.run(
        write_report("How sorting networks sort", docs, **api_kwargs(tmp_path, algo=rounds, outline="model"))
    )
    assert [s.title for s in model.report.sections] == ["Alpha methods", "Beta results"]
    given = asyncio.run(
        write_report(
            "How sorting networks sort", docs, **api_kwargs(tmp_path, algo=rounds, outline=["Layers", "Swaps"])
        )
    )
    assert [s.title for s in given.report.sections] == ["Layers", "Swaps"]


def test_a_bad_outline_is_refused_before_any_model_call(tmp_path):
    import pytest

    from report_app.api import ReportInputError, run_report
    from tests.agents_llm.test_export_and_api import api_kwargs
    from tests.handcrafted_team import TeamScript

    script = TeamScript()
    with pytest.raises(ReportInputError, match="outline: expected 'documents', 'model' or a list"):
        run_report("How sorting networks sort", _guide(tmp_path), **api_kwargs(tmp_path, script, outline="headings"))
    assert script.calls == []
