"""Round semantics, one by one: each action's edges, cycles dropped by priority,
terminate votes, masks, the Collector, and the size of the action space."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agents_llm.backends import TokenLedger
from agents_llm.engine import EpisodeContext, RoundEngine, action_mask, plan_from_actions
from agents_llm.report_state import ReportState
from agents_llm.roles import build_team
from report_protocol import COLLECTOR, ActionTable, RoundPlan

from tests.report_doubles import scripted

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(4)


def plan(**actions):
    joint = {a: T.solo for a in TEAM}
    joint.update(actions)
    return plan_from_actions(TEAM, joint)


def test_action_table_matches_the_original_layout():
    assert T.size == 9
    assert T.names(TEAM) == [
        "solo_process",
        "broadcast_all",
        "selective_query_LeadArchitect",
        "selective_query_Researcher",
        "selective_query_DataAnalyst",
        "selective_query_Reviewer",
        "aggregate_refine",
        "append",
        "terminate",
    ]
    with pytest.raises(ValueError):
        T.decode(9)


def test_five_agent_team_has_ten_actions():
    team = build_team(["LeadArchitect", "Researcher", "Researcher", "DataAnalyst", "Reviewer"])
    assert [m.name for m in team] == ["LeadArchitect", "Researcher", "Researcher_2", "DataAnalyst", "Reviewer"]
    assert ActionTable(len(team)).size == 10


def test_solo_has_no_edges():
    p = plan()
    assert p.edges == [] and p.acting == TEAM and not p.terminate


def test_broadcast_sends_to_every_other_agent():
    p = plan(DataAnalyst=T.broadcast)
    assert sorted(p.edges) == sorted(
        [("DataAnalyst", "LeadArchitect"), ("DataAnalyst", "Researcher"), ("DataAnalyst", "Reviewer")]
    )


def test_query_receives_from_the_target():
    p = plan(Reviewer=T.query(1))
    assert p.edges == [("Researcher", "Reviewer")]


def test_aggregate_receives_from_all_others():
    p = plan(LeadArchitect=T.aggregate)
    assert sorted(p.edges) == sorted(
        [("Researcher", "LeadArchitect"), ("DataAnalyst", "LeadArchitect"), ("Reviewer", "LeadArchitect")]
    )


def test_append_sends_to_the_collector():
    p = plan(Researcher=T.append)
    assert p.edges == [("Researcher", COLLECTOR)] and p.appenders == ["Researcher"]


def test_terminate_is_a_vote_and_the_voter_does_not_run():
    p = plan(Reviewer=T.terminate)
    assert p.terminate_votes == ["Reviewer"] and "Reviewer" not in p.acting
    assert not p.terminate  # 1 of 4 is not half


@pytest.mark.parametrize(
    "n, votes, ends", [(4, 1, False), (4, 2, True), (4, 3, True), (5, 2, False), (5, 3, True), (1, 1, True)]
)
def test_terminate_needs_at_least_half_of_the_agents(n, votes, ends):
    team = [f"A{i}" for i in range(n)]
    table = ActionTable(n)
    joint = {a: (table.terminate if i < votes else table.solo) for i, a in enumerate(team)}
    assert plan_from_actions(team, joint).terminate is ends


def test_cycle_is_dropped_by_priority_and_the_loser_goes_solo():
    # LeadArchitect <- Reviewer, Researcher <- LeadArchitect, Reviewer <- Researcher: a 3-cycle.
    p = plan(LeadArchitect=T.query(3), Researcher=T.query(0), Reviewer=T.query(1))
    assert ("Reviewer", "LeadArchitect") in p.edges and ("LeadArchitect", "Researcher") in p.edges
    assert ("Researcher", "Reviewer") not in p.edges
    assert p.effective["Reviewer"] == "solo_process"
    assert p.effective["LeadArchitect"] == "selective_query_Reviewer"
    [denial] = p.denied
    assert denial.agent == "Reviewer" and denial.reason.startswith("cycle:") and denial.fallback == "solo_process"


def test_cycle_through_an_aggregate_and_a_mutual_pair_drops_the_lowest_priority_agent():
    # LeadArchitect aggregates (all -> LA); Researcher queries LA, a mutual pair run LA first
    # (LA -> Researcher); DataAnalyst querying Researcher would close LA -> R -> DA -> LA.
    p = plan(LeadArchitect=T.aggregate, Researcher=T.query(0), DataAnalyst=T.query(1))
    assert p.effective["LeadArchitect"] == "aggregate_refine"
    assert p.effective["Researcher"] == "selective_query_LeadArchitect"
    assert p.effective["DataAnalyst"] == "solo_process"
    assert ("Researcher", "DataAnalyst") not in p.edges
    assert [d.agent for d in p.denied] == ["DataAnalyst"]


def test_mutual_pair_is_allowed():
    p = plan(LeadArchitect=T.query(1), Researcher=T.query(0))
    assert sorted(p.edges) == [("LeadArchitect", "Researcher"), ("Researcher", "LeadArchitect")]
    assert p.denied == []


def test_self_query_is_masked_and_a_masked_choice_falls_back_to_solo():
    masks = {
        a: action_mask(T, i, round_index=0, min_rounds_before_terminate=2, report_empty=True)
        for i, a in enumerate(TEAM)
    }
    for i, a in enumerate(TEAM):
        mask, reasons = masks[a]
        assert mask.dtype == np.int8 and mask[T.query(i)] == 0 and "itself" in reasons[T.query(i)]
        assert mask[T.query((i + 1) % 4)] == 1
        assert mask[T.terminate] == 0 and "empty" in reasons[T.terminate]
    joint = {a: T.solo for a in TEAM}
    joint["Researcher"] = T.query(1)
    p = plan_from_actions(TEAM, joint, masks=masks)
    assert p.edges == [] and p.effective["Researcher"] == "solo_process"
    assert p.denied[0].reason.startswith("masked:") and "itself" in p.denied[0].reason


def test_terminate_mask_opens_after_min_rounds_with_a_report():
    mask, _ = action_mask(T, 0, round_index=1, min_rounds_before_terminate=2, report_empty=False)
    assert mask[T.terminate] == 0
    mask, _ = action_mask(T, 0, round_index=2, min_rounds_before_terminate=2, report_empty=False)
    assert mask[T.terminate] == 1


def test_the_collector_never_acts():
    with pytest.raises(ValueError, match="unknown role 'Collector'"):
        build_team(["LeadArchitect", "Collector"])
    with pytest.raises(ValueError, match="unknown agent"):
        RoundPlan(acting=["Collector"]).validate(TEAM)
    with pytest.raises(ValueError, match="unknown sender"):
        RoundPlan(acting=TEAM, edges=[("Collector", "Reviewer")]).validate(TEAM)
    p = plan(**{a: T.append for a in TEAM})
    assert COLLECTOR not in p.acting and all(r == COLLECTOR for _, r in p.edges)


# -- the same semantics, executed ------------------------------------------------------
def _engine(backend=None):
    team = build_team(TEAM)
    backend = backend or scripted(responder=lambda req: f"OUT[{req.messages[0][1].split()[3]}]")
    return RoundEngine(team, backend), EpisodeContext(ReportState("Topic"), TokenLedger())


def test_mutual_pair_runs_higher_priority_first_with_the_others_previous_output():
    engine, ctx = _engine()
    ctx.memory["Researcher"] = "PREVIOUS-RESEARCHER-OUTPUT"
    p = plan(LeadArchitect=T.query(1), Researcher=T.query(0))
    result = asyncio.run(engine.run(p, ctx))
    assert result.order[0] == ["LeadArchitect", "DataAnalyst", "Reviewer"] and result.order[1] == ["Researcher"]
    lead_prompt = result.record["agents"]["LeadArchitect"]["prompt"][1]["content"]
    researcher_prompt = result.record["agents"]["Researcher"]["prompt"][1]["content"]
    assert "Message from Researcher: PREVIOUS-RESEARCHER-OUTPUT" in lead_prompt
    assert f"Message from LeadArchitect: {result.outputs['LeadArchitect']}" in researcher_prompt
    timing = {(e["sender"], e["receiver"]): e["timing"] for e in result.record["edges"]}
    assert timing == {("Researcher", "LeadArchitect"): "previous", ("LeadArchitect", "Researcher"): "fresh"}


def test_self_edge_is_the_agents_own_previous_output():
    engine, ctx = _engine()
    asyncio.run(engine.run(plan(), ctx))
    first = ctx.memory["DataAnalyst"]
    result = asyncio.run(engine.run(plan(), ctx))
    assert f"Your previous output: {first}" in result.record["agents"]["DataAnalyst"]["prompt"][1]["content"]
    # Memory is wiped at a phase boundary:
    result = asyncio.run(engine.run(RoundPlan(acting=["DataAnalyst"], reset_memory=True), ctx))
    assert "Your previous output" not in result.record["agents"]["DataAnalyst"]["prompt"][1]["content"]


def test_dropped_cycle_loser_runs_solo():
    engine, ctx = _engine()
    p = plan(LeadArchitect=T.query(3), Researcher=T.query(0), Reviewer=T.query(1))
    result = asyncio.run(engine.run(p, ctx))
    assert result.record["agents"]["Reviewer"]["senders"] == []
    assert result.record["denied"][0]["agent"] == "Reviewer"
    # Reviewer -> LeadArchitect -> Researcher is a chain of three.
    assert result.order == [["DataAnalyst", "Reviewer"], ["LeadArchitect"], ["Researcher"]]
