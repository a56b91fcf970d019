"""The extractive team's Collector: a section from the appended facts, under the objective's heading
(the rules: `agents_llm.extractive`). Its trace entry keeps what it received and the section it composed."""

from __future__ import annotations

from typing import Protocol, Sequence

from .. import prompts
from ..collector import CollectorResult
from ..engine.context import EngineSettings
from ..text.absence import is_absence_only
from ..text.split import sentences, words
from ..report_filter import filter_report_text
from ..report_state import ReportState
from ..sentence_reuse import MIN_BODY_WORDS, pick_source_sentences
from . import rules_v2
from .text import Composed, dedup, facts


class _Team(Protocol):
    """What the Collector reads of the extractive engine that owns it (`ExtractiveEngine`, which
    imports this module): its settings and which rules it runs."""

    settings: EngineSettings
    version: int


class ExtractiveCollector:
    """The Collector's rules: a section from the appended facts, under the objective's heading."""

    def __init__(self, engine: _Team):
        self.engine = engine
        self._draft: str | None = None

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
        """The round's section; the result records what the rules received and the section they composed
        (before the report filter), which the trace keeps in place of the prompt an LLM would have had."""
        self._draft = None
        result = await self._compose(
            call=call,
            report=report,
            contributions=contributions,
            objective=objective,
            sources=sources,
            revise_section=revise_section,
        )
        if contributions:
            result.inputs = {
                "contributions": [{"sender": a, "text": t} for a, t in contributions],
                "objective": objective,
                "revise_section": revise_section,
            }
            result.draft = self._draft
        return result

    async def _compose(
        self,
        *,
        call,
        report: ReportState,
        contributions: Sequence[tuple[str, str]],
        objective: str,
        sources,
        revise_section: str | None,
    ) -> CollectorResult:
        if not contributions:
            return CollectorResult("idle", "no agent appended")
        settings = self.engine.settings
        v2 = self.engine.version >= 2
        # v2 with engine.reuse_sources (the env config's default, as for the LLM team): what is too short
        # to be a section gives way to the pending source sentences, as the LLM Collector does.
        reuse = v2 and settings.reuses_sources
        src = list(sources)
        useful = [(a, t) for a, t in contributions if not is_absence_only(t)]
        empty = all(not t.strip() for _, t in contributions)
        # An appender with nothing to say is, for the LLM Collector, prose no source supports.
        if not useful and not (reuse and empty and any(r.text.strip() for r in src)):
            return CollectorResult("skipped", "empty input" if empty else "only absence markers")
        last = report.sections[-1].content if report.sections else ""
        number = len(report.sections) + 1
        title = objective or f"Section {number}"
        if v2:  # near-duplicates of anything the report says are dropped, not only of the last section
            earlier = [x for sec in report.sections if sec.id != revise_section for x in sentences(sec.content)]
            items = dedup([f for _, t in useful for f in facts(rules_v2.strip_markers(t))], against=earlier)
            prose = f"## {title}\n" + "\n".join(s for s, _ in items)  # a sentence a line: the cap cuts whole ones
        else:
            earlier = []
            items = dedup([f for _, t in useful for f in facts(t)], against=sentences(last))
            prose = f"## {title}\n" + " ".join(s for s, _ in items)
        messages = prompts.collector_messages(
            topic=report.topic, objective=objective, last_section=last, contributions=useful or contributions
        )
        prose = await call("Collector", "collector", Composed(messages, prose), settings.collector_max_tokens)
        self._draft = prose
        if prose is None:
            return CollectorResult("failed", "prose call failed")
        body = prose.split("\n", 1)[1] if "\n" in prose else ""
        # The proxy's recorded results were measured with HTML tags kept (`filter_report_text`).
        filtered = filter_report_text(" ".join(body.splitlines()) if v2 else body, drop_html_tags=False)
        text, reused = filtered.text, ""
        if reuse and len(words(text)) < MIN_BODY_WORDS:
            focus = " ".join([report.topic, objective] + [t for _, t in useful])
            picked = pick_source_sentences(src, focus=focus, exclude=earlier, keep_context=False, proxy_v2=True)
            picked = [x for x, _ in dedup([(x, "") for x in picked], against=earlier)]
            if picked:
                reused = "nothing new to write" if not text.strip() else f"too short ({len(words(text))} words)"
                text = filter_report_text(" ".join(picked), drop_html_tags=False).text
        if not text.strip():
            return CollectorResult(
                "skipped",
                "nothing new to write" if not items else "nothing left after the report filter",
                removed_sentences=filtered.removed,
            )
        titles = [t for _, t, _ in report.list_sections()] + [title]
        first = sentences(text)[0] if sentences(text) else ""
        summary_text = f"The report covers {'; '.join(titles)}. {first}".strip()
        summary = await call(
            "Summarizer",
            "summarizer",
            Composed(
                prompts.summarizer_messages(previous_summary=report.progress_summary, addition=text),
                summary_text,
            ),
            settings.summary_max_tokens,
        )
        title_text = filter_report_text(title, drop_html_tags=False).text or f"Section {number}"
        section, status = report.place(revise_section, title_text, text, src)
        if summary:
            report.progress_summary = summary
        return CollectorResult(
            status,
            "" if summary is not None else "summary call failed; summary unchanged",
            section_id=section.id,
            title=section.title,
            removed_sentences=filtered.removed,
            content=section.content,
            reused_sources=reused,
        )
