"""The Collector: prose + summary per append, skips on empty or absence-only input,
flushes sources into the section, filters the prose."""

from __future__ import annotations

import asyncio

from agents_llm.backends import TokenLedger
from agents_llm.collector import Collector
from agents_llm.text.absence import is_absence_only
from agents_llm.engine import EngineSettings, EpisodeContext, RoundEngine, plan_from_actions
from agents_llm.report_state import ReportState, SourceRef
from agents_llm.roles import build_team
from report_protocol import ActionTable

from tests.report_doubles import StubRetriever, scripted
from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(4)


def _collect(contributions, replies=None, sources=()):
    calls = []
    replies = list(
        replies
        or [
            "## Parallel stepping\n\nAll agents act at once. The Researcher found this.",
            "The report covers parallel stepping.",
        ]
    )

    async def call(agent, kind, messages, max_tokens):
        calls.append((agent, kind))
        return replies.pop(0)

    report = ReportState("PettingZoo")
    result = asyncio.run(
        Collector().run(
            call=call, report=report, contributions=contributions, objective="Explain stepping", sources=sources
        )
    )
    return result, report, calls


def test_absence_markers():
    assert is_absence_only("[RESEARCH_EXHAUSTED] nothing relevant found for: a; b")
    assert is_absence_only("State Deficiency: no data\n\nNot found.")
    assert is_absence_only("")
    assert not is_absence_only("[RESEARCH_EXHAUSTED]\nPettingZoo steps all agents in parallel (doc1.md).")


def test_idle_without_appends_and_skip_on_empty_or_absence_only():
    result, report, calls = _collect([])
    assert result.status == "idle" and calls == [] and report.is_empty
    result, report, calls = _collect([("DataAnalyst", "   ")])
    assert (result.status, result.reason) == ("skipped", "empty input") and calls == []
    result, report, calls = _collect([("Researcher", "[RESEARCH_EXHAUSTED] nothing relevant found for: x")])
    assert (result.status, result.reason) == ("skipped", "only absence markers") and calls == [] and report.is_empty


def test_append_makes_two_calls_filters_and_flushes_sources():
    src = [SourceRef("doc1.md", 1, "c1", "All agents act at once.")]
    result, report, calls = _collect([("DataAnalyst", "All agents act at once.")], sources=src)
    assert calls == [("Collector", "collector"), ("Summarizer", "summarizer")]
    assert result.status == "appended"
    [section] = report.sections
    assert section.title == "Parallel stepping"
    assert section.content == "All agents act at once."  # the Researcher sentence was filtered out
    assert result.removed_sentences[0]["match"].lower() == "researcher"
    assert section.sources == src
    assert report.progress_summary == "The report covers parallel stepping."


def test_pooled_engine_flushes_pending_sources_only_on_append():
    """The pooled flow (write_report's): a section may cite what any agent retrieved, whoever sent what."""
    engine = RoundEngine(
        build_team(TEAM), scripted(), retriever=StubRetriever(), settings=EngineSettings(evidence_flow="pooled")
    )
    ctx = EpisodeContext(ReportState("PettingZoo"), TokenLedger())
    joint = {a: T.solo for a in TEAM}
    asyncio.run(engine.run(plan_from_actions(TEAM, joint), ctx))
    assert [s.chunk_id for s in ctx.evidence.pooled()] == ["c0"] and ctx.report.is_empty
    joint["DataAnalyst"] = T.append
    result = asyncio.run(engine.run(plan_from_actions(TEAM, joint), ctx))
    assert result.collector.status == "appended"
    assert [s.chunk_id for s in ctx.report.sections[0].sources] == ["c0"]
    assert ctx.evidence.pooled() == []


def test_researcher_reports_exhaustion_when_nothing_comes_back():
    retriever = StubRetriever(texts=())
    engine = RoundEngine(
        build_team(TEAM),
        scripted(rules=[(r"search queries", "pettingzoo parallel api\npettingzoo agent loop")]),
        retriever=retriever,
    )
    ctx = EpisodeContext(ReportState("PettingZoo"), TokenLedger())
    joint = {a: T.solo for a in TEAM}
    joint["Researcher"] = T.append
    result = asyncio.run(engine.run(plan_from_actions(TEAM, joint), ctx))
    assert retriever.queries == [["pettingzoo parallel api", "pettingzoo agent loop"]]
    assert result.outputs["Researcher"].startswith("[RESEARCH_EXHAUSTED]")
    assert ctx.rag_exhausted
    assert result.collector.status == "skipped" and result.collector.reason == "only absence markers"
    assert result.record["agents"]["Researcher"]["retrieval"]["exhausted"] is True


