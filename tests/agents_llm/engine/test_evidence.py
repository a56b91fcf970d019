"""The team's information rules (agents_llm.engine.evidence): a tool result is its caller's, a
message carries its sender's evidence and objective, and the Collector writes only from what the
appenders hold. Each test fails on a Collector that writes from the team's pooled retrievals."""

from __future__ import annotations

import asyncio

import pytest

from agents_llm.backends import TokenLedger
from agents_llm.engine import EngineSettings, EpisodeContext, RoundEngine, plan_from_actions
from agents_llm.engine.evidence import TeamEvidence, drawn_on
from agents_llm.report_state import ReportState, SourceRef
from agents_llm.roles import build_team
from report_protocol import ActionTable

from tests.report_doubles import StubRetriever, scripted

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(4)
FACT = "PettingZoo offers a Parallel API where all agents act at once and each agent gets its own reward."
OBJECTIVE = "Explain the parallel stepping contract"


def _engine(**settings) -> RoundEngine:
    # Reuse on, as in the report env: the scripted writer's junk prose gives way to source sentences,
    # so a section exists exactly when the appenders hold a source sentence to write it from.
    return RoundEngine(
        build_team(TEAM),
        scripted(rules=[(r"^system: [^\n]*Lead Architect", f"OBJECTIVE: {OBJECTIVE}")]),
        retriever=StubRetriever(texts=(FACT,)),
        settings=EngineSettings(reuse_sources=True, **settings),
    )


def _rounds(engine: RoundEngine, *joints: dict) -> tuple[EpisodeContext, list]:
    ctx = EpisodeContext(ReportState("PettingZoo parallel environments"), TokenLedger())
    results = [asyncio.run(engine.run(plan_from_actions(TEAM, joint), ctx)) for joint in joints]
    return ctx, results


def _holders(ctx: EpisodeContext) -> dict:
    return {a: n for a, n in ctx.evidence.counts().items() if n}


def _joint(**actions: int) -> dict:
    return {a: actions.get(a, T.solo) for a in TEAM}


def test_a_writer_that_never_heard_from_the_researcher_writes_nothing():
    ctx, (_, write) = _rounds(_engine(), _joint(), _joint(DataAnalyst=T.append))
    assert _holders(ctx) == {"Researcher": 1}  # the retrieval is the Researcher's alone
    assert write.collector.status == "skipped" and ctx.report.is_empty


def test_a_writer_that_received_the_researchers_message_writes_from_its_evidence():
    ctx, (_, write) = _rounds(_engine(), _joint(DataAnalyst=T.query(1)), _joint(DataAnalyst=T.append))
    assert write.collector.status == "appended"
    [section] = ctx.report.sections
    assert [s.chunk_id for s in section.sources] == ["c0"] and "Parallel API" in section.content
    assert ctx.evidence.pooled() == []  # consumed: no later section is written from it again


def test_evidence_is_relayed_along_a_chain():
    # Round 1: Researcher -> DataAnalyst -> Reviewer (fresh edges); round 2: the Reviewer appends.
    chain = _joint(DataAnalyst=T.query(1), Reviewer=T.query(2))
    ctx, (_, write) = _rounds(_engine(), chain, _joint(Reviewer=T.append))
    assert write.collector.status == "appended"
    assert [s.chunk_id for s in ctx.report.sections[0].sources] == ["c0"]


def test_the_pooled_flow_writes_from_any_agents_retrieval():
    ctx, (_, write) = _rounds(_engine(evidence_flow="pooled"), _joint(), _joint(DataAnalyst=T.append))
    assert write.collector.status == "appended"
    assert [s.chunk_id for s in ctx.report.sections[0].sources] == ["c0"]


def test_message_ablation_delivers_nothing():
    engine = _engine(deliver_messages=False)
    ctx, (_, write) = _rounds(engine, _joint(DataAnalyst=T.query(1)), _joint(DataAnalyst=T.append))
    assert write.collector.status == "skipped" and ctx.report.is_empty
    assert _holders(ctx) == {"Researcher": 1}


def test_the_objective_reaches_only_who_hears_the_lead_architect():
    # Round 1: the Lead sets the objective; round 2: the Reviewer queries the Lead, the DataAnalyst does not.
    engine = _engine()
    ctx, _ = _rounds(engine, _joint(), _joint(Reviewer=T.query(0)))
    assert ctx.evidence.objective_of("LeadArchitect") == OBJECTIVE
    assert ctx.evidence.objective_of("Reviewer") == OBJECTIVE
    assert ctx.evidence.objective_of("DataAnalyst") == ""
    # The pooled flow keeps the team-wide objective: every agent's prompt shows it.
    pooled = _engine(evidence_flow="pooled")
    _rounds(pooled, _joint(), _joint())
    assert OBJECTIVE in _analyst_prompts(pooled)[-1]
    assert all(OBJECTIVE not in p for p in _analyst_prompts(engine))


