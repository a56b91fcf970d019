"""One agent's turn in a round: its inbox, retrieval (the Researcher), prompt and call.

`TurnTaker.run_turn` returns an `AgentTurn` (the output and what the trace records of
the turn) and changes nothing it is handed but the episode context, whose job is to
carry the objective, the retrieval state and the sources between turns. The scheduler
(`agents_llm.engine.runner`) stores the turn's output for the agents that wait on it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Mapping

from report_protocol import RoundPlan
from report_protocol.feedback import EVIDENCE_TASKS, exhaustion_believed

from .. import phase_prompts, prompts
from ..conversation import Conversations
from ..prompt_echo import echoed_sentences
from ..roles import TeamMember
from ..text.absence import is_absence_only
from .context import EngineSettings, EpisodeContext
from .feedback import names_signal, said_something, without_signal
from .query_check import fallback_queries, vet_queries
from .retrieval import Retriever, format_evidence, new_chunks, record_retrieval
from .round_record import AgentTurn, CallRecorder, own_call_error

Inbox = list[tuple[str, str]]

MIN_ANSWER_WORDS = 6  # an overruled answer shorter than this says nothing beside the signal it gave


def inbox_for(
    name: str,
    timing: Mapping[tuple[str, str], str],
    fresh: Mapping[str, str],
    memory: Mapping[str, str],
    priority: Mapping[str, int],
) -> Inbox:
    """(sender, text) of every message `name` receives, in team priority order: a 'fresh'
    edge delivers the sender's output of this round, a 'previous' one its last output."""
    inbox = []
    for (s, r), when in timing.items():
        if r != name or s == name:  # a self edge is the memory shown separately
            continue
        inbox.append((s, fresh.get(s, "") if when == "fresh" else memory.get(s, "")))
    inbox.sort(key=lambda st: priority[st[0]])
    return inbox


def instruction_for(plan: RoundPlan, agent: str) -> tuple[str, list[str]]:
    """The instruction line of `agent`'s prompt and the data items it refers to: its
    directive worded (the section title and the finding are data), else the plan's own text."""
    directive = plan.directives.get(agent)
    if directive is not None:
        return phase_prompts.directive_parts(directive)
    return plan.instructions.get(agent, ""), []


def turn_prompt(
    role: str,
    plan: RoundPlan,
    name: str,
    ctx: EpisodeContext,
    *,
    objective: str,
    inbox: Inbox,
    memory: str,
    evidence: str,
) -> prompts.AgentPrompt:
    """The turn's prompt: the phase prompts for a handcrafted phase, else the learned-policy prompts."""
    report = ctx.report
    instruction, instruction_data = instruction_for(plan, name)
    if plan.phase is not None and phase_prompts.handles(plan.phase):
        return phase_prompts.agent_prompt(
            role,
            phase=plan.phase,
            topic=report.topic,
            objective_text=objective,
            report=report,
            inbox=inbox,
            memory=memory,
            evidence=evidence,
            instruction=instruction,
            instruction_data=instruction_data,
            phase_round=plan.phase_round,
            phase_rounds=plan.phase_rounds,
        )
    return prompts.agent_prompt(
        role,
        topic=report.topic,
        objective=objective,
        outline=[t for _, t, _ in report.list_sections()],
        summary=report.progress_summary,
        inbox=inbox,
        memory=memory,
        evidence=evidence,
        instruction=instruction,
        instruction_data=instruction_data,
        phase=plan.phase,
    )


def exhausted_output(queries: list[str]) -> str:
    return f"{prompts.RESEARCH_EXHAUSTED} nothing relevant found for: " + "; ".join(queries)


def evidence_task(plan: RoundPlan, agent: str) -> str:
    """The title of the section `plan` asks `agent` evidence for ('' when it asks none)."""
    directive = plan.directives.get(agent)
    if directive is None or directive.kind not in EVIDENCE_TASKS:
        return ""
    return directive.title or ""


