"""The referee inside the report env: flags in infos, trace and counts; the penalty changes only flagged rounds."""

from __future__ import annotations

import pytest

from agents_llm.backends.scripted import ScriptedBackend
from agents_llm.referee import FLAG_KINDS
from report_protocol import ActionTable
from tests.report_doubles import HASHING_JUDGE, HASHING_RAG, StubRetriever

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(len(TEAM))
STOCK = "## The sky is blue.\nThe sky is blue. The sky is blue is a fact. The sky is blue."


def make_env(referee=None):
    from envs.report.writing import ReportWritingEnv

    # TEST DOUBLE team: the Collector writes a stock sentence over and over; sources are off-topic.
    backend = ScriptedBackend(rules=[(r"technical writer", STOCK)])
    return ReportWritingEnv(
        team=TEAM,
        llm={"backend": "scripted"},
        rag=HASHING_RAG,
        judge=HASHING_JUDGE,
        max_rounds=3,
        min_rounds_before_terminate=1,
        backend=backend,
        referee=referee,
        infos="full",
        retriever=StubRetriever(["Version 0.4.2 fixes a packaging error in the wheel metadata."]),
    )


def run(env, rounds=2):
    env.reset(seed=0, options={"topic": "Asynchronous programming in Python"})
    out = []
    for _ in range(rounds):
        joint = {a: T.solo for a in TEAM}
        joint["Researcher"] = T.append
        out.append(env.step(joint))
    return out


def test_flags_reach_infos_trace_and_counts_and_the_penalty_applies_to_flagged_rounds_only():
    plain, penalised = run(make_env({"penalize": False})), run(make_env({"penalize": True, "penalty": 0.1}))
    saw_flag = False
    for (_, r0, _, _, info0), (_, r1, _, _, info1) in zip(plain, penalised):
        i0, i1 = info0["Researcher"], info1["Researcher"]
        assert {f"referee/{k}" for k in FLAG_KINDS} <= set(i0)
        kinds0 = sorted(f["kind"] for f in i0["referee"])
        assert kinds0 == sorted(f["kind"] for f in i1["referee"])  # same episode, same flags
        assert i0["referee/flags"] == len(i0["referee"])
        n = sum(f["on_report"] for f in i1["referee"])
        assert i1["referee/report_flags"] == n
        if n:
            saw_flag = True
            assert all(f["reason"] and f["penalised"] for f in i1["referee"] if f["on_report"])
            assert r1["Researcher"] == pytest.approx(min(r0["Researcher"], 0.0) - 0.1 * n)
        else:
            assert r1["Researcher"] == pytest.approx(r0["Researcher"])
        assert i0["report_score"] == pytest.approx(i1["report_score"])  # the measurement is untouched
    assert saw_flag, "the stock sentence written twice should have been flagged"
    second = penalised[1][4]["Researcher"]["referee"]
    assert "repetition" in [f["kind"] for f in second]


def test_the_trace_keeps_the_flags_and_the_viewer_shows_them():
    from agents_llm.viz.trace_panels import report_panel_html

    env = make_env({"penalize": True})
    run(env)
    rounds = env.trace.rounds
    flagged = [i for i, r in enumerate(rounds) if any(f["on_report"] for f in r["referee"])]
    assert flagged
    doc = {"rounds": rounds, "episode": {"task": {"topic": "x"}, "team": []}, "end": {}}
    html = report_panel_html(doc, flagged[-1], after=True, final=False)
    assert "Referee flags" in html and "repetition" in html
    clean = [i for i, r in enumerate(rounds) if not r["referee"]]
    for i in clean:
        assert "Referee flags" not in report_panel_html(doc, i, after=True, final=False)


def test_the_training_config_penalises_and_documents_it():
    import yaml
    from pathlib import Path

    cfg = yaml.safe_load((Path(__file__).parents[3] / "conf/env/report_writing.yaml").read_text())
    assert cfg["env"]["referee"]["penalize"] is True and cfg["env"]["referee"]["enabled"] is True
    from envs.report.writing import ReportWritingEnv

    with pytest.raises(ValueError, match="env.referee: unknown key"):
        ReportWritingEnv(
            team=TEAM,
            llm={"backend": "scripted"},
            rag=HASHING_RAG,
            judge=HASHING_JUDGE,
            backend=ScriptedBackend(),
            referee={"penalise": True},
        )
