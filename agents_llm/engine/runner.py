"""Runs one `RoundPlan`: agents in topological order, concurrently where the graph allows.

Scheduling uses `graphlib.TopologicalSorter`: an agent starts as soon as every agent
whose fresh output it receives has finished, and agents that are ready together run
concurrently (asyncio), so a round costs its critical path of LLM calls, not their
sum. After the agents, the Collector writes what was appended, then an optional gate
check runs.

Failures never lose the report, and are never mistaken for success: an LLM error
(timeout, malformed answer after retries) empties that agent's output and is recorded;
an error that will not go away (server unreachable, wrong model or key) stops further
calls. `RoundResult.llm_failure` names the cause when the round had such
an error or when none of its calls succeeded, for the env to end the episode with
reason `llm_error`. An exhausted token budget stops further calls and is reported in
`RoundResult.budget_exhausted` for the env to truncate the episode.
"""

from __future__ import annotations

import asyncio
from graphlib import TopologicalSorter
from typing import Iterable, Protocol, Sequence

from report_protocol import COLLECTOR, RoundPlan
from report_protocol import vocabulary as v

from .. import phase_prompts, prompts
from ..backends import LLMBackend, LLMError, TokenBudgetExceeded
from ..backends.errors import FATAL
from ..collector import CallFn, Collector, CollectorResult
from ..roles import TeamMember
from ..grounding import MeaningCheck
from ..report_state import ReportState, SourceRef
from .context import EngineSettings, EpisodeContext
from .evidence import EvidenceFlow
from .feedback import read_round
from .planning import chain_costs, execution_depths, execution_order_edges
from .retrieval import Retriever
from .round_record import AgentTurn, CallRecorder, RoundResult, agent_record, llm_counts, round_record
from .turn import TurnTaker, inbox_for

__all__ = ["EngineSettings", "EpisodeContext", "RoundEngine", "RoundResult"]


def gate_question_for(plan: RoundPlan) -> str:
    """The plan's own gate question, or the engine's about the plan's phase and its next round."""
    g = plan.gate_check
    assert g is not None
    if g.question is not None:
        return g.question
    return phase_prompts.gate_question(g.agent, plan.phase, (plan.phase_round or 0) + 1)


def planned_title(plan: RoundPlan) -> str:
    """The title the plan gives the section being written (its outline entry), or ''."""
    for directive in plan.directives.values():
        if directive.kind in (v.ASSIGN_SECTION, v.WRITE_SECTION) and directive.title:
            return directive.title
    return ""


class RoundCollector(Protocol):
    """What the engine needs of its Collector: the LLM team's (`agents_llm.collector.Collector`)
    or the extractive team's rules (`agents_llm.extractive.collector.ExtractiveCollector`)."""

    async def run(
        self,
        *,
        call: CallFn,
        report: ReportState,
        contributions: Sequence[tuple[str, str]],
        objective: str,
        sources: Iterable[SourceRef],
        revise_section: str | None = None,
        planned_title: str = "",
    ) -> CollectorResult: ...