def overruled_answer(text: str, evidence: str) -> str:
    """A Researcher's answer whose RESEARCH_EXHAUSTED is not believed (`exhaustion_believed`):
    the answer without the signal, or, when nothing of it is left but absence markers, an echo
    of our prompt or a few words, the evidence its search found."""
    rest = without_signal(text, prompts.RESEARCH_EXHAUSTED)
    kept = prompts.strip_echo(rest)
    if len(kept.split()) < MIN_ANSWER_WORDS or is_absence_only(kept) or echoed_sentences(kept)[0] >= 0.5:
        return evidence
    return kept


class TurnTaker:
    """The LLM team's turn; `RoundEngine` provides the attributes and the `_call` it uses."""

    by_name: dict[str, TeamMember]
    priority: dict[str, int]
    retriever: Retriever | None
    settings: EngineSettings

    async def _call(
        self, ctx: EpisodeContext, rec: CallRecorder, agent: str, kind: str, messages: list, max_tokens: int
    ) -> str | None:
        raise NotImplementedError

    async def run_turn(
        self, name: str, plan: RoundPlan, ctx: EpisodeContext, rec: CallRecorder, inbox: Inbox, objective: str
    ) -> AgentTurn:
        """One agent's turn. `objective` is the one its prompts show (`RoundEngine._run_turns`
        fixes it before the turn starts); an objective the turn sets goes to `AgentTurn.objective`."""
        member = self.by_name[name]
        memory = ctx.memory.get(name, "")
        report = ctx.report
        turn = AgentTurn(output=None, senders=[s for s, _ in inbox])

        evidence = new_evidence = ""
        if member.role.uses_rag and self.retriever is not None:
            retrieval: dict[str, Any] = {"queries": [], "chunks": [], "exhausted": False, "error": None}
            turn.retrieval = retrieval
            section = evidence_task(plan, name)  # the plan asks evidence for this section ('' none)
            outline = [t for _, t, _ in report.list_sections()]
            q_text = await self._call(
                ctx,
                rec,
                name,
                "query",
                prompts.query_messages(
                    topic=report.topic,
                    objective=objective,
                    inbox=inbox,
                    memory=memory,
                    max_queries=self.settings.max_queries,
                    section=section,
                ),
                self.settings.query_max_tokens,
            )
            if q_text is None and ctx.budget_exhausted:
                return turn
            # A failed query call still searches for the topic: losing the search costs more.
            queries = prompts.parse_queries(q_text or "", topic=report.topic, max_queries=self.settings.max_queries)
            retrieval["generated"] = list(queries)
            fell_back = False
            if self.settings.vet_queries:  # junk queries fall back to the topic and outline terms
                # NO_QUERY before a section is written is no decision: this turn would then list facts
                # from no evidence at all (sources found in an earlier round are not shown again); nor is
                # it when the plan asks for a section's evidence.
                queries, rejected, fell_back = vet_queries(
                    queries,
                    topic=report.topic,
                    objective=objective,
                    outline=outline,
                    max_queries=self.settings.max_queries,
                    no_query_allowed=not report.is_empty and not section,
                    section=section,
                )
                retrieval.update(rejected=rejected, fallback=fell_back)
            passage: list[Any] = []
            if section and self.settings.writes_from_evidence:  # a planned section is about its title
                title = " ".join(section.split())
                if title.lower() not in {q.lower() for q in queries}:
                    queries = [title, *queries][: self.settings.max_queries]
                retrieval["section_query"] = title
                passage = await self._heading_passage(title, retrieval)
            retrieval["queries"] = queries
            if queries:
                chunks = await self._search(queries, retrieval)
                if passage:  # what the section's heading heads comes first, before search hits
                    ids = {c.chunk_id for c in passage}
                    chunks = passage + [c for c in chunks if c.chunk_id not in ids]
                fresh_chunks = new_chunks(chunks, report)
                if section and not fresh_chunks and self.settings.vet_queries and not fell_back:
                    # Nothing the report lacks: search once more for the section and the topic
                    # terms before the section goes without evidence.
                    again = fallback_queries(report.topic, objective, outline, self.settings.max_queries, section)
                    if [q.lower() for q in again] != [q.lower() for q in queries]:
                        retrieval["queries"] = queries = queries + [q for q in again if q not in queries]
                        retrieval["retried"] = again
                        seen = {c.chunk_id for c in chunks}
                        chunks = chunks + [c for c in await self._search(again, retrieval) if c.chunk_id not in seen]
                        fresh_chunks = new_chunks(chunks, report)
                retrieval["new_chunks"] = len(fresh_chunks)
                if not record_retrieval(retrieval, chunks, ctx, name):
                    turn.output = turn.response = exhausted_output(queries)
                    return turn
                evidence = format_evidence(chunks, self.settings.evidence_max_chars)
                new_evidence = format_evidence(fresh_chunks, self.settings.evidence_max_chars)

        prompt = turn_prompt(
            member.role.name, plan, name, ctx, objective=objective, inbox=inbox, memory=memory, evidence=evidence
        )
        pending = None
        if self.settings.chats:  # the agent's chat goes on: only what it has not been shown
            if ctx.conversations is None:
                ctx.conversations = Conversations(self.settings.conversation_max_chars)
            pending = ctx.conversations.turn(name, prompt)
            turn.prompt = pending.messages
            turn.chat = {"turn": sum(m["role"] == "user" for m in pending.messages), "restarted": pending.restarted}
        else:
            turn.prompt = prompt.messages()
        text = await self._call(ctx, rec, name, "agent", turn.prompt, self.settings.agent_max_tokens)
        if text is None:
            turn.error = own_call_error(rec, name)
            turn.output = ""
            return turn
        text = prompts.strip_echo(text) or text
        if pending is not None and ctx.conversations is not None:
            ctx.conversations.commit(pending, text)
        turn.output = turn.response = text
        if member.role.sets_objective:
            turn.objective = prompts.parse_objective(text) or None
        if member.role.uses_rag and turn.retrieval is not None:
            new = int(turn.retrieval.get("new_chunks", 0))
            kind = plan.directives[name].kind if name in plan.directives else None
            if not exhaustion_believed(kind, new) and (
                names_signal(text, prompts.RESEARCH_EXHAUSTED) or not said_something(prompts.strip_echo(text))
            ):
                # Asked for a section's evidence, it found facts the report lacks and answered that
                # there are none (or nothing): its receivers get the evidence, not the claim.
                turn.output = overruled_answer(text, new_evidence)
                turn.retrieval["exhaustion_overruled"] = True
            elif prompts.RESEARCH_EXHAUSTED in text:
                ctx.rag_exhausted = True
        elif member.role.uses_rag and prompts.RESEARCH_EXHAUSTED in text:
            ctx.rag_exhausted = True
        return turn

    async def _heading_passage(self, title: str, retrieval: dict[str, Any]) -> list[Any]:
        """The passage the documents' heading `title` heads ([] when none has it, or the retriever
        cannot say); its chunk ids go into the trace entry as `section_passage`."""
        find = getattr(self.retriever, "heading_passage", None)
        if find is None:
            return []
        try:
            passage = list(await asyncio.to_thread(find, title))
        except Exception as e:  # like a failed search, the trace says why and the turn goes on
            retrieval["error"] = f"{type(e).__name__}: {e}"
            return []
        retrieval["section_passage"] = [c.chunk_id for c in passage]
        return passage

    async def _search(self, queries: list[str], retrieval: dict[str, Any]) -> list[Any]:
        """The retriever's chunks for `queries`; [] with the error in the trace entry when the store fails."""
        assert self.retriever is not None
        try:
            return list(await asyncio.to_thread(self.retriever.retrieve, queries))
        except Exception as e:  # a store failure must not end the round; the trace says why
            retrieval["error"] = f"{type(e).__name__}: {e}"
            return []
