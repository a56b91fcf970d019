"""The engine's reading of model output into the report protocol's structured feedback.

Each feedback kind (outline titles, tagged findings, signals / hold, deficiencies, the
gate verdict) is read from realistic and from malformed text; the feedback survives the
plain-data round trip the env's infos make; the phase prompts word every directive.
"""

from __future__ import annotations

import pytest

from agents_llm import phase_prompts
from agents_llm.directive_words import DEFAULT_FINDING
from agents_llm.engine import feedback as fb
from report_protocol import Directive, RoundFeedback, RoundPlan
from report_protocol import vocabulary as voc


def test_outline_titles_from_numbered_lists_bullets_and_headings():
    text = (
        "OBJECTIVE: start\n1. Background\n2) Methods (doc1.md)\n- Results [2]\n## Limits\nSection 5: Outlook\n"
        "MISSING: quantum\n- Results\n* ab\n- Notes on style"
    )
    assert fb.outline_titles(text) == ["Background", "Methods", "Results", "Limits", "Outlook"]


def test_outline_titles_stop_at_the_limit_and_ignore_prose():
    assert fb.outline_titles("\n".join(f"{i}. Title number {i}" for i in range(1, 30)), limit=3) == [
        "Title number 1",
        "Title number 2",
        "Title number 3",
    ]
    assert fb.outline_titles("We will write about sorting. It is good.") == []


def test_findings_name_live_sections_only_whatever_the_tags_case():
    found = fb.tagged_findings(
        "[SECTION_ID: S2] too long\n[section_id: s9] ghost\n- [SECTION_ID:s1]: cite\nplain", ["S1", "S2"]
    )
    assert [(f.section_id, f.text) for f in found] == [("S2", "too long"), ("S1", "cite")]


def test_signals_and_absence_markers():
    read = fb.read_agent(f"{voc.HOLD} nothing to add", [])
    assert read.signals == [voc.HOLD] and not read.said_something and read.holds
    read = fb.read_agent(f"Done. {voc.DRAFTING_COMPLETE}", [])
    assert read.signals == [voc.DRAFTING_COMPLETE] and read.said_something
    assert not fb.said_something(f"{voc.RESEARCH_EXHAUSTED} nothing relevant found for: x")
    assert not fb.said_something("   \n") and not fb.said_something(None)


def test_deficiencies_from_missing_lines_and_empty_searches():
    text = "Covered: sorting (doc0.md)\nMISSING: quantum sorting.\n- missing : tape drives\nMISSING: ab"
    assert fb.deficiencies(text) == ["quantum sorting", "tape drives"]
    assert fb.deficiencies(f"{voc.RESEARCH_EXHAUSTED} {voc.NOTHING_FOUND_FOR} bitonic sort; odd-even merge.") == [
        "bitonic sort",
        "odd-even merge",
    ]


def test_a_missing_line_that_names_a_document_is_no_gap_of_the_report():
    # Seen from Qwen2.5-0.5B on a PDF: the report listed its own source under "not found".
    text = "MISSING: shared-mime-info-spec.pdf\nMISSING: docs/venv.html\nMISSING: magic rule priorities"
    assert fb.deficiencies(text) == ["magic rule priorities"]
    assert fb.deficiencies("MISSING: the .pdf export of reports") == ["the .pdf export of reports"]


def test_a_long_deficiency_is_cut_at_a_word_and_says_so():
    query = "Network code must not wait forever. The function asyncio.wait_for waits for an awaitable with a timeout and cancels it when time runs out"
    [cut] = fb.deficiencies(f"{voc.RESEARCH_EXHAUSTED} {voc.NOTHING_FOUND_FOR} {query}")
    assert len(cut) <= fb.MAX_DEFICIENCY_CHARS and cut.endswith("\u2026")
    assert query.startswith(cut[:-1]) and query[len(cut) - 1] == " "  # whole words only
    assert fb.deficiencies("MISSING: tape drives") == ["tape drives"]  # short ones untouched


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00\x01\ufffd garbage",
        "[SECTION_ID: S1",
        "[SECTION_ID:]",
        "[SECTION_ID: ] fix",
        "1.",
        "#",
        "- ",
        "MISSING:",
        "x" * 20000,
        "[HOLD" + "]" * 3,
        "\n\n\n",
    ],
)
def test_malformed_model_text_reads_as_empty_feedback_not_an_error(text):
    read = fb.read_agent(text, ["S1"])
    assert read.findings == [] and read.deficiencies == []
    assert all(3 <= len(t) <= 120 for t in read.outline)


def test_round_feedback_survives_the_infos_round_trip():
    round_fb = fb.read_round(
        {"LeadArchitect": "1. Alpha methods\n2. Beta results", "Reviewer": "[SECTION_ID: S1] fix"},
        collector_status="appended",
        collector_section="S1",
        sections=[("S1", "Alpha", 120)],
        gate_agent="Researcher",
        gate_passed=False,
    )
    back = RoundFeedback.from_dict(round_fb.to_dict())
    assert back == round_fb
    assert list(back.agents) == ["LeadArchitect", "Reviewer"]  # the order the agents finished in
    assert back.agents["LeadArchitect"].outline == ["Alpha methods", "Beta results"]
    assert back.agents["Reviewer"].findings[0].section_id == "S1"
    assert back.gate_passed is False and back.sections[0].chars == 120
    assert fb.read_round({}, collector_status="idle", collector_section=None, sections=[]).gate_passed is None


