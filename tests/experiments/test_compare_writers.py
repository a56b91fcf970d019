"""experiments/protocol/compare_writers.py: how much of a report is the writer's own words, and what the
grounding check did with them, read from write_report's outputs."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

import experiments.protocol.compare_writers as compare_writers  # noqa: E402

DOC = (
    "The venv module creates lightweight virtual environments.\n"
    "Each environment has its own\nset of installed packages.\n"  # a wrapped sentence
)
REPORT = """# Virtual environments

_Written by the handcrafted policy_

## Creating one

The venv module creates lightweight virtual environments. A virtual environment keeps the packages of
one project apart from every other project.

## Packages

Each environment has its own set of installed packages.

## References

1. venv.md
"""


def test_own_words_are_the_sentences_no_document_holds_and_a_wrapped_quote_is_still_a_quote():
    said = compare_writers.report_sentences(compare_writers.section_texts({}, REPORT))
    assert said == [
        "The venv module creates lightweight virtual environments.",
        "A virtual environment keeps the packages of one project apart from every other project.",
        "Each environment has its own set of installed packages.",
    ]
    assert compare_writers.own_share(said, [DOC]) == 1 / 3
    assert compare_writers.own_share(said[::2], [DOC]) == 0.0


def test_the_grounding_notes_of_the_trace_are_counted_per_sentence_and_per_section():
    trace = {
        "rounds": [
            {
                "collector": {
                    "status": "appended",
                    "content": "The loop runs tasks. It waits for them.",
                    "grounding": "",
                    "reused_sources": "",
                }
            },
            {
                "collector": {
                    "status": "appended",
                    "content": "C.",
                    "grounding": "1 of 4 sentences replaced by the source sentence they paraphrase, 2 unsupported "
                    "dropped, 1 kept in the writer's words by meaning",
                    "reused_sources": "",
                }
            },
            {"collector": {"status": "appended", "content": "D.", "reused_sources": "echoes the prompt"}},
            {"collector": {"status": "skipped", "content": None}},
        ]
    }
    assert compare_writers.grounding_counts(trace) == (3, 1, 2, 1)


def test_a_finished_pair_is_read_back_and_not_run_again(tmp_path: Path):
    run_dir = tmp_path / "venv" / "smollm2-135m"
    out = run_dir / "2026-12-04_12-00-00_venv"
    out.mkdir(parents=True)
    (out / "report.md").write_text(REPORT)
    last = {"tokens": {"round": 200, "episode": 1234}, "report": {"sections": [{}, {}], "chars": 300}}
    (out / "trace.json").write_text(json.dumps({"rounds": [{**last, "report_score": 0.61234}]}))
    (run_dir / "run.json").write_text(json.dumps({"exit_code": 0, "seconds": 12.5}))
    code, seconds = compare_writers.run_one(tmp_path, "venv", tmp_path, "Venv", "smollm2-135m", [])
    assert (code, seconds) == (0, 12.5)  # from run.json: no model was started
    row = compare_writers.read_run(run_dir, [DOC], "venv", "smollm2-135m", code, seconds)
    assert row is not None
    assert (row.tokens, row.sections, row.chars, row.score) == (1234, 2, 300, 0.612)
    assert (row.sentences, row.own) == (3, 0.333)
    # The trace's report state, when it has one, is what was written (the Markdown is only its rendering).
    state = {"sections": [{"content": "Each environment has its own set of installed packages."}]}
    (out / "trace.json").write_text(json.dumps({"rounds": [last], "report_state": state}))
    row = compare_writers.read_run(run_dir, [DOC], "venv", "smollm2-135m", code, seconds)
    assert row is not None and (row.sentences, row.own) == (1, 0.0)


def test_the_llm_judge_reads_the_traces_final_report_once(tmp_path: Path):
    state = {"topic": "Venv", "sections": [{"id": "s1", "title": "Creating one", "content": DOC, "sources": []}]}
    (tmp_path / "trace.json").write_text(json.dumps({"rounds": [], "report_state": state}))
    (tmp_path / "report.md").write_text(REPORT)
    asked = []

    def judge(report):
        asked.append(report)
        return 0.4

    assert compare_writers.llm_judge_score(tmp_path / "report.md", judge) == 0.4
    assert compare_writers.llm_judge_score(tmp_path / "report.md", judge) == 0.4
    assert len(asked) == 1 and asked[0].topic == "Venv" and asked[0].sections[0].title == "Creating one"
