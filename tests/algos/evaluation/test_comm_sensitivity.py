"""The communication-sensitivity diagnostics (algos/evaluation/comm_sensitivity.py), on tables
whose answer is known and on two scripted teams: one whose writer can only write what it
received (the team's information rules), one whose writer writes from the team's pool whoever
sent what. The diagnostics must call the first sensitive and the second not."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agents_llm.backends import TokenLedger
from agents_llm.engine import EngineSettings, EpisodeContext, RoundEngine, plan_from_actions
from agents_llm.text.split import sentences
from agents_llm.report_state import ReportState
from agents_llm.roles import build_team
from algos.evaluation.comm_sensitivity import jaccard, paired_difference, policy_identity, report_overlap
from report_protocol import ActionTable

from tests.report_doubles import StubRetriever, scripted

# -- known tables ------------------------------------------------------------------


def test_a_policy_offset_is_found_and_a_relabelling_is_not():
    rng = np.random.default_rng(0)
    task = rng.random(8)  # the task explains most of the score
    offsets = np.array([0.0, 0.05, 0.10, 0.15])[:, None]
    sensitive = policy_identity(task + offsets + rng.normal(0, 0.005, (4, 8)), list("abcd"), reps=2000)
    assert sensitive.share > 0.9 and sensitive.p < 0.01
    blind = policy_identity(np.tile(task, (4, 1)) + rng.normal(0, 0.01, (4, 8)), list("abcd"), reps=2000)
    assert blind.share < 0.5 and blind.p > 0.05


def test_policy_identity_is_exact_on_small_tables():
    # 2 policies x 3 tasks: 2^3 relabellings; the observed order is one of the two extremes.
    r = policy_identity([[1.0, 2.0, 3.0], [0.0, 1.0, 2.0]], ["a", "b"])
    assert r.share == pytest.approx(1.0) and r.p == pytest.approx(2 / 8)


def test_policy_identity_refuses_a_table_of_the_wrong_shape():
    with pytest.raises(ValueError, match="policies, tasks"):
        policy_identity([[1.0, 2.0]], ["a", "b"])


def test_report_overlap_and_paired_difference():
    same = {"a": {"t": {"x.", "y."}}, "b": {"t": {"x.", "y."}}}
    apart = {"a": {"t": {"x."}}, "b": {"t": {"z."}}, "c": {"u": {"w."}}}
    assert report_overlap(same).mean == 1.0
    assert report_overlap(apart).mean == 0.0 and report_overlap(apart).pairs == 1
    assert jaccard({"x.", "y."}, {"y.", "z."}) == pytest.approx(1 / 3)
    d = paired_difference([0.2, 0.3, 0.25, 0.1, 0.15])
    assert d["low"] > 0 and d["p"] == pytest.approx(2 / 32)
    many = paired_difference(np.full(30, 0.1) + np.linspace(-0.01, 0.01, 30), reps=2000)
    assert many["p"] < 0.01 and many["tasks"] == 30


# -- two scripted teams -------------------------------------------------------------

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(4)
TASKS = {
    f"task{k}": tuple(
        f"Fact {k}.{i}: the module {name} exposes the function {name}_{i} that returns a value of kind {i}."
        for i in range(2 + k)
    )
    for k, name in enumerate(["alpha", "beta", "gamma", "delta", "epsilon"])
}


def _solo(**kw: int) -> dict:
    return {a: kw.get(a, T.solo) for a in TEAM}


# Communication policies over 4 rounds: who hears the Researcher before someone appends.
POLICIES = {
    "relay": [_solo(DataAnalyst=T.query(1)), _solo(DataAnalyst=T.append)] * 2,
    "chain": [_solo(DataAnalyst=T.query(1), Reviewer=T.query(2)), _solo(Reviewer=T.append)] * 2,
    "once": [_solo(DataAnalyst=T.query(1)), _solo(DataAnalyst=T.append), _solo(), _solo(DataAnalyst=T.append)],
    "deaf": [_solo(), _solo(DataAnalyst=T.append)] * 2,
}


def _play(rounds: list[dict], texts: tuple[str, ...], **settings) -> tuple[float, set[str]]:
    """Score (sentences written) and the report's sentences of one scripted episode."""
    engine = RoundEngine(
        build_team(TEAM),
        scripted(),
        retriever=StubRetriever(texts=texts),
        settings=EngineSettings(reuse_sources=True, **settings),
    )
    ctx = EpisodeContext(ReportState("The modules of the standard library"), TokenLedger())
    for joint in rounds:
        asyncio.run(engine.run(plan_from_actions(TEAM, joint), ctx))
    said = {s for sec in ctx.report.sections for s in sentences(sec.content)}
    return float(len(said)), said


def _panel(flow: str, deliver: bool = True) -> tuple[np.ndarray, dict]:
    scores, reports = [], {}
    for policy, rounds in POLICIES.items():
        row = []
        for task, texts in TASKS.items():
            score, said = _play(rounds, texts, evidence_flow=flow, deliver_messages=deliver)
            row.append(score)
            reports.setdefault(policy, {})[task] = said
        scores.append(row)
    return np.array(scores), reports


def test_the_diagnostics_call_a_team_that_writes_what_it_receives_sensitive():
    scores, reports = _panel("team")
    ablated, _ = _panel("team", deliver=False)
    relay = list(POLICIES).index("relay")
    assert paired_difference(scores[relay] - ablated[relay])["low"] > 0  # blanking messages costs the report
    identity = policy_identity(scores, list(POLICIES), reps=2000)
    assert identity.p < 0.01
    assert report_overlap(reports).mean < 0.9


def test_the_diagnostics_call_a_team_that_writes_from_the_pool_insensitive():
    scores, reports = _panel("pooled")
    ablated, _ = _panel("pooled", deliver=False)
    relay = list(POLICIES).index("relay")
    assert np.all(scores[relay] == ablated[relay])  # nothing sent mattered
    assert policy_identity(scores, list(POLICIES), reps=2000).p > 0.05
    assert report_overlap(reports).mean > 0.9
