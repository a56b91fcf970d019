"""The Collector: turns what agents appended into report text.

Two LLM calls per append: a prose call that writes the section, then a Summarizer call
that updates the progress summary (skipped with ``summarize=False``). It does nothing when nothing reached it, or when
every message is only absence markers ("[RESEARCH_EXHAUSTED]", "not found", ...): the
original's lesson is that meta-talk about missing evidence must never become report
text. The prose passes the sentence-level report filter; the sources gathered since
the last append are flushed into the new section.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Awaitable, Callable, Iterable, Sequence

from . import prompts
from .text.split import sentences, words
from .prompt_echo import echoed_sentences
from .report_filter import filter_report_text
from .grounding import MeaningCheck, ground_in_sources
from .sentence_reuse import (
    MIN_BODY_WORDS,
    cited_passages,
    drop_fragments,
    pick_source_sentences,
    statement_text,
    title_from,
    why_reuse,
)
from .report_state import ReportState, SourceRef
from .section_examples import with_example
from .section_headings import document_heading, restates, section_title, split_inner_headings
from .text.absence import is_absence_only
from .text.repetition import repeated_sentences
from rag.sentences import split_sentences
from rag.sources import dedup_sources, sources_under_heading

# (agent, kind, messages, max_tokens) -> text, or None when the call failed (already recorded).
CallFn = Callable[[str, str, list, int], Awaitable["str | None"]]


def _top_up(text: str, src: Sequence[SourceRef], *, about: str, focus: str, earlier: Sequence[str]) -> tuple[str, int]:
    """`text` with sentences of its heading's passage added after it when it holds fewer than
    MIN_SECTION_SENTENCES, and how many were added. Only a section written from its heading's
    passage is topped up: that passage is what the heading heads, so its sentences belong there;
    search hits may not. Sentences are counted and compared as the passage's are cut
    (`rag.sentences`): the quick split runs "normcase(). fnmatchcase() can be used ..." into one,
    and the passage's own "fnmatchcase() can be used ..." would then be added again."""
    have = split_sentences(text)
    if not about or len(have) >= MIN_SECTION_SENTENCES or not any(r.heading for r in src):
        return text, 0
    said = [part for sentence in earlier for part in split_sentences(sentence)]
    more = pick_source_sentences(  # not a sentence the section already says in nearly the same words
        src,
        focus=focus,
        exclude=[*said, *have],
        about=about,
        max_sentences=MIN_SECTION_SENTENCES - len(have),
        near_repeats=True,
    )
    return (" ".join([text.strip(), *more]).strip(), len(more)) if more else (text, 0)


@dataclass
class CollectorResult:
    status: str  # appended | revised | skipped | failed | idle
    reason: str = ""
    section_id: str | None = None
    title: str = ""
    removed_sentences: list[dict] = field(default_factory=list)
    content: str | None = None  # the section's text as written (appended or revised), after the report filter
    reused_sources: str = ""  # why the writer's prose gave way to source sentences ("" = it was kept)
    grounding: str = ""  # what grounding the kept prose sentence by sentence changed ("" = nothing)
    # The extractive team's Collector: what it received ({contributions [{sender, text}], objective}); None
    # for the LLM team. `draft`: the section before the report filter and grounding (the extractive rules'
    # composition, or the writer model's prose as it wrote it), so the trace shows what the checks changed.
    inputs: dict | None = None
    draft: str | None = None

    def as_dict(self) -> dict:
        extra: dict = {} if self.inputs is None else {"inputs": self.inputs}
        if self.inputs is not None or self.draft is not None:
            extra["draft"] = self.draft
        return {
            **extra,
            "status": self.status,
            "reason": self.reason,
            "section_id": self.section_id,
            "title": self.title,
            "removed_sentences": self.removed_sentences,
            "content": self.content,
            "reused_sources": self.reused_sources,
            "grounding": self.grounding,
        }


def _split_title(text: str, fallback: str) -> tuple[str, str]:
    lines = text.strip().splitlines()
    if lines and lines[0].lstrip().startswith("#"):
        title = lines[0].lstrip("# ").strip()
        body = "\n".join(lines[1:]).strip()
        if title:
            return title[:120], body
    return fallback[:120], text.strip()


