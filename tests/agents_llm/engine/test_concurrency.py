"""A round costs its critical path of LLM calls, not their sum (scripted latency L)."""

from __future__ import annotations

import asyncio
import time

import pytest

from agents_llm.backends import TokenLedger
from agents_llm.engine import EpisodeContext, RoundEngine, plan_from_actions
from agents_llm.report_state import ReportState
from agents_llm.roles import build_team
from report_protocol import ActionTable

from tests.report_doubles import StubRetriever, scripted

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(4)
L = 0.15


def _timed(actions, retriever=None):
    engine = RoundEngine(build_team(TEAM), scripted(latency_s=L), retriever=retriever)
    ctx = EpisodeContext(ReportState("Parallel APIs"), TokenLedger())
    joint = {a: T.solo for a in TEAM}
    joint.update(actions)
    plan = plan_from_actions(TEAM, joint)
    t0 = time.perf_counter()
    result = asyncio.run(engine.run(plan, ctx))
    return time.perf_counter() - t0, engine.critical_path_calls(plan), len(result.calls), result


@pytest.mark.parametrize(
    "actions, depth",
    [
        ({}, 1),  # four solo agents
        ({"Researcher": T.query(0), "DataAnalyst": T.query(1), "Reviewer": T.query(2)}, 4),  # a chain
        ({"LeadArchitect": T.broadcast, "Reviewer": T.aggregate}, 3),  # LA -> {R, DA} -> Rev
        ({"DataAnalyst": T.append}, 3),  # + Collector prose and summary
    ],
)
def test_round_time_follows_the_critical_path(actions, depth):
    wall, path, calls, _ = _timed(actions)
    assert path == depth
    assert calls >= path
    assert depth * L * 0.95 <= wall <= depth * L + 0.1, (wall, depth, calls)


def test_researcher_costs_two_calls_on_the_path():
    wall, path, calls, result = _timed({"DataAnalyst": T.query(1)}, retriever=StubRetriever())
    assert path == 3 and calls == 5  # query + answer, then DataAnalyst; the other two in parallel
    assert 3 * L * 0.95 <= wall <= 3 * L + 0.1
    kinds = [(c["agent"], c["kind"]) for c in result.calls]
    assert (
        kinds.index(("Researcher", "query"))
        < kinds.index(("Researcher", "agent"))
        < kinds.index(("DataAnalyst", "agent"))
    )


def test_concurrent_calls_overlap_in_the_trace():
    _, _, _, result = _timed({})
    starts = sorted(c["start_s"] for c in result.calls)
    ends = sorted(c["end_s"] for c in result.calls)
    assert starts[-1] < ends[0]  # every call started before the first one ended
    assert result.order == [TEAM]
