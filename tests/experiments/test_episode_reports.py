"""experiments/protocol/episode_reports.py: an LLM-team report loaded from its trace for other judges, exactly
when the trace holds the report's state, otherwise rebuilt from its Markdown and the files it cites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from experiments.protocol.episode_reports import CHUNK_CHARS, load_episode_report, load_episode_reports

from agents_llm.report_state import ReportState
from rag.sources import SourceRef


def write_trace(folder: Path, corpus: Path, sections: list[tuple[str, str, list[str]]], **extra) -> Path:
    report = ReportState(topic="Caching results", key_terms=["cache"])
    for title, content, _ in sections:
        report.append(title, content)
    doc = {
        "episode": {
            "task": {"id": "caching", "topic": "Caching results", "corpus": str(corpus), "key_terms": ["cache"]}
        },
        "rounds": [
            {
                "report_score": 0.42,
                "report": {
                    "sections": [{"id": f"S{i}", "title": t, "sources": s} for i, (t, _, s) in enumerate(sections, 1)]
                },
            }
        ],
        "report_markdown": report.to_markdown() + "\n## References\n\n1. a.md\n",
        **extra,
    }
    path = folder / "policy" / "caching" / "episode_1" / "trace.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    paragraphs = [f"Paragraph {i} says the cache keeps result {i} for later calls." * 8 for i in range(12)]
    (folder / "a.md").write_text("\n\n".join(paragraphs), encoding="utf-8")
    (folder / "b.md").write_text("A memo table maps arguments to results.", encoding="utf-8")
    return folder


def test_an_old_trace_is_rebuilt_from_its_markdown_and_the_whole_files_it_cites(tmp_path, corpus):
    sections = [
        ("Why cache", "A cache keeps results.\n\nIt saves calls.", ["a.md"]),
        ("Memo", "A memo table.", ["a.md", "b.md"]),
    ]
    report = load_episode_report(write_trace(tmp_path, corpus, sections))
    assert not report.exact and report.recorded_score == 0.42 and report.label == "policy/caching"
    assert [(s.title, s.content) for s in report.state.sections] == [(t, c) for t, c, _ in sections]
    first = report.state.sections[0].sources
    # Every paragraph of a.md is in some chunk, and no chunk is much longer than the store's.
    text = (corpus / "a.md").read_text()
    assert "\n\n".join(s.text for s in first) == text
    assert len(first) > 1 and all(len(s.text) < 2 * CHUNK_CHARS for s in first)
    assert {s.source for s in report.state.sections[1].sources} == {"a.md", "b.md"}
    assert report.state.key_terms == ["cache"]


def test_a_trace_with_the_report_state_is_read_exactly(tmp_path, corpus):
    state = ReportState(topic="Caching results")
    state.append("Why cache", "A cache keeps results.", [SourceRef("a.md", chunk_id="c7", text="the cited chunk")])
    path = write_trace(tmp_path, corpus, [("Ignored", "x", ["b.md"])], report_state=state.to_dict())
    report = load_episode_report(path)
    assert report.exact
    assert report.state.to_dict() == state.to_dict()


def test_unreadable_traces_are_refused_naming_the_file_and_the_problem(tmp_path, corpus):
    missing = write_trace(tmp_path / "m", corpus, [("Gone", "text", ["nowhere.md"])])
    with pytest.raises(ValueError, match=r"trace.json.*cites 'nowhere.md'"):
        load_episode_report(missing)
    mismatched = write_trace(tmp_path / "x", corpus, [("One", "text", ["a.md"])])
    doc = json.loads(mismatched.read_text())
    doc["rounds"][-1]["report"]["sections"][0]["title"] = "Another"
    mismatched.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"do not match the last round's outline \['Another'\]"):
        load_episode_report(mismatched)
    broken = tmp_path / "broken" / "trace.json"
    broken.parent.mkdir()
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable episode trace"):
        load_episode_report(broken)
    with pytest.raises(FileNotFoundError, match="neither a trace file nor a folder"):
        load_episode_reports([tmp_path / "absent"])


def test_a_folder_gives_every_trace_under_it(tmp_path, corpus):
    write_trace(tmp_path / "one", corpus, [("A", "a", ["a.md"])])
    write_trace(tmp_path / "two", corpus, [("B", "b", ["b.md"])])
    assert [r.state.sections[0].title for r in load_episode_reports([tmp_path])] == ["A", "B"]
