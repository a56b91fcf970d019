"""The trace records each round's written section text (`collector.content`), and
replaying those texts in order rebuilds the report: appends join, revisions replace."""

from __future__ import annotations

import copy
import json

import jsonschema

from report_protocol import ActionTable
from agents_llm.trace import TRACE_SCHEMA, load_trace, replay_report

from .conftest import StubRetriever, make_env

T = ActionTable(4)
TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]


def _solo(**override):
    return {**{a: T.solo for a in TEAM}, **override}


def test_each_written_section_text_is_in_the_trace_and_replaying_rebuilds_the_report(tmp_path):
    env = make_env(retriever=StubRetriever(), output_dir=str(tmp_path), save_episodes=True, max_rounds=5)
    env.reset(seed=0)
    written = []  # (round, section id, its text in the report right after the round): the env's own state
    steps = [
        lambda: env.step(_solo(DataAnalyst=T.append)),
        lambda: env.step(_solo()),  # nothing reaches the Collector
        lambda: env.step(_solo(LeadArchitect=T.append)),
        lambda: env.step_plan({"acting": ["Reviewer"], "edges": [["Reviewer", "Collector"]], "revise_section": "S1"}),
        lambda: env.step(_solo(DataAnalyst=T.append)),
    ]
    first_s1 = None
    for i, step in enumerate(steps, 1):
        _, _, _, _, info = step()
        sid = info["Reviewer"]["collector_section"]
        if sid:
            written.append((i, sid, env.report.get(sid).content))
        if i == 1:
            first_s1 = env.report.get("S1").content
    assert [sid for _, sid, _ in written] == ["S1", "S2", "S1", "S3"]
    assert env.report.get("S1").content != first_s1  # the revision really rewrote S1

    [folder] = list(tmp_path.iterdir())
    doc = load_trace(folder / "trace.json")
    jsonschema.validate(doc, TRACE_SCHEMA)
    rounds = doc["rounds"]
    assert [r["collector"]["status"] for r in rounds] == ["appended", "idle", "appended", "revised", "appended"]
    for i, sid, text in written:
        c = rounds[i - 1]["collector"]
        assert c["section_id"] == sid and c["content"] == text
    assert rounds[1]["collector"]["content"] is None
    # Compact: the text is in the collector record only, not copied into the report snapshot.
    for i, _, text in written:
        assert text not in json.dumps(rounds[i - 1]["report"])

    states = replay_report(rounds)
    assert [[s["id"] for s in state] for state in states] == [
        ["S1"],
        ["S1"],
        ["S1", "S2"],
        ["S1", "S2"],
        ["S1", "S2", "S3"],
    ]
    assert states[2][0]["content"] == first_s1 and states[3][0]["content"] != first_s1
    final = [{"id": s.id, "title": s.title, "content": s.content} for s in env.report.sections]
    assert states[-1] == final
    for s in final:
        assert f"## {s['title']}\n\n{s['content']}\n" in doc["report_markdown"]


def test_a_trace_without_content_still_validates_and_replays_as_unknown_text():
    env = make_env(retriever=StubRetriever(), max_rounds=2)
    env.reset(seed=0)
    env.step(_solo(DataAnalyst=T.append))
    doc = copy.deepcopy(env.trace.to_dict())
    for rnd in doc["rounds"]:
        del rnd["collector"]["content"]  # what a trace written before the field looks like
    jsonschema.validate(doc, TRACE_SCHEMA)
    [state] = replay_report(doc["rounds"])
    assert state == [{"id": "S1", "title": env.report.get("S1").title, "content": None}]
