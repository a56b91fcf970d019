"""The extractive team's round engine: the LLM team's scheduling, with rule-based roles.

`ExtractiveEngine` subclasses `RoundEngine`, so plans, edge timing, topological order,
memory, sources, the trace record and the budget checks are the LLM team's own code.
Only what an agent *says* differs: each role composes its output from what it has
(see `agents_llm.extractive` for the rules), and every "call" is charged the tokens of
the prompt the LLM team's agent would have been sent plus the tokens of its output.
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

from .. import phase_prompts, prompts
from ..backends import TokenBudgetExceeded
from ..engine.retrieval import format_evidence, record_retrieval
from ..engine.context import EngineSettings, EpisodeContext
from ..engine.round_record import AgentTurn, CallRecorder, own_call_error
from ..engine.runner import RoundEngine
from ..engine.turn import Inbox, exhausted_output, turn_prompt
from ..text.split import words
from ..report_state import ReportState
from ..roles import ExtractiveTurn, Role, TeamMember
from .text import (
    DEFICIENCIES_PREFIX,
    GENERIC_OUTLINE,
    MAX_CANDIDATE_LINES,
    MAX_DEFICIENCIES,
    MAX_OUTLINE,
    OBJECTIVE_PREFIX,
    OUTLINE_ITEM,
    Composed,
    _DEFINITIONAL,
    _NUMBER,
    dedup,
    deficiencies_in,
    fact_line,
    facts,
    headings_in,
    is_prose,
    near_duplicate,
    prose_sentences,
    salient_terms,
    stems,
    term_covered,
)
from . import rules_v2
from .collector import ExtractiveCollector
from .settings import ExtractiveSettings
from .tokens import TokenCounter


class ExtractiveEngine(RoundEngine):
    """The round engine of the extractive team (no language model); see `agents_llm.extractive`."""

    def __init__(
        self,
        team: Sequence[TeamMember],
        *,
        retriever: Any = None,
        settings: EngineSettings | None = None,
        tokenizer_model: str = "smollm2-135m",
        version: int = ExtractiveSettings.version,
    ):
        super().__init__(team, backend=None, retriever=retriever, settings=settings)
        self.version = ExtractiveSettings(version=version).version  # which rules (docs/extractive_team.md)
        self.counter = TokenCounter(tokenizer_model)
        self.collector = ExtractiveCollector(self)
        self.key_terms: tuple[str, ...] = ()
        self._retrieved: dict[tuple, list] = {}

    def begin_episode(self, key_terms: Sequence[str] = ()) -> None:
        """The task's key terms: the brief the Reviewer checks the report against."""
        self.key_terms = tuple(key_terms)

    # -- the charged "call" --------------------------------------------------------
    async def _call(
        self, ctx: EpisodeContext, rec: CallRecorder, agent: str, kind: str, messages: list, max_tokens: int
    ) -> str | None:
        if not isinstance(messages, Composed):
            if kind != "gate":
                raise TypeError(f"extractive engine: the {kind} call of {agent} has no composed output")
            # Gate check: worth running when the agent has something to build on.
            messages = Composed(messages, "YES" if ctx.memory.get(agent) else "NO")
        entry = rec.start_call(agent, kind)
        if ctx.budget_exhausted:
            entry.update(error=f"skipped: {ctx.budget_exhausted}", end_s=rec.now())
            return None
        try:
            ctx.ledger.check(agent)
        except TokenBudgetExceeded as e:
            ctx.budget_exhausted = ctx.budget_exhausted or e.reason
            entry.update(error=f"token budget: {e.reason}", end_s=rec.now())
            return None
        output = self.counter.clip(messages.output, max_tokens)
        pt, ct = self.counter.prompt_tokens(messages), self.counter.count(output)
        ctx.ledger.charge(agent, pt, ct)
        entry.update(prompt_tokens=pt, completion_tokens=ct, end_s=rec.now())
        return output

    # -- one agent -----------------------------------------------------------------
    async def run_turn(
        self, name: str, plan, ctx: EpisodeContext, rec: CallRecorder, inbox: Inbox, objective: str
    ) -> AgentTurn:
        member = self.by_name[name]
        memory = ctx.memory.get(name, "")
        report = ctx.report
        turn = AgentTurn(output=None, senders=[s for s, _ in inbox])
        role = member.role.name
        # v2: the role follows the plan's directive to it (v1 ignores directives).
        directive = plan.directives.get(name) if self.version >= 2 else None
        focus = rules_v2.focus_of(directive)
        await asyncio.sleep(0)

        evidence, chunks, queries = "", [], []
        if member.role.uses_rag and self.retriever is not None:
            queries = self.research_queries(report.topic, objective, inbox, lead=focus)
            retrieval: dict[str, Any] = {"queries": queries, "chunks": [], "exhausted": False, "error": None}
            turn.retrieval = retrieval
            q = await self._call(
                ctx,
                rec,
                name,
                "query",
                Composed(
                    prompts.query_messages(
                        topic=report.topic,
                        objective=objective,
                        inbox=inbox,
                        memory=memory,
                        max_queries=self.settings.max_queries,
                    ),
                    "\n".join(queries),
                ),
                self.settings.query_max_tokens,
            )
            if q is None and ctx.budget_exhausted:
                return turn
            if self.version >= 2 and q:  # v2: it searches with the queries its capped output holds
                queries = [line.strip() for line in q.splitlines() if line.strip()] or queries
                retrieval["queries"] = queries
            try:
                chunks = await asyncio.to_thread(self._retrieve, queries)
            except Exception as e:  # a store failure must not end the round; the trace says why
                retrieval["error"] = f"{type(e).__name__}: {e}"
            if not record_retrieval(retrieval, chunks, ctx, name):
                turn.output = turn.response = exhausted_output(queries)
                return turn
            evidence = format_evidence(chunks, self.settings.evidence_max_chars)

        rule = member.role.extractive
        assert rule is not None, f"role {role!r} has no extractive rule (build_team refuses it)"
        output = rule.compose(self, ExtractiveTurn(report, inbox, memory, queries, chunks, directive, focus))

        messages = turn_prompt(
            role, plan, name, ctx, objective=objective, inbox=inbox, memory=memory, evidence=evidence
        ).messages()
        # No prompt is sent: the trace keeps what the rules worked from, and the LLM prompt the call is charged for.
        turn.charged_prompt = list(messages)
        turn.inputs = self.turn_inputs(member.role, report, objective, inbox, memory, chunks, directive, focus)
        text = await self._call(ctx, rec, name, "agent", Composed(messages, output), self.settings.agent_max_tokens)
        if text is None:
            turn.error = own_call_error(rec, name)
            turn.output = ""
            return turn
        turn.output = turn.response = text
        if member.role.sets_objective:
            turn.objective = prompts.parse_objective(text) or None
        return turn

    def turn_inputs(
        self,
        role: Role,
        report: ReportState,
        objective: str,
        inbox: Sequence[tuple[str, str]],
        memory: str,
        chunks: Sequence[Any],
        directive: Any,
        focus: str,
    ) -> dict[str, Any]:
        """What a role's rules had this turn (see `agents_llm.extractive`), as the trace records it."""
        inputs: dict[str, Any] = {
            "rules": f"v{self.version}",
            "topic": report.topic,
            "objective": objective,
            "inbox": [{"sender": s, "text": t} for s, t in inbox],
            "memory": memory,
            "section_titles": [t for _, t, _ in report.list_sections()],
            "progress_summary": report.progress_summary,
        }
        if directive is not None:  # v2 follows the plan's directive to the role
            inputs["directive"] = phase_prompts.directive_text(directive)
            inputs["focus"] = focus
        if role.extractive is not None and role.extractive.reads_key_terms:
            inputs["key_terms"] = list(self.key_terms)  # its brief (the Reviewer's): the task's key terms
        if chunks:
            inputs["retrieved"] = [
                {"source": str(c.source), "page": getattr(c, "page", None), "text": str(c.text)} for c in chunks
            ]
        return inputs

    def _retrieve(self, queries: list[str]) -> list:
        # The store does not change within a run: the same queries find the same chunks.
        retriever = self.retriever
        assert retriever is not None, "run_turn retrieves only when the engine has a retriever"
        key = (id(retriever), tuple(queries))
        if key not in self._retrieved:
            if len(self._retrieved) > 4096:
                self._retrieved.clear()
            self._retrieved[key] = list(retriever.retrieve(queries))
        return self._retrieved[key]

    # -- the roles' rules (each role's `ExtractiveRule`, agents_llm/roles, calls these) ---------
    def research_queries(
        self, topic: str, objective: str, inbox: Sequence[tuple[str, str]], lead: str = ""
    ) -> list[str]:
        """`lead` (v2: the section a directive names), deficiencies received, then headings received,
        then the objective; the topic when none."""
        wanted: list[str] = [lead] if lead else []
        for _, text in inbox:
            wanted += deficiencies_in(text)
        for _, text in inbox:
            wanted += headings_in(text)
        if objective:
            wanted.append(objective)
        queries: list[str] = []
        for w in wanted:
            q = w if stems(topic) & stems(w) else f"{w} {topic}"
            if q.lower() not in {x.lower() for x in queries}:
                queries.append(q)
            if len(queries) == self.settings.max_queries:
                break
        return queries or [topic]

    def researcher(
        self,
        queries: list[str],
        chunks: Sequence[Any],
        memory: str,
        inbox: Sequence[tuple[str, str]],
        focus: str = "",
    ) -> str:
        """The retrieved sentences that share the most query terms, each with its source; with a
        `focus` (v2: the section a directive names), those sharing its terms first."""
        if not chunks:
            return ""
        wanted = set().union(*(stems(q) for q in queries)) if queries else set()
        focus_terms = stems(focus)
        known = [s for s, _ in facts(memory)] + [s for _, t in inbox for s, _ in facts(t)]
        candidates = []
        for rank, c in enumerate(chunks):
            label = f"{c.source}, p. {c.page}" if getattr(c, "page", None) is not None else str(c.source)
            for pos, sent in enumerate(prose_sentences(str(c.text))):
                if not is_prose(sent):
                    continue
                terms = stems(sent)
                candidates.append((-len(focus_terms & terms), -len(wanted & terms), rank, pos, sent, label))
        candidates.sort(key=lambda t: t[:4])
        fresh_first = [c for c in candidates if not any(near_duplicate(c[4], k) for k in known)] or candidates
        picked = dedup([(c[4], c[5]) for c in fresh_first])[:MAX_CANDIDATE_LINES]
        return "\n".join(fact_line(s, label) for s, label in picked)

    def lead_architect(self, report: ReportState, inbox: Sequence[tuple[str, str]]) -> str:
        """An objective and outline from the key terms received; a generic outline from nothing."""
        used = {" ".join(words(t)) for _, t, _ in report.list_sections()}
        received = [t for _, t in inbox if t.strip()]
        terms: list[str] = []
        for text in received:
            terms += deficiencies_in(text)
        if received:
            # The progress summary is in every LLM prompt, so it counts as seen once anything arrived.
            prose = [s for text in received for s, _ in facts(text)] + [report.progress_summary]
            terms += salient_terms(prose, stems(report.topic), MAX_OUTLINE + len(used))
        headings = [t[:1].upper() + t[1:] for t in dict.fromkeys(terms)] or list(GENERIC_OUTLINE)
        todo = [h for h in headings if " ".join(words(h)) not in used] or headings
        lines = [f"{OBJECTIVE_PREFIX} {todo[0]}"] + [f"{OUTLINE_ITEM}{h}" for h in todo[1:MAX_OUTLINE]]
        return "\n".join(lines)

    def data_analyst(self, inbox: Sequence[tuple[str, str]], memory: str) -> str:
        """The quantitative and definitional sentences of its inputs, sources kept."""
        items = [f for _, t in inbox for f in facts(t)] + facts(memory)
        kept = [(s, label) for s, label in dedup(items) if _NUMBER.search(s) or _DEFINITIONAL.search(s)]
        return "\n".join(fact_line(s, label) for s, label in kept[:MAX_CANDIDATE_LINES])

    def reviewer(self, report: ReportState, inbox: Sequence[tuple[str, str]], memory: str) -> str:
        """Its inputs without near-duplicates, after the brief's terms nothing covers yet."""
        items = dedup([f for _, t in inbox for f in facts(t)] + facts(memory))
        checklist = list(self.key_terms)
        for _, text in inbox:
            checklist += headings_in(text)
        seen = " ".join([t for _, t in inbox] + [t for _, t, _ in report.list_sections()] + [report.progress_summary])
        present = stems(seen)
        missing = [t for t in dict.fromkeys(checklist) if not term_covered(t, present)][:MAX_DEFICIENCIES]
        lines = [fact_line(s, label) for s, label in items]
        if missing:
            lines.insert(0, f"{DEFICIENCIES_PREFIX} " + "; ".join(missing))
        return "\n".join(lines)