class RoundEngine(TurnTaker):
    """Executes plans for one team on shared resources (backend, retriever).

    `backend` is None only for an engine that makes no LLM calls and overrides `_call`
    (the extractive team's).
    """

    def __init__(
        self,
        team: Sequence[TeamMember],
        backend: LLMBackend | None,
        *,
        retriever: Retriever | None = None,
        settings: EngineSettings | None = None,
    ):
        self.team = list(team)
        self.names = [m.name for m in self.team]
        self.by_name = {m.name: m for m in self.team}
        self.priority = {m.name: m.index for m in self.team}
        self.backend = backend
        self.retriever = retriever
        self.settings = settings or EngineSettings()
        self.collector: RoundCollector = Collector(
            prose_max_tokens=self.settings.collector_max_tokens,
            summary_max_tokens=self.settings.summary_max_tokens,
            reuse_sources=self.settings.reuses_sources,
            meaning=self._meaning_check if self.settings.writes_from_evidence else None,
            writer_sees_evidence=self.settings.writes_from_evidence,
            section_about_title=self.settings.writes_from_evidence,
            summarize=self.settings.summarize,
        )
        self._meaning: tuple[object, MeaningCheck | None] | None = None

    def _meaning_check(self) -> MeaningCheck | None:
        """The Collector's check by meaning, on the current retriever's embedding (None without one)."""
        embedding = getattr(getattr(self.retriever, "store", None), "embedding", None)
        if self._meaning is None or self._meaning[0] is not embedding:
            self._meaning = (embedding, MeaningCheck.for_embedding(embedding) if embedding is not None else None)
        return self._meaning[1]

    # -- plan structure ------------------------------------------------------------
    def edge_timing(self, plan: RoundPlan) -> dict[tuple[str, str], str]:
        """'fresh' when the receiver waits for the sender this round, else 'previous'."""
        running = set(plan.acting)
        order = execution_order_edges(plan.edges, self.priority, running)
        return {(s, r): ("fresh" if r == COLLECTOR or (s, r) in order else "previous") for s, r in plan.edges}

    def calls_per_agent(self, name: str) -> int:
        return 2 if (self.by_name[name].role.uses_rag and self.retriever is not None) else 1

    def critical_path_calls(self, plan: RoundPlan) -> int:
        """LLM calls on the longest dependency chain (Researcher = 2 calls; Collector adds 2)."""
        order = execution_order_edges(plan.edges, self.priority, set(plan.acting))
        path = max(chain_costs(plan.acting, order, self.calls_per_agent).values(), default=0)
        return path + (2 if plan.appenders else 0) + (1 if plan.gate_check else 0)

    # -- one LLM call --------------------------------------------------------------
    async def _call(
        self, ctx: EpisodeContext, rec: CallRecorder, agent: str, kind: str, messages: list, max_tokens: int
    ) -> str | None:
        entry = rec.start_call(agent, kind)
        if ctx.budget_exhausted:
            entry.update(error=f"skipped: {ctx.budget_exhausted}", end_s=rec.now())
            return None
        entry["llm_failed"] = False
        if ctx.llm_failure:
            entry.update(error=f"skipped after an LLM failure: {ctx.llm_failure}", end_s=rec.now(), llm_failed=True)
            return None
        if self.backend is None:
            raise RuntimeError(
                "RoundEngine._call: this engine has no LLM backend; an engine without one overrides _call"
            )
        try:
            resp = await self.backend.chat(
                messages,
                max_tokens=max_tokens,
                temperature=self.settings.temperature,
                seed=ctx.sampling_seed(self.settings),
                caller=agent,
                ledger=ctx.ledger,
            )
        except TokenBudgetExceeded as e:
            ctx.budget_exhausted = ctx.budget_exhausted or e.reason
            entry.update(error=f"token budget: {e.reason}", end_s=rec.now())
            del entry["llm_failed"]
            return None
        except LLMError as e:  # anything else is a bug: it surfaces (the env closes the episode as "error")
            cause = f"{type(e).__name__}: {e}"
            entry.update(error=cause, end_s=rec.now(), llm_failed=True)
            if isinstance(e, FATAL):
                ctx.llm_failure = ctx.llm_failure or cause
            return None
        ctx.prompt_tokens_evaluated += resp.prompt_tokens_evaluated
        ctx.prompt_tokens_reused += resp.prompt_tokens_reused
        entry.update(
            prompt_tokens=resp.prompt_tokens,
            prompt_tokens_evaluated=resp.prompt_tokens_evaluated,
            prompt_tokens_reused=resp.prompt_tokens_reused,
            completion_tokens=resp.completion_tokens,
            latency_s=round(resp.latency_s, 4),
            cached=resp.cached,
            end_s=rec.now(),
        )
        return resp.text.strip()

    # -- the round -----------------------------------------------------------------
    async def run(self, plan: RoundPlan, ctx: EpisodeContext) -> RoundResult:
        plan.validate(self.names)
        rec = CallRecorder()
        tokens_before = ctx.ledger.total.total
        if plan.reset_memory:
            ctx.memory.clear()
        timing = self.edge_timing(plan)
        ctx.evidence.begin_round()
        fresh, turns, order = await self._run_turns(plan, ctx, rec, timing)
        collector = await self._collect(plan, ctx, rec, fresh)
        gate_passed, gate_rec = await self._gate(plan, ctx, rec)

        feedback = read_round(
            fresh,
            collector_status=collector.status,
            collector_section=collector.section_id,
            sections=ctx.report.list_sections(),
            gate_agent=plan.gate_check.agent if plan.gate_check else None,
            gate_passed=gate_passed,
            new_evidence={a: int((t.retrieval or {}).get("new_chunks", 0)) for a, t in turns.items()},
            directives={a: d.kind for a, d in plan.directives.items()},
        )
        phase_prompts.after_round(plan.phase, feedback, ctx.report, {m.name: m.role.name for m in self.team})

        # Memory: what each agent said this round is its "previous output" next round.
        for a in plan.acting:
            if fresh.get(a):
                ctx.memory[a] = fresh[a]

        llm = llm_counts(rec.calls, ctx.llm_failure)
        agents = {
            a: agent_record(sorted({r for s, r in plan.edges if s == a}, key=self._key), turns.get(a))
            for a in plan.acting
        }
        record = round_record(
            plan,
            self.names,
            timing=timing,
            order=order,
            agents=agents,
            rec=rec,
            collector=collector,
            gate=gate_rec,
            objective=ctx.objective,
            rag_exhausted=ctx.rag_exhausted,
            budget_exhausted=ctx.budget_exhausted,
            llm=llm,
        )
        record["evidence_held"] = dict(ctx.evidence.counts())  # each agent's unreported chunks after the round
        return RoundResult(
            outputs=fresh,
            order=order,
            collector=collector,
            tokens=ctx.ledger.total.total - tokens_before,
            calls=rec.calls,
            record=record,
            gate_passed=gate_passed,
            budget_exhausted=ctx.budget_exhausted,
            wall_s=rec.now(),
            llm_calls=llm[0],
            llm_errors=llm[1],
            llm_failure=llm[2],
            feedback=feedback,
        )

    async def _run_turns(
        self, plan: RoundPlan, ctx: EpisodeContext, rec: CallRecorder, timing: dict
    ) -> tuple[dict[str, str], dict[str, AgentTurn], list[list[str]]]:
        """Every acting agent's turn, each as soon as its senders' turns are done.

        Returns the outputs (in the order the turns finished), the turns and the layers.

        What a turn sees must not depend on which concurrent turn finished first. The
        objective its prompts show is the round's, updated by the objective-setting agents
        of lower depth in the execution graph (its longest chain of senders), in (depth,
        team priority) order; a turn waits for those setters before it starts, and the
        setters of its own depth or deeper are never seen. ``ctx.objective`` takes every
        update, in that order, when the round's turns are done."""
        order_pairs = execution_order_edges(plan.edges, self.priority, set(plan.acting))
        fresh: dict[str, str] = {}
        turns: dict[str, AgentTurn] = {}
        order: list[list[str]] = []

        depth = execution_depths(plan.acting, order_pairs)
        setters = sorted(
            (a for a in plan.acting if self.by_name[a].role.sets_objective), key=lambda a: (depth[a], self._key(a))
        )
        setter_done = {a: asyncio.Event() for a in setters}
        set_objective: dict[str, str] = {}

        def objective_after(setters_seen: Sequence[str]) -> str:
            objective = ctx.objective
            for a in setters_seen:
                objective = set_objective.get(a) or objective
            return objective

        flow = self.settings.flow
        team = flow is not EvidenceFlow.POOLED

        async def take_turn(name: str) -> None:
            earlier = [a for a in setters if depth[a] < depth[name]]
            try:
                for a in earlier:
                    await setter_done[a].wait()
                inbox = inbox_for(name, timing, fresh, ctx.memory, self.priority)
                if not self.settings.deliver_messages:  # the message-ablation diagnostic
                    inbox = []
                if team:  # a message brings its sender's evidence and objective (agents_llm.engine.evidence)
                    ctx.evidence.deliver(
                        name,
                        [(s, timing[(s, name)], text) for s, text in inbox if text.strip()],
                        cited=flow is EvidenceFlow.CITED,
                    )
                    objective = ctx.evidence.objective_of(name)
                else:
                    objective = objective_after(earlier)
                turn = await self.run_turn(name, plan, ctx, rec, inbox, objective)
                turns[name] = turn
                if turn.objective:
                    set_objective[name] = turn.objective
                    ctx.evidence.learn_objective(name, turn.objective)
                if turn.output is not None:  # stored as the turn ends: the agents waiting on it start after
                    fresh[name] = turn.output
            finally:
                if name in setter_done:
                    setter_done[name].set()

        ts: TopologicalSorter = TopologicalSorter({a: set() for a in plan.acting})
        for s, r in order_pairs:
            ts.add(r, s)
        ts.prepare()
        pending: dict[asyncio.Task, str] = {}
        try:
            while ts.is_active():
                ready = sorted(ts.get_ready(), key=self._key)
                if ready:
                    order.append(list(ready))
                for a in ready:
                    pending[asyncio.create_task(take_turn(a))] = a
                if not pending:
                    break
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    a = pending.pop(task)
                    task.result()  # an unexpected bug surfaces here, after the others are cancelled below
                    ts.done(a)
        finally:
            for task in pending:
                task.cancel()
        ctx.objective = objective_after(setters)
        return fresh, turns, order

    async def _collect(
        self, plan: RoundPlan, ctx: EpisodeContext, rec: CallRecorder, fresh: dict[str, str]
    ) -> CollectorResult:
        """The Collector writes what the appenders sent (or rewrites `plan.revise_section`)."""
        appenders = sorted(plan.appenders, key=self._key)
        contributions = [(a, fresh.get(a, "")) for a in appenders]
        # The Collector receives from the appenders: their evidence (all the team's, pooled) and,
        # on the team's rules, the objective they know rather than the Lead's latest.
        sources = ctx.evidence.for_section(appenders, self.settings.flow)
        objective = ctx.objective
        if self.settings.flow is not EvidenceFlow.POOLED:
            objective = next((o for o in map(ctx.evidence.objective_of, appenders) if o), "")
        if ctx.budget_exhausted and contributions:
            collector = CollectorResult("skipped", f"token budget exhausted: {ctx.budget_exhausted}")
        else:
            collector = await self.collector.run(
                call=lambda agent, kind, msgs, mt: self._call(ctx, rec, agent, kind, msgs, mt),
                report=ctx.report,
                contributions=contributions,
                objective=objective,
                sources=sources,
                revise_section=plan.revise_section,
                planned_title=planned_title(plan),
            )
        if collector.status in ("appended", "revised"):
            ctx.evidence.consume(sources)
        return collector

    async def _gate(self, plan: RoundPlan, ctx: EpisodeContext, rec: CallRecorder) -> tuple[bool | None, dict | None]:
        """The plan's gate check: (passed, its trace entry), (None, None) when none ran."""
        if plan.gate_check is None or ctx.budget_exhausted:
            return None, None
        g = plan.gate_check
        question = gate_question_for(plan)
        answer = await self._call(
            ctx,
            rec,
            g.agent,
            "gate",
            prompts.gate_messages(
                role=self.by_name[g.agent].role.name,
                topic=ctx.report.topic,
                question=question,
                summary=ctx.report.progress_summary,
                outline=[t for _, t, _ in ctx.report.list_sections()],
            ),
            self.settings.gate_max_tokens,
        )
        gate_passed = prompts.parse_gate(answer) if answer is not None else None
        return gate_passed, {"agent": g.agent, "question": question, "passed": gate_passed, "response": answer}

    def _key(self, name: str) -> int:
        return self.priority.get(name, len(self.priority))