def _analyst_prompts(engine: RoundEngine) -> list[str]:
    calls = engine.backend.calls  # type: ignore[union-attr]
    prompts = ["\n".join(c for _, c in r.messages) for r in calls if "Data Analyst" in r.messages[0][1]]
    assert prompts, "the Data Analyst made no call"
    return prompts


def test_a_previous_edge_delivers_what_the_sender_held_when_the_round_began():
    held = TeamEvidence()
    old = SourceRef("a.md", 1, "c1", "Old fact.")
    new = SourceRef("a.md", 2, "c2", "New fact.")
    held.add("Researcher", [old])
    held.begin_round()
    held.add("Researcher", [new])  # retrieved during this round
    held.deliver("Reviewer", [("Researcher", "previous", "")])
    held.deliver("DataAnalyst", [("Researcher", "fresh", "")])
    assert [r.chunk_id for r in held.holding("Reviewer").sources] == ["c1"]
    assert [r.chunk_id for r in held.holding("DataAnalyst").sources] == ["c1", "c2"]
    # The Collector gets only the appenders' unconsumed evidence.
    assert [r.chunk_id for r in held.for_section(["Reviewer"])] == ["c1"]
    held.consume([old])
    assert held.for_section(["Reviewer"]) == [] and [r.chunk_id for r in held.for_section(["DataAnalyst"])] == ["c2"]


def test_a_cited_message_carries_only_the_evidence_its_text_restates():
    held = TeamEvidence()
    pump = SourceRef("a.md", 1, "c1", "The pump moves water from the deep well to the storage tank every morning.")
    dam = SourceRef("a.md", 2, "c2", "The dam was raised by four metres after the flood of the dry valley.")
    held.add("Researcher", [pump, dam])
    held.begin_round()
    said = "Every morning the pump moves water from the well to the tank. The weather was fine."
    held.deliver("DataAnalyst", [("Researcher", "fresh", said)], cited=True)
    held.deliver("Reviewer", [("Researcher", "fresh", said)])  # team: everything the sender holds
    held.deliver("LeadArchitect", [("Researcher", "fresh", "Nothing new to report today.")], cited=True)
    assert [r.chunk_id for r in held.holding("DataAnalyst").sources] == ["c1"]
    assert [r.chunk_id for r in held.holding("Reviewer").sources] == ["c1", "c2"]
    assert held.holding("LeadArchitect").sources == []
    # A relay passes on only what it repeats: the Reviewer's message names the dam alone.
    held.deliver("DataAnalyst", [("Reviewer", "fresh", "The dam was raised four metres after the flood.")], cited=True)
    assert [r.chunk_id for r in held.holding("DataAnalyst").sources] == ["c1", "c2"]


def test_drawn_on_wants_a_restatement_not_a_shared_word():
    pump = SourceRef("a.md", 1, "c1", "The pump moves water from the deep well to the storage tank every morning.")
    assert drawn_on("The pump is important for water.", [pump]) == []  # two content words only
    assert drawn_on("The pump moves water from the well to the tank.", [pump]) == [pump]
    assert drawn_on("Farmers sell pumps, tanks and wells at the weekly market near water towers.", [pump]) == []


def test_each_route_sets_its_behaviour_in_one_place_and_an_explicit_setting_overrides_it():
    from agents_llm.engine import EngineSettings

    plain, research, product = (EngineSettings(route=r) for r in ("plain", "research", "product"))
    assert (plain.reuses_sources, plain.chats, plain.flow.value) == (False, False, "team")
    assert (research.reuses_sources, research.chats, research.flow.value) == (True, True, "team")
    assert (product.reuses_sources, product.chats, product.flow.value) == (True, False, "pooled")
    assert product.writes_from_evidence and not research.writes_from_evidence and not plain.writes_from_evidence
    assert EngineSettings() == plain
    cited = EngineSettings(route="research", evidence_flow="cited", conversation=False)
    assert (cited.flow.value, cited.chats, cited.reuses_sources) == ("cited", False, True)
    with pytest.raises(ValueError, match="engine.route must be one of"):
        EngineSettings(route="lab")