# The evidence a writer that sees it gets (`writer_sees_evidence`): the source passages' best
# sentences for the section, as many as a small model's prompt holds beside the rest.
EVIDENCE_SENTENCES = 6
EVIDENCE_CHARS = 1200
# A section under a document heading holds at least this many sentences when its passage has them:
# grounding can leave the writer's one supported sentence, and the passage says more.
MIN_SECTION_SENTENCES = 3
_PRONOUN_OPENERS = frozenset("it its this these they their such that those he she we".split())


class Collector:
    def __init__(
        self,
        *,
        prose_max_tokens: int = 192,
        summary_max_tokens: int = 80,
        reuse_sources: bool = False,
        meaning: Callable[[], MeaningCheck | None] | None = None,
        writer_sees_evidence: bool = False,
        section_about_title: bool = False,
        summarize: bool = True,
    ):
        self.prose_max_tokens = prose_max_tokens
        # The progress summary feeds later rounds' prompts; a plan with none after drafting skips it.
        self.summarize = summarize
        self.summary_max_tokens = summary_max_tokens
        self.reuse_sources = reuse_sources  # agents_llm.sentence_reuse: source sentences stand in for junk prose
        # The check by meaning for grounding (None: by words alone); a function, since the
        # embedding is the retriever's, which the env sets per task.
        self.meaning = meaning
        # The writer gets the sentences of the passages its section will cite (and be grounded
        # in), not only what teammates relayed: without them it can only invent or echo.
        self.writer_sees_evidence = writer_sees_evidence
        # A section the plan names is written from the source sentences naming its title's words first.
        self.section_about_title = section_about_title

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
    ) -> CollectorResult:
        """Append (or revise) one section from `contributions` ((agent, text) pairs).

        `planned_title`: the outline's title for this section (the plan's directive), the
        heading it gets unless it restates the topic, echoes an instruction or is taken.

        `sources` is only consumed (flushed) when a section is written; on a skip the
        caller keeps them for the next append.
        """
        if not contributions:
            return CollectorResult("idle", "no agent appended")
        useful = [(a, t) for a, t in contributions if not is_absence_only(t)]
        if not useful:
            empty = all(not t.strip() for _, t in contributions)
            return CollectorResult("skipped", "empty input" if empty else "only absence markers")

        last = report.sections[-1].content if report.sections else ""
        src = list(sources)
        revised = next((sec for sec in report.sections if sec.id == revise_section), None)
        if revised is not None:
            # A revision keeps citing the section's passages: it is written from, and grounded in,
            # them as well as in what was retrieved since (often nothing).
            src = dedup_sources([*revised.sources, *src])
        about = (planned_title or (revised.title if revised is not None else "")) if self.section_about_title else ""
        if about:
            src = sources_under_heading(src, about)
        if self.reuse_sources and not any(r.text.strip() for r in src):
            # Every written sentence must rest on evidence the appenders hold (agents_llm.engine.evidence):
            # with none, nothing they write can be grounded, so the model is not even asked.
            return CollectorResult("skipped", "the appenders hold no evidence to write it from")
        evidence: list[str] = []
        if self.writer_sees_evidence:
            said = [s for sec in report.sections if sec.id != revise_section for s in sentences(sec.content)]
            focus = " ".join([report.topic, objective, planned_title, *(t for _, t in useful)])
            evidence = pick_source_sentences(
                src, focus=focus, exclude=said, max_sentences=EVIDENCE_SENTENCES, max_chars=EVIDENCE_CHARS, about=about
            )
        prose = await call(
            "Collector",
            "collector",
            prompts.collector_messages(
                topic=report.topic, objective=objective, last_section=last, contributions=useful, evidence=evidence
            ),
            self.prose_max_tokens,
        )
        if prose is None:
            return CollectorResult("failed", "prose call failed")
        prose = prompts.strip_echo(prose) or prose
        section_number = len(report.sections) + 1
        title, body = _split_title(prose, objective or f"Section {section_number}")
        filtered = filter_report_text(body, self_reference=True)
        title_filtered = filter_report_text(title).text or f"Section {section_number}"
        text, reused, grounding = filtered.text, "", ""
        if self.reuse_sources:
            earlier = [s for sec in report.sections if sec.id != revise_section for s in sentences(sec.content)]
            # Each passage as its document reads it: a chunk cut inside an order's paragraph grounds nothing of it.
            source_texts = [t for t in map(statement_text, src) if t.strip()]
            reason = why_reuse(text, title_filtered, source_texts, earlier)
            if reason is None and restates(text, report.topic):  # "<<the topic>>" is no section
                reason = "restates the topic"
            if reason is None and source_texts:
                meaning = self.meaning() if self.meaning is not None else None
                grounded, grounding = ground_in_sources(text, source_texts, exclude=earlier, meaning=meaning)
                if grounding and len(words(grounded)) < MIN_BODY_WORDS:
                    reason = f"no sentence of it is supported by one source sentence ({grounding})"
                    grounding = ""
                else:
                    text = grounded
            if reason:
                picked = pick_source_sentences(
                    src, focus=f"{report.topic} {objective} {text}", exclude=earlier, about=about
                )
                if not picked:
                    return CollectorResult(
                        "skipped",
                        f"the prose {reason}, and no source sentence fits",
                        removed_sentences=filtered.removed,
                        draft=prose,
                    )
                text, reused = " ".join(picked), reason
                if echoed_sentences(title_filtered)[0] > 0 or title_filtered.lower() in {
                    s.title.lower() for s in report.sections if s.id != revise_section
                }:
                    title_filtered = title_from(picked[0])
            text, topped = _top_up(text, src, about=about, focus=f"{report.topic} {objective}", earlier=earlier)
            if topped:
                grounding = "; ".join(x for x in (grounding, f"{topped} sentence(s) of its passage added") if x)
            # The check: no sentence quoted from a source may start mid-way through one there.
            text, fragments = drop_fragments(text, source_texts)
            # A quoted sentence about its own document ("This section describes ...") points at the wrong text.
            quoted = filter_report_text(text, self_reference=True, quoted_from=source_texts)
            text = quoted.text
            filtered.removed.extend(quoted.removed)
            if fragments:
                grounding = "; ".join(
                    x
                    for x in (grounding, f"{len(fragments)} quoted fragment(s) that begin no source sentence dropped")
                    if x
                )
        if not text.strip():
            return CollectorResult(
                "skipped", "nothing left after the report filter", removed_sentences=filtered.removed, draft=prose
            )
        heading_sources = src
        if self.reuse_sources:
            src = cited_passages(text, src)  # the section cites the passages its sentences come from
        # A heading from a sentence that opens on a pronoun ("It runs ...") does not say what it is about.
        said = sentences(text)
        opener = next((x for x in said if x.split()[0].lower() not in _PRONOUN_OPENERS), said[0] if said else "")
        others = [s for s in report.sections if s.id != revise_section]
        # Quoted sentences are headed by their documents' heading rather than the writer's, whose prose
        # gave way; the writer's heading comes first when its own prose stands.
        from_documents = document_heading(text, src) if self.reuse_sources else ""
        writers = [title_filtered, from_documents] if not reused else [from_documents, title_filtered]
        opening, text = split_inner_headings(text)
        title_filtered = section_title(
            [planned_title, *writers, opening, objective, title_from(opener) if opener else ""],
            report.topic,
            f"Section {section_number}",
            taken=[s.title for s in others],
        )
        if opening and " ".join(words(opening)) != " ".join(words(title_filtered)):
            text = f"### {opening}\n\n{text}"  # it opened a part of the section, not the section
        # No two sections share their text: one that mostly repeats another is not written.
        if others and self.reuse_sources:
            share, _ = repeated_sentences(text, [x for s in others for x in sentences(s.content)])
            if share >= 0.5:
                return CollectorResult(
                    "skipped", "it repeats a section of the report", removed_sentences=filtered.removed, draft=prose
                )

        if self.reuse_sources and about:
            # The document's own example under the heading (a command, a few lines of use), after the sentences.
            text, example_from = with_example(text, heading_sources, about)
            if example_from is not None:
                src = dedup_sources(src, [example_from])
                grounding = "; ".join(x for x in (grounding, "the passage's code example added") if x)
        summary = (
            await call(
                "Summarizer",
                "summarizer",
                prompts.summarizer_messages(previous_summary=report.progress_summary, addition=text),
                self.summary_max_tokens,
            )
            if self.summarize
            else ""
        )
        section, status = report.place(revise_section, title_filtered, text, src)
        if summary is not None and summary.strip():
            # The summary is internal memory, but it reaches prompts: keep it jargon-free too.
            report.progress_summary = filter_report_text(summary).text or report.progress_summary
        return CollectorResult(
            status,
            "" if summary is not None else "summary call failed; summary unchanged",
            section_id=section.id,
            title=section.title,
            removed_sentences=filtered.removed,
            content=section.content,
            reused_sources=reused,
            grounding=grounding,
            draft=prose,
        )
