"""The extractive team's round engine: the LLM team's scheduling, with rule-based roles.

`ExtractiveEngine` subclasses `RoundEngine`, so plans, edge timing, topological order,
memory, sources, the trace record and the budget checks are the LLM team's own code.
Only what an agent *says* differs: each role composes its output from what it has
(see `agents_llm.extractive` for the rules), and every "call" is charged the tokens of
the prompt the LLM team's agent would have been sent plus the tokens of its output.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from typing import Any, Sequence

from .. import prompts
from ..backends import TokenBudgetExceeded
from ..collector import CollectorResult, is_absence_only
from ..engine.retrieval import format_evidence, record_retrieval
from ..engine.context import EngineSettings, EpisodeContext
from ..engine.round_record import CallRecorder, own_call_error
from ..engine.runner import RoundEngine
from ..engine.turn import AgentTurn, Inbox, exhausted_output, turn_messages
from ..judges.reference import STOPWORDS, _stem
from ..judges.text import sentences, words
from ..report_filter import filter_report_text
from ..report_state import ReportState
from ..roles import TeamMember
from .tokens import TokenCounter

OBJECTIVE_PREFIX = "OBJECTIVE:"
DEFICIENCIES_PREFIX = "DEFICIENCIES:"
OUTLINE_ITEM = "- "
# With nothing received, the LeadArchitect can only propose these.
GENERIC_OUTLINE = ("Background", "Core concepts", "Applications", "Limitations")
MIN_FACT_WORDS = 6  # shorter "sentences" are headings, badges, list debris
MAX_FACT_WORDS = 60
NEAR_DUPLICATE = 0.8  # word-set Jaccard at which the Reviewer/Collector treat two sentences as one
MAX_DEFICIENCIES = 4
MAX_OUTLINE = 4
MAX_CANDIDATE_LINES = 12  # lines composed before the output is cut to the call's token budget

_SOURCE_TAG = re.compile(r"\s*\[source:\s*([^\]]+)\]\s*$")
_NUMBER = re.compile(r"\d")
_DEFINITIONAL = re.compile(
    r"\b(?:is|are) (?:a|an|the)\b|\brefers? to\b|\bdefined as\b|\bmeans\b|\bconsists? of\b|"
    r"\bcalled\b|\bknown as\b|\bprovides?\b",
    re.IGNORECASE,
)
_NOT_PROSE = re.compile(r"```|https?://|[{}<>=|`$\\]|^\W*[#>*]|\.\.\.|\(\)")


class Composed(list):
    """A chat prompt (the messages the LLM team would send) with the output the rule produced."""

    def __init__(self, messages: Sequence[dict], output: str):
        super().__init__(messages)
        self.output = output


# -- text helpers -------------------------------------------------------------------
def stems(text: str) -> set[str]:
    return {_stem(w) for w in words(text) if len(w) >= 3 and w not in STOPWORDS}


def term_covered(term: str, present: set[str]) -> bool:
    parts = stems(term)
    return bool(parts) and parts <= present


def near_duplicate(a: str, b: str) -> bool:
    sa, sb = set(words(a)), set(words(b))
    if not sa or not sb:
        return False
    return len(sa & sb) / len(sa | sb) >= NEAR_DUPLICATE


def is_meta(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith((OBJECTIVE_PREFIX, DEFICIENCIES_PREFIX, OUTLINE_ITEM)) or is_absence_only(s)


def facts(text: str) -> list[tuple[str, str]]:
    """(sentence, source label or '') of every prose line of an output."""
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        if is_meta(line):
            continue
        m = _SOURCE_TAG.search(line)
        label = m.group(1).strip() if m else ""
        body = _SOURCE_TAG.sub("", line).strip()
        out.extend((s, label) for s in sentences(body) if s)
    return out


def fact_line(sentence: str, label: str) -> str:
    return f"{sentence} [source: {label}]" if label else sentence


def deficiencies_in(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        if line.strip().startswith(DEFICIENCIES_PREFIX):
            out += [t.strip() for t in line.strip()[len(DEFICIENCIES_PREFIX) :].split(";") if t.strip()]
    return out


def headings_in(text: str) -> list[str]:
    """The objective and outline headings a LeadArchitect output carries, in order."""
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(OBJECTIVE_PREFIX):
            out.append(s[len(OBJECTIVE_PREFIX) :].strip())
        elif s.startswith(OUTLINE_ITEM):
            out.append(s[len(OUTLINE_ITEM) :].strip())
    return [h for h in out if h]


_MARKUP_LINE = re.compile(r"^\s*(?:#|[-*+]\s|\d+[.)]\s|>|\||```|<|!\[|\[!)")


def prose_sentences(text: str) -> list[str]:
    """Sentences of a document's running text: hard-wrapped lines joined, markup lines
    (headings, list items, tables, code fences, badges) left out."""
    out: list[str] = []
    block: list[str] = []
    in_code = False

    def flush() -> None:
        if block:
            out.extend(" ".join(s.split()) for s in sentences(" ".join(block)))
            block.clear()

    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            flush()
            continue
        if in_code or not line.strip() or _MARKUP_LINE.match(line):
            flush()
            continue
        block.append(line.strip())
    flush()
    return out


def is_prose(sentence: str) -> bool:
    n = len(sentence.split())
    return MIN_FACT_WORDS <= n <= MAX_FACT_WORDS and not _NOT_PROSE.search(sentence)


def salient_terms(texts: Sequence[str], exclude: set[str], limit: int) -> list[str]:
    """The most frequent content words of `texts` (stemmed); ties go to the longer word, then the first seen."""
    counts: Counter = Counter()
    first: dict[str, int] = {}
    shown: dict[str, str] = {}
    for w in (w for t in texts for w in words(t)):
        s = _stem(w)
        if len(w) < 4 or w in STOPWORDS or s in exclude or w.isdigit() or not w.isalpha():
            continue
        counts[s] += 1
        first.setdefault(s, len(first))
        shown.setdefault(s, w)
    ranked = sorted(counts, key=lambda s: (-counts[s], -len(shown[s]), first[s]))
    return [shown[s] for s in ranked[:limit]]


def dedup(items: Sequence[tuple[str, str]], against: Sequence[str] = ()) -> list[tuple[str, str]]:
    kept: list[tuple[str, str]] = []
    for sent, label in items:
        if any(near_duplicate(sent, k) for k, _ in kept) or any(near_duplicate(sent, a) for a in against):
            continue
        kept.append((sent, label))
    return kept


class ExtractiveEngine(RoundEngine):
    """The round engine of the extractive team (no language model); see `agents_llm.extractive`."""

    def __init__(
        self,
        team: Sequence[TeamMember],
        *,
        retriever: Any = None,
        settings: EngineSettings | None = None,
        tokenizer_model: str = "smollm2-135m",
    ):
        super().__init__(team, backend=None, retriever=retriever, settings=settings)
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
        await asyncio.sleep(0)

        evidence, chunks, queries = "", [], []
        if member.role.uses_rag and self.retriever is not None:
            queries = self.research_queries(report.topic, objective, inbox)
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
            try:
                chunks = await asyncio.to_thread(self._retrieve, queries)
            except Exception as e:  # a store failure must not end the round; the trace says why
                retrieval["error"] = f"{type(e).__name__}: {e}"
            if not record_retrieval(retrieval, chunks, ctx):
                turn.output = turn.response = exhausted_output(queries)
                return turn
            evidence = format_evidence(chunks, self.settings.evidence_max_chars)

        if role == "Researcher":
            output = self.researcher(queries, chunks, memory, inbox)
        elif role == "LeadArchitect":
            output = self.lead_architect(report, inbox)
        elif role == "DataAnalyst":
            output = self.data_analyst(inbox, memory)
        else:
            output = self.reviewer(report, inbox, memory)

        messages = turn_messages(
            role, plan, name, ctx, objective=objective, inbox=inbox, memory=memory, evidence=evidence
        )
        turn.prompt = list(messages)
        text = await self._call(ctx, rec, name, "agent", Composed(messages, output), self.settings.agent_max_tokens)
        if text is None:
            turn.error = own_call_error(rec, name)
            turn.output = ""
            return turn
        turn.output = turn.response = text
        if member.role.sets_objective:
            turn.objective = prompts.parse_objective(text) or None
        return turn

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

    # -- the roles' rules ----------------------------------------------------------
    def research_queries(self, topic: str, objective: str, inbox: Sequence[tuple[str, str]]) -> list[str]:
        """Deficiencies received, then headings received, then the objective; the topic when none."""
        wanted: list[str] = []
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
        self, queries: list[str], chunks: Sequence[Any], memory: str, inbox: Sequence[tuple[str, str]]
    ) -> str:
        """The retrieved sentences that share the most query terms, each with its source."""
        if not chunks:
            return ""
        wanted = set().union(*(stems(q) for q in queries)) if queries else set()
        known = [s for s, _ in facts(memory)] + [s for _, t in inbox for s, _ in facts(t)]
        candidates = []
        for rank, c in enumerate(chunks):
            label = f"{c.source}, p. {c.page}" if getattr(c, "page", None) is not None else str(c.source)
            for pos, sent in enumerate(prose_sentences(str(c.text))):
                if not is_prose(sent):
                    continue
                hits = len(wanted & stems(sent))
                candidates.append((-hits, rank, pos, sent, label))
        candidates.sort(key=lambda t: t[:3])
        fresh_first = [c for c in candidates if not any(near_duplicate(c[3], k) for k in known)] or candidates
        picked = dedup([(c[3], c[4]) for c in fresh_first])[:MAX_CANDIDATE_LINES]
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


class ExtractiveCollector:
    """The Collector's rules: a section from the appended facts, under the objective's heading."""

    def __init__(self, engine: ExtractiveEngine):
        self.engine = engine

    async def run(
        self,
        *,
        call,
        report: ReportState,
        contributions: Sequence[tuple[str, str]],
        objective: str,
        sources,
        revise_section: str | None = None,
        planned_title: str = "",  # the extractive team titles sections by its own rules
    ) -> CollectorResult:
        if not contributions:
            return CollectorResult("idle", "no agent appended")
        useful = [(a, t) for a, t in contributions if not is_absence_only(t)]
        if not useful:
            empty = all(not t.strip() for _, t in contributions)
            return CollectorResult("skipped", "empty input" if empty else "only absence markers")
        settings = self.engine.settings
        last = report.sections[-1].content if report.sections else ""
        items = dedup([f for _, t in useful for f in facts(t)], against=sentences(last))
        number = len(report.sections) + 1
        title = objective or f"Section {number}"
        prose = f"## {title}\n" + " ".join(s for s, _ in items)
        messages = prompts.collector_messages(
            topic=report.topic, objective=objective, last_section=last, contributions=useful
        )
        prose = await call("Collector", "collector", Composed(messages, prose), settings.collector_max_tokens)
        if prose is None:
            return CollectorResult("failed", "prose call failed")
        body = prose.split("\n", 1)[1] if "\n" in prose else ""
        filtered = filter_report_text(body)
        if not filtered.text.strip():
            return CollectorResult(
                "skipped",
                "nothing new to write" if not items else "nothing left after the report filter",
                removed_sentences=filtered.removed,
            )
        titles = [t for _, t, _ in report.list_sections()] + [title]
        first = sentences(filtered.text)[0] if sentences(filtered.text) else ""
        summary_text = f"The report covers {'; '.join(titles)}. {first}".strip()
        summary = await call(
            "Summarizer",
            "summarizer",
            Composed(
                prompts.summarizer_messages(previous_summary=report.progress_summary, addition=filtered.text),
                summary_text,
            ),
            settings.summary_max_tokens,
        )
        src = list(sources)
        title_text = filter_report_text(title).text or f"Section {number}"
        if revise_section is not None and revise_section in {s.id for s in report.sections}:
            section = report.replace_section(revise_section, filtered.text, sources=src)
            status = "revised"
        else:
            section = report.append(title_text, filtered.text, src)
            status = "appended"
        if summary:
            report.progress_summary = summary
        return CollectorResult(
            status,
            "" if summary is not None else "summary call failed; summary unchanged",
            section_id=section.id,
            title=section.title,
            removed_sentences=filtered.removed,
            content=section.content,
        )