def test_no_query_skips_retrieval():
    retriever = StubRetriever()
    engine = RoundEngine(build_team(TEAM), scripted(rules=[(r"search queries", "NO_QUERY")]), retriever=retriever)
    ctx = EpisodeContext(ReportState("PettingZoo"), TokenLedger())
    ctx.report.append(
        "Parallel API", "PettingZoo offers a Parallel API."
    )  # NO_QUERY is a decision once there is evidence
    asyncio.run(engine.run(plan_from_actions(TEAM, {a: T.solo for a in TEAM}), ctx))
    assert retriever.queries == [] and not ctx.rag_exhausted
    fresh = EpisodeContext(ReportState("PettingZoo"), TokenLedger())  # before any evidence it searches the topic
    asyncio.run(engine.run(plan_from_actions(TEAM, {a: T.solo for a in TEAM}), fresh))
    assert len(retriever.queries) == 1 and retriever.queries[0][0] == "PettingZoo"


def test_no_query_with_earlier_sources_but_nothing_written_still_searches():
    """Sources found in an earlier round are not shown to the Researcher again: a NO_QUERY before
    the first section would leave its turn with no evidence at all (qwen2.5-coder-0.5b did that
    in every drafting round of write_report and wrote no section)."""
    retriever = StubRetriever()
    engine = RoundEngine(build_team(TEAM), scripted(rules=[(r"search queries", "NO_QUERY")]), retriever=retriever)
    ctx = EpisodeContext(ReportState("PettingZoo"), TokenLedger())
    ctx.evidence.add("Researcher", StubRetriever().retrieve(["earlier round"]))
    assert ctx.report.is_empty and ctx.evidence.pooled()
    asyncio.run(engine.run(plan_from_actions(TEAM, {a: T.solo for a in TEAM}), ctx))
    assert len(retriever.queries) == 1 and retriever.queries[0][0] == "PettingZoo"


def _title_of(reply: str, objective: str) -> str:
    replies = [reply, "Summary."]

    async def call(agent, kind, messages, max_tokens):
        return replies.pop(0)

    report = ReportState("PettingZoo parallel API")
    result = asyncio.run(
        Collector().run(
            call=call, report=report, contributions=[("DataAnalyst", "x y z")], objective=objective, sources=()
        )
    )
    assert result.status == "appended", result.reason
    return report.sections[0].title


def test_a_heading_that_restates_the_topic_or_wraps_it_gives_way_to_the_objective_then_the_first_sentence():
    body = "All agents act at once, and the env returns every agent's reward together."
    # the model's own heading, unwrapped and unlabelled
    assert _title_of(f"# **Parallel stepping**\n\n{body}", "Explain stepping") == "Parallel stepping"
    assert _title_of(f"# Section 2: Parallel stepping\n\n{body}", "Explain stepping") == "Parallel stepping"
    # the topic restated (decorated, labelled, in other case): the objective instead
    assert _title_of(f"# <<Report: PettingZoo parallel API>>\n\n{body}", "Explain stepping") == "Explain stepping"
    assert _title_of(f"# PETTINGZOO Parallel API\n\n{body}", "Explain stepping") == "Explain stepping"
    # ... and when the objective is the topic too, or echoes our instructions, the first sentence's opening words
    assert _title_of(f"# <<Report: PettingZoo parallel API>>\n\n{body}", "<<PettingZoo parallel API>>") == (
        "All agents act at once"
    )
    echoed = "Objective (DRAFTING round 1 of 4): Write 'OBJECTIVE:' and the title of the section to write now."
    assert _title_of(f"# PettingZoo parallel API\n\n{body}", echoed) == "All agents act at once"
    # a sentence that opens on a pronoun does not make the heading when another can
    assert _title_of(f"# PettingZoo parallel API\n\nIt steps every agent. {body}", echoed) == "All agents act at once"