def test_signals_are_read_with_or_without_their_brackets():
    assert fb.names_signal("RESEARCH_EXHAUSTED", voc.RESEARCH_EXHAUSTED)
    assert fb.names_signal(f"see {voc.RESEARCH_EXHAUSTED}.", voc.RESEARCH_EXHAUSTED)
    assert not fb.names_signal("NOT_RESEARCH_EXHAUSTED_YET", voc.RESEARCH_EXHAUSTED)
    assert not fb.names_signal("hold the line", voc.HOLD)  # a word, not the bracket-less signal
    assert fb.without_signal(f"Facts (a.md). {voc.RESEARCH_EXHAUSTED} RESEARCH_EXHAUSTED", voc.RESEARCH_EXHAUSTED) == (
        "Facts (a.md)."
    )


def test_exhausted_beside_new_evidence_for_a_section_is_not_believed():
    """The protocol's rule (report_protocol.feedback.exhaustion_believed), as the engine reads a round."""
    from report_protocol.feedback import exhaustion_believed

    assert exhaustion_believed(voc.FIND_EVIDENCE, 0) and exhaustion_believed(None, 3)
    assert exhaustion_believed(voc.WRITE_SECTION, 3) and not exhaustion_believed(voc.FIND_EVIDENCE, 2)
    text = f"{voc.RESEARCH_EXHAUSTED} {voc.NOTHING_FOUND_FOR} beta"
    asked = fb.read_agent(text, [], new_evidence=2, directive=voc.FIND_EVIDENCE)
    assert asked.said_something and asked.signals == [] and asked.deficiencies == [] and asked.new_evidence == 2
    for believed in (
        fb.read_agent(text, [], new_evidence=0, directive=voc.FIND_EVIDENCE),  # nothing new: believed
        fb.read_agent(text, [], new_evidence=2),  # RESEARCH: the Researcher judges what it gathered
    ):
        assert not believed.said_something and believed.signals == [voc.RESEARCH_EXHAUSTED]
    round_fb = fb.read_round(
        {"Researcher": text},
        collector_status="idle",
        collector_section=None,
        sections=[],
        new_evidence={"Researcher": 1},
        directives={"Researcher": voc.FIND_EVIDENCE},
    )
    assert round_fb.agents["Researcher"].said_something
    assert RoundFeedback.from_dict(round_fb.to_dict()) == round_fb


def test_malformed_feedback_is_refused_naming_the_problem():
    with pytest.raises(ValueError, match="unknown keys"):
        RoundFeedback.from_dict({"agents": {}, "outputs": {}})
    with pytest.raises(ValueError, match="malformed feedback"):
        RoundFeedback.from_dict({"agents": {"LeadArchitect": {"text": "x"}}})


def test_every_directive_is_worded_with_its_parameters():
    for kind in voc.DIRECTIVE_KINDS:
        instruction, data = phase_prompts.directive_parts(
            Directive(
                kind,
                title="Alpha",
                section_id="S2",
                finding="cite more",
                position=1,
                total=3,
                notice=voc.SECTION_COMPLETE,
            )
        )
        assert instruction.strip(), kind
        text = "\n".join(data)
        # the title and the finding came from teammates: in the data items, never in the instruction
        assert "Alpha" not in instruction and "cite more" not in instruction
        if kind in (voc.ASSIGN_SECTION, voc.WRITE_SECTION, voc.FIND_EVIDENCE):
            assert "Alpha" in text
        if kind == voc.ASSIGN_SECTION:
            assert "Section to write now (1 of 3): Alpha" in text
        if kind in (voc.ASSIGN_CORRECTION, voc.APPLY_CORRECTION):
            assert "[SECTION_ID: S2]" in instruction and "[SECTION_ID: S2] (Alpha): cite more" in text
        if kind in (voc.CLOSE_DRAFTING, voc.NAME_NEXT_SECTION, voc.CLOSE_REVISION):
            assert data == []
    assert phase_prompts.directive_text(Directive(voc.APPLY_CORRECTION, section_id="S1")).count(DEFAULT_FINDING) == 1
    assert voc.NOTICES[voc.CORRECTION_APPLIED] in phase_prompts.directive_text(
        Directive(voc.CLOSE_REVISION, notice=voc.CORRECTION_APPLIED)
    )


def test_unknown_directive_ids_are_refused():
    with pytest.raises(ValueError, match="unknown kind 'write_poem'"):
        Directive("write_poem")
    with pytest.raises(ValueError, match="unknown notice"):
        Directive(voc.WRITE_SECTION, notice="[DONE]")
    with pytest.raises(ValueError, match=r"RoundPlan.directives\['Writer'\]: expected 'kind'"):
        RoundPlan.from_dict({"acting": ["Writer"], "directives": {"Writer": {"title": "x"}}})


def test_the_signals_the_phase_prompts_teach_are_the_ones_the_engine_reads():
    for phase, signal in voc.EXIT_SIGNALS.items():
        taught = phase_prompts.PHASE_BLOCK[phase] + " ".join(phase_prompts.OBJECTIVE[phase].values())
        assert signal in taught, (phase, signal)
        assert signal in fb.read_agent(f"ok {signal}", []).signals
    assert voc.HOLD in " ".join(phase_prompts.OBJECTIVE[voc.REVISION].values())
