"""A round costs its critical path of LLM calls, not their sum (scripted latency L).

The upper side is read from the trace's call times, not from the wall clock: on a loaded
machine the wall time of a round of sleeping calls grows with the load, while the
longest chain of calls that each began after the previous one ended does not.
"""

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


def sequential_depth(calls) -> int:
    """The longest chain of calls in which each one started after the one before it ended."""
    calls = sorted(calls, key=lambda c: c["start_s"])
    depth: list[int] = []
    for i, c in enumerate(calls):
        depth.append(1 + max((depth[j] for j in range(i) if calls[j]["end_s"] <= c["start_s"]), default=0))
    return max(depth, default=0)


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
    wall, path, calls, result = _timed(actions)
    assert path == depth
    assert calls >= path
    assert depth * L * 0.95 <= wall, (wall, depth, calls)  # the dependent calls ran one after another
    assert sequential_depth(result.calls) == depth, (wall, depth, calls)  # ... and the others beside them


def test_researcher_costs_two_calls_on_the_path():
    wall, path, calls, result = _timed({"DataAnalyst": T.query(1)}, retriever=StubRetriever())
    assert path == 3 and calls == 5  # query + answer, then DataAnalyst; the other two in parallel
    assert 3 * L * 0.95 <= wall and sequential_depth(result.calls) == 3, wall
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
