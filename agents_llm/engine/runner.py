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
import time
from dataclasses import dataclass, field
from graphlib import TopologicalSorter
from typing import Any, Sequence

from .. import phase_prompts, prompts
from ..backends import LLMBackend, LLMError, TokenBudgetExceeded, TokenLedger
from ..backends.errors import FATAL
from ..collector import Collector, CollectorResult
from rag.sources import SourceBuffer

from ..report_state import ReportState
from ..roles import TeamMember
from report_protocol import COLLECTOR, ActionTable, RoundFeedback, RoundPlan
from .feedback import read_round
from .planning import execution_order_edges
from .query_check import vet_queries
from .retrieval import Retriever, format_evidence


@dataclass
class EngineSettings:
    """Per-call budgets; small by default for a 135M model on a CPU."""

    agent_max_tokens: int = 64
    query_max_tokens: int = 24
    collector_max_tokens: int = 160
    summary_max_tokens: int = 48
    gate_max_tokens: int = 16
    temperature: float = 0.0
    seed: int | None = 0
    max_queries: int = 3
    evidence_max_chars: int = prompts.MAX_EVIDENCE_CHARS
    # The Collector writes a section from the best-matching retrieved sentences when the writer's prose
    # is too short, echoes the prompt, repeats itself or is mostly unsupported (agents_llm.sentence_reuse).
    # Off here (the engine on its own writes what the model wrote); the report env's and write_report's
    # configs turn it on for real runs.
    reuse_sources: bool = False
    # Junk search queries (code, under two words, no term of the topic/objective/outline) fall back to
    # the topic and outline terms (agents_llm.engine.query_check).
    vet_queries: bool = True

    def __post_init__(self) -> None:
        """Range checks at construction (the env builds this from `engine.*` before any call)."""
        for key in ("agent_max_tokens", "query_max_tokens", "collector_max_tokens", "summary_max_tokens",
                    "gate_max_tokens", "max_queries", "evidence_max_chars"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"engine.{key} must be an integer >= 1, got {value!r}")
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)) \
                or not 0 <= self.temperature <= 2:
            raise ValueError(f"engine.temperature must be a number in [0, 2], got {self.temperature!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0):
            raise ValueError(f"engine.seed must be null or an integer >= 0, got {self.seed!r}")


@dataclass
class EpisodeContext:
    """Everything one episode carries between rounds (owned by the env, never shared)."""

    report: ReportState
    ledger: TokenLedger
    memory: dict[str, str] = field(default_factory=dict)  # each agent's previous output
    objective: str = ""  # the Current Team Objective, set by the Lead Architect
    rag_exhausted: bool = False
    sources: SourceBuffer = field(default_factory=SourceBuffer)  # retrieved since the last append
    budget_exhausted: str | None = None  # the ledger's reason, once spent
    llm_failure: str | None = None  # the error that stopped further calls (server down, bad key, ...)


@dataclass
class RoundResult:
    outputs: dict[str, str]
    order: list[list[str]]
    collector: CollectorResult
    tokens: int  # spent in this round
    calls: list[dict]
    record: dict  # the round's trace entry (the env adds reward fields)
    gate_passed: bool | None = None
    budget_exhausted: str | None = None
    wall_s: float = 0.0
    llm_calls: int = 0  # LLM calls this round asked for (token-budget skips not counted)
    llm_errors: int = 0  # of those, the ones that failed or were skipped after a fatal failure
    llm_failure: str | None = None  # set: the round's calls failed; the cause (see module docstring)
    feedback: RoundFeedback = field(default_factory=RoundFeedback)  # the outputs read (engine.feedback)

    @property
    def appended(self) -> bool:
        return self.collector.status in ("appended", "revised")


class _Recorder:
    """Collects the calls of one round, with start/end times relative to the round start."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.calls: list[dict] = []

    def now(self) -> float:
        return round(time.perf_counter() - self.t0, 4)

    def start_call(self, agent: str, kind: str) -> dict:
        """Record a call as it starts; the caller fills in tokens, latency, error, end."""
        entry = {"agent": agent, "kind": kind, "prompt_tokens": 0, "completion_tokens": 0, "latency_s": 0.0,
                 "start_s": self.now(), "end_s": None, "cached": False, "error": None}
        self.calls.append(entry)
        return entry


def own_call_error(rec: "_Recorder", agent: str) -> str:
    """Why `agent`'s turn call failed. Agents run concurrently, so the last call recorded
    may be another agent's: look up this agent's own."""
    mine = (c["error"] for c in reversed(rec.calls) if c["agent"] == agent and c["kind"] == "agent")
    return next(mine, None) or "call failed"


def instruction_for(plan: RoundPlan, agent: str) -> str:
    """The instruction line of `agent`'s prompt: its directive worded, else the plan's free text."""
    directive = plan.directives.get(agent)
    return phase_prompts.directive_text(directive) if directive is not None else plan.instructions.get(agent, "")


def gate_question_for(plan: RoundPlan) -> str:
    """The plan's own gate question, or the engine's about the plan's phase and its next round."""
    g = plan.gate_check
    assert g is not None
    if g.question is not None:
        return g.question
    return phase_prompts.gate_question(g.agent, plan.phase, (plan.phase_round or 0) + 1)


class RoundEngine:
    """Executes plans for one team on shared resources (backend, retriever)."""

    def __init__(self, team: Sequence[TeamMember], backend: LLMBackend, *, retriever: Retriever | None = None,
                 settings: EngineSettings | None = None):
        self.team = list(team)
        self.names = [m.name for m in self.team]
        self.by_name = {m.name: m for m in self.team}
        self.priority = {m.name: m.index for m in self.team}
        self.backend = backend
        self.retriever = retriever
        self.settings = settings or EngineSettings()
        self.collector = Collector(prose_max_tokens=self.settings.collector_max_tokens,
                                   summary_max_tokens=self.settings.summary_max_tokens,
                                   reuse_sources=self.settings.reuse_sources)

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
        running = set(plan.acting)
        order = execution_order_edges(plan.edges, self.priority, running)
        ts = TopologicalSorter({a: set() for a in plan.acting})
        for s, r in order:
            ts.add(r, s)
        depth: dict[str, int] = {}
        for a in ts.static_order():
            preds = [s for s, r in order if r == a]
            depth[a] = self.calls_per_agent(a) + max((depth[p] for p in preds), default=0)
        path = max(depth.values(), default=0)
        return path + (2 if plan.appenders else 0) + (1 if plan.gate_check else 0)

    # -- one LLM call --------------------------------------------------------------
    async def _call(self, ctx: EpisodeContext, rec: _Recorder, agent: str, kind: str, messages: list,
                    max_tokens: int) -> str | None:
        entry = rec.start_call(agent, kind)
        if ctx.budget_exhausted:
            entry.update(error=f"skipped: {ctx.budget_exhausted}", end_s=rec.now())
            return None
        entry["llm_failed"] = False
        if ctx.llm_failure:
            entry.update(error=f"skipped after an LLM failure: {ctx.llm_failure}", end_s=rec.now(), llm_failed=True)
            return None
        try:
            resp = await self.backend.chat(messages, max_tokens=max_tokens, temperature=self.settings.temperature,
                                           seed=self.settings.seed, caller=agent, ledger=ctx.ledger)
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
        entry.update(prompt_tokens=resp.prompt_tokens, completion_tokens=resp.completion_tokens,
                     latency_s=round(resp.latency_s, 4), cached=resp.cached, end_s=rec.now())
        return resp.text.strip()

    # -- one agent -----------------------------------------------------------------
    async def _run_agent(self, name: str, plan: RoundPlan, ctx: EpisodeContext, rec: _Recorder,
                         fresh: dict[str, str], timing: dict, agents_rec: dict) -> None:
        member = self.by_name[name]
        inbox = []
        for (s, r), when in timing.items():
            if r != name or s == name:  # a self edge is the memory shown below
                continue
            text = fresh.get(s, "") if when == "fresh" else ctx.memory.get(s, "")
            inbox.append((s, text))
        inbox.sort(key=lambda st: self.priority[st[0]])
        memory = ctx.memory.get(name, "")
        instruction = instruction_for(plan, name)
        report = ctx.report
        outline = [t for _, t, _ in report.list_sections()]
        record = agents_rec[name]
        record["senders"] = [s for s, _ in inbox]

        evidence = ""
        if member.role.uses_rag and self.retriever is not None:
            retrieval: dict[str, Any] = {"queries": [], "chunks": [], "exhausted": False, "error": None}
            record["retrieval"] = retrieval
            q_text = await self._call(ctx, rec, name, "query",
                                      prompts.query_messages(topic=report.topic, objective=ctx.objective,
                                                             inbox=inbox, memory=memory,
                                                             max_queries=self.settings.max_queries),
                                      self.settings.query_max_tokens)
            if q_text is None and ctx.budget_exhausted:
                return
            # A failed query call still searches for the topic: losing the search costs more.
            queries = prompts.parse_queries(q_text or "", topic=report.topic, max_queries=self.settings.max_queries)
            retrieval["generated"] = list(queries)
            if self.settings.vet_queries:  # junk queries fall back to the topic and outline terms
                # NO_QUERY before a section is written is no decision: this turn would then list facts
                # from no evidence at all (sources found in an earlier round are not shown again).
                nothing_yet = report.is_empty
                queries, rejected, fell_back = vet_queries(queries, topic=report.topic, objective=ctx.objective,
                                                           outline=outline, max_queries=self.settings.max_queries,
                                                           no_query_allowed=not nothing_yet)
                retrieval.update(rejected=rejected, fallback=fell_back)
            retrieval["queries"] = queries
            if queries:
                try:
                    chunks = await asyncio.to_thread(self.retriever.retrieve, queries)
                except Exception as e:  # a store failure must not end the round; the trace says why
                    chunks = []
                    retrieval["error"] = f"{type(e).__name__}: {e}"
                retrieval["chunks"] = [{"source": c.source, "page": c.page, "chunk_id": c.chunk_id,
                                        "score": (c.scores or {}).get("rrf") if hasattr(c, "scores") else None}
                                       for c in chunks]
                if not chunks:
                    retrieval["exhausted"] = True
                    ctx.rag_exhausted = True
                    out = f"{prompts.RESEARCH_EXHAUSTED} nothing relevant found for: " + "; ".join(queries)
                    fresh[name] = out
                    record["response"] = out
                    return
                ctx.rag_exhausted = False
                evidence = format_evidence(chunks, self.settings.evidence_max_chars)
                ctx.sources.add(chunks)

        if phase_prompts.handles(plan.phase):  # the handcrafted pipeline's phases
            messages = phase_prompts.agent_messages(member.role.name, phase=plan.phase, topic=report.topic,
                                                    objective_text=ctx.objective, report=report, inbox=inbox,
                                                    memory=memory, evidence=evidence, instruction=instruction,
                                                    phase_round=plan.phase_round, phase_rounds=plan.phase_rounds)
        else:
            messages = prompts.agent_messages(member.role.name, topic=report.topic, objective=ctx.objective,
                                              outline=outline, summary=report.progress_summary, inbox=inbox,
                                              memory=memory, evidence=evidence, instruction=instruction,
                                              phase=plan.phase)
        record["prompt"] = messages
        text = await self._call(ctx, rec, name, "agent", messages, self.settings.agent_max_tokens)
        if text is None:
            record["error"] = own_call_error(rec, name)
            fresh[name] = ""
            return
        text = prompts.strip_echo(text) or text
        fresh[name] = text
        record["response"] = text
        if member.role.sets_objective:
            objective = prompts.parse_objective(text)
            if objective:
                ctx.objective = objective
        if member.role.uses_rag and prompts.RESEARCH_EXHAUSTED in text:
            ctx.rag_exhausted = True

    # -- the round -----------------------------------------------------------------
    async def run(self, plan: RoundPlan, ctx: EpisodeContext) -> RoundResult:
        plan.validate(self.names)
        rec = _Recorder()
        tokens_before = ctx.ledger.total.total
        if plan.reset_memory:
            ctx.memory.clear()
        timing = self.edge_timing(plan)
        running = set(plan.acting)
        order_pairs = execution_order_edges(plan.edges, self.priority, running)

        agents_rec: dict[str, dict] = {
            a: {"receivers": sorted({r for s, r in plan.edges if s == a}, key=self._key), "senders": [],
                "prompt": [], "response": "", "error": None} for a in plan.acting}
        fresh: dict[str, str] = {}
        order: list[list[str]] = []

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
                    task = asyncio.create_task(self._run_agent(a, plan, ctx, rec, fresh, timing, agents_rec))
                    pending[task] = a
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

        contributions = [(a, fresh.get(a, "")) for a in sorted(plan.appenders, key=self._key)]
        if ctx.budget_exhausted and contributions:
            collector = CollectorResult("skipped", f"token budget exhausted: {ctx.budget_exhausted}")
        else:
            collector = await self.collector.run(
                call=lambda agent, kind, msgs, mt: self._call(ctx, rec, agent, kind, msgs, mt),
                report=ctx.report, contributions=contributions, objective=ctx.objective,
                sources=ctx.sources.pending(), revise_section=plan.revise_section)
        if collector.status in ("appended", "revised"):
            ctx.sources.flush()

        gate_passed, gate_rec = None, None
        if plan.gate_check is not None and not ctx.budget_exhausted:
            g = plan.gate_check
            question = gate_question_for(plan)
            answer = await self._call(ctx, rec, g.agent, "gate",
                                      prompts.gate_messages(role=self.by_name[g.agent].role.name,
                                                            topic=ctx.report.topic, question=question,
                                                            summary=ctx.report.progress_summary,
                                                            outline=[t for _, t, _ in ctx.report.list_sections()]),
                                      self.settings.gate_max_tokens)
            gate_passed = prompts.parse_gate(answer) if answer is not None else None
            gate_rec = {"agent": g.agent, "question": question, "passed": gate_passed, "response": answer}

        feedback = read_round(fresh, collector_status=collector.status, collector_section=collector.section_id,
                              sections=ctx.report.list_sections(),
                              gate_agent=plan.gate_check.agent if plan.gate_check else None, gate_passed=gate_passed)
        phase_prompts.after_round(plan.phase, feedback, ctx.report, {m.name: m.role.name for m in self.team})

        # Memory: what each agent said this round is its "previous output" next round.
        for a in plan.acting:
            if fresh.get(a):
                ctx.memory[a] = fresh[a]

        tokens = ctx.ledger.total.total - tokens_before
        llm_calls = [c for c in rec.calls if "llm_failed" in c]
        llm_errors = [c for c in llm_calls if c["llm_failed"]]
        llm_failure = ctx.llm_failure
        if llm_calls and len(llm_errors) == len(llm_calls) and llm_failure is None:
            llm_failure = f"all {len(llm_calls)} LLM calls of the round failed; the first: {llm_errors[0]['error']}"
        table = ActionTable(len(self.names))
        record = {
            "phase": plan.phase,
            "actions": {a: {"action": plan.actions.get(a),
                            "name": table.name(plan.actions[a], self.names) if a in plan.actions else None,
                            "effective": plan.effective.get(a) or ("acting" if a in running else "idle")}
                        for a in self.names},
            "denied": [vars(d) for d in plan.denied],
            "terminate_votes": list(plan.terminate_votes),
            "edges": [{"sender": s, "receiver": r, "timing": timing[(s, r)]} for s, r in plan.edges],
            "order": order,
            "agents": agents_rec,
            "calls": rec.calls,
            "collector": collector.as_dict(),
            "gate": gate_rec,
            "objective": ctx.objective,
            "rag_exhausted": ctx.rag_exhausted,
            "budget_exhausted": ctx.budget_exhausted,
            "llm": {"calls": len(llm_calls), "errors": len(llm_errors), "failure": llm_failure},
            "timing": {"wall_s": rec.now()},
        }
        return RoundResult(outputs=fresh, order=order, collector=collector, tokens=tokens, calls=rec.calls,
                           record=record, gate_passed=gate_passed, budget_exhausted=ctx.budget_exhausted,
                           wall_s=rec.now(), llm_calls=len(llm_calls), llm_errors=len(llm_errors),
                           llm_failure=llm_failure, feedback=feedback)

    def _key(self, name: str) -> int:
        return self.priority.get(name, len(self.priority))
