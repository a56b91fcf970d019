"""The Collector: turns what agents appended into report text.

Two LLM calls per append: a prose call that writes the section, then a Summarizer call
that updates the progress summary. It does nothing when nothing reached it, or when
every message is only absence markers ("[RESEARCH_EXHAUSTED]", "not found", ...): the
original's lesson is that meta-talk about missing evidence must never become report
text. The prose passes the sentence-level report filter; the sources gathered since
the last append are flushed into the new section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Iterable, Sequence

from . import prompts
from .judges.text import sentences, words
from .referee import echoed_sentences, repeated_sentences
from .report_filter import filter_report_text
from .sentence_reuse import (
    MeaningCheck,
    MIN_BODY_WORDS,
    cited_passages,
    content_stems,
    drop_fragments,
    ground_in_sources,
    pick_source_sentences,
    title_from,
    why_reuse,
)
from .report_state import ReportState, SourceRef
from rag.sources import dedup_sources
from report_protocol.vocabulary import ABSENCE_LEADERS

# The protocol's absence markers (report_protocol.vocabulary), as the model may write them.
_MARKERS = "|".join(
    (r"\b" if m[0].isalnum() else "") + re.escape(m) + (r"\b" if m[-1].isalnum() else "") for m in ABSENCE_LEADERS
)
# A line made only of these says "there is nothing", not "here is something".
_ABSENCE = re.compile(
    _MARKERS + r"|\bstate deficiency\b|\bnot found\b|\bno data\b|"
    r"\bno (?:relevant )?(?:information|evidence|sources?)\b|\bunavailable\b|\babsent\b|\bnothing relevant\b",
    re.IGNORECASE,
)

# A line that opens with a marker declares absence, whatever detail follows (the queries tried).
_MARKER_FIRST = re.compile(r"^\W*(?:" + _MARKERS + ")")

# (agent, kind, messages, max_tokens) -> text, or None when the call failed (already recorded).
CallFn = Callable[[str, str, list, int], Awaitable["str | None"]]


def is_absence_only(text: str) -> bool:
    """True when every non-empty line is an absence marker (or the text is empty)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return True
    return all(
        _MARKER_FIRST.match(ln) or (_ABSENCE.search(ln) and len(_ABSENCE.sub("", ln).strip(" .:-*[]()")) < 40)
        for ln in lines
    )


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


# Wrappers a small model puts around a heading ("<<Report: ...>>", "**...**", quotes), and
# labels it writes before one: neither belongs in the report's heading.
_TITLE_WRAPPERS = (("<<", ">>"), ("\u00ab", "\u00bb"), ("<", ">"), ("[", "]"), ("(", ")"), ("{", "}"),
                   ("**", "**"), ("__", "__"), ("*", "*"), ("_", "_"), ('"', '"'), ("'", "'"), ("`", "`"),
                   ("\u201c", "\u201d"))  # fmt: skip
_TITLE_LABEL = re.compile(
    r"^(?:report(?:\s+topic)?|title|heading|topic|section(?:\s+\d+)?)\s*[:\-\u2013\u2014]\s*", re.I
)

# An outline's numbering ("1 What is libffi?", "2.3. Magic rules", "4) Closures"): the report
# numbers nothing, so a number before the words is the outline's, not the heading's.
_OUTLINE_NUMBER = re.compile(r"^\d{1,2}(?:\.\d{1,2})*[.)]?\s+(?=[A-Za-z])")  # a year is no outline number

# The evidence a writer that sees it gets (`writer_sees_evidence`): the source passages' best
# sentences for the section, as many as a small model's prompt holds beside the rest.
EVIDENCE_SENTENCES = 6
EVIDENCE_CHARS = 1200
_PRONOUN_OPENERS = frozenset("it its this these they their such that those he she we".split())


def clean_title(title: str, topic: str) -> str:
    """``title`` without wrappers and a leading label; "" when what is left is empty or the
    report's topic itself (the report's own heading says that already)."""
    t, before = title, None
    while t != before:
        before = t
        t = t.strip().lstrip("#").strip()
        t = _TITLE_LABEL.sub("", t)
        t = _OUTLINE_NUMBER.sub("", t)
        for opener, closer in _TITLE_WRAPPERS:
            if len(t) > len(opener) + len(closer) and t.startswith(opener) and t.endswith(closer):
                t = t[len(opener) : -len(closer)]
                break
    if not words(t) or words(t) == words(topic):
        return ""
    return t


# A heading restates the task when it names this share of the topic's content words, and this
# share of its own are the topic's.
RESTATED_TOPIC_SHARE = 0.6
RESTATED_TITLE_SHARE = 0.8


def restates(title: str, topic: str) -> bool:
    """Does ``title`` restate the topic (most of the topic's content words and little else),
    or say nothing ("2.")?"""
    stems, topic_stems = content_stems(title), content_stems(topic)
    if not stems:
        return True
    shared = len(stems & topic_stems)
    # The whole topic, with little else: "Creating virtual environments" under "Creating and
    # activating virtual environments" is a part of it, not a restatement.
    return (
        bool(topic_stems)
        and shared / len(topic_stems) >= RESTATED_TOPIC_SHARE
        and shared / len(stems) >= RESTATED_TITLE_SHARE
    )


# What a small model writes where a heading goes that is no heading: a code fence or HTML tag
# ("```python", "pre><code"), or talk about the report, the task or itself ("Here's a possible
# start to the report:", "The report is now ready to be sent.", "This task will be completed ...").
_MARKUP_TITLE = re.compile(r"`{3}|</?[A-Za-z][\w-]*>|\w><|<[A-Za-z][\w-]*$")
_CHATTER_TITLE = re.compile(
    r"^(?:here(?:'s|\s+is|\s+are)|sure|certainly|okay|below|the following|please|let me|i (?:will|have|am|can)"
    r"|in this (?:section|report)|this (?:is|task|report|section|will))\b"
    r"|\b(?:the|this|our) report\b|\b(?:this|next|following) section\b|\bthis task\b|\bbullet points?\b",
    re.IGNORECASE,
)
# An order to the writer, from an outline written as a to-do list ("Briefly introduce the
# database and its purpose.", "Write a detailed section on ..."): what to write, not what it is.
_INSTRUCTION_TITLE = re.compile(
    r"^(?:briefly\s+|then\s+|now\s+)?(?:write|describe|explain|discuss|introduce|summari[sz]e|elaborate|"
    r"outline|present|mention|highlight|provide\s+(?:an?\s+|the\s+)?(?:overview|introduction|summary|"
    r"explanation|description|example))\b"
    r"|^(?:an?\s+)?brief\s+(?:overview|introduction|summary|description)\s+of\b.*\.$",
    re.IGNORECASE,
)
# A lone word that labels a code block or the document's parts, not what a section is about.
_LABEL_WORDS = frozenset("script python code pre text json bash shell console output example report section".split())


def not_a_heading(title: str) -> str:
    """Why ``title`` is no heading ("" when it may be one): markup, talk about the report or
    the task, an introduction (ends with a colon), an instruction to the writer, or a lone
    label word."""
    t = title.strip()
    if _MARKUP_TITLE.search(t):
        return "markup"
    if _CHATTER_TITLE.search(t):
        return "talk about the report or the task"
    if t.endswith(":"):
        return "an introduction to something else"
    if _INSTRUCTION_TITLE.search(t) and (t.endswith(".") or len(words(t)) >= 5):
        return "an instruction to the writer"
    if len(words(t)) == 1 and words(t)[0] in _LABEL_WORDS:
        return "a label"
    return ""


_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)[\s#]*$")
_SIGNATURE = re.compile(r"^((?:class\s+)?[\w.]+)\s*\(.*\)\s*$")  # "inspect.getsourcelines(object)"


def _short_heading(heading: str, max_chars: int = 80) -> str:
    h = heading.strip().strip("`*_ ").strip()
    m = _SIGNATURE.match(h)
    if m:  # an API entry's heading: the name says what the section is about, the arguments do not
        h = m.group(1)
    return h if len(h) <= max_chars else title_from(h)


def document_heading(body: str, passages: Sequence[SourceRef]) -> str:
    """The heading the documents give to what ``body`` quotes: the Markdown heading above the
    first of its sentences found under one in ``passages`` (a chunk keeps its document's heading
    lines); "" when none is (text before a chunk's first heading belongs to a heading it lacks)."""
    said = [" ".join(words(s)) for s in sentences(body)]
    said = [s for s in said if len(s.split()) >= 3]
    for ref in passages:
        heading, block = "", []
        for line in ref.text.splitlines() + ["# (end of passage)"]:
            m = _MD_HEADING.match(line)
            if not m:
                block.append(line)
                continue
            if heading and block:
                norm = " ".join(words(" ".join(block)))
                if any(s in norm for s in said):
                    return _short_heading(heading)
            heading, block = m.group(1), []
    return ""


def split_inner_headings(body: str) -> tuple[str, str]:
    """(the heading ``body`` opens on, or "", the body with its own headings one level below a
    section's): a writer that puts "## Overview" inside its section would otherwise start
    sections of its own in the report, and the heading it opens on is what the section is about."""
    lines = body.strip().splitlines()
    first = ""
    if lines:
        m = _MD_HEADING.match(lines[0])
        if m:
            first, lines = m.group(1).strip(), lines[1:]
    out = [re.sub(r"^\s{0,3}#{1,3}\s+", "### ", line) for line in lines]
    return first, "\n".join(out).strip()


_PLACEHOLDER_TITLE = re.compile(r"^section \d+$", re.IGNORECASE)


def section_title(candidates: Iterable[str], topic: str, fallback: str, taken: Iterable[str] = ()) -> str:
    """The first of ``candidates`` that :func:`clean_title` keeps, that is a heading at all
    (:func:`not_a_heading`), does not echo our prompts (an objective parsed from an echoed
    instruction is one), does not restate the topic and is not the heading of another section
    (``taken``), else ``fallback``."""
    used = {" ".join(words(t)) for t in taken}
    for candidate in candidates:
        title = clean_title(candidate, topic)
        if (
            title
            and not _PLACEHOLDER_TITLE.match(title)  # a fallback of an earlier step, not a title
            and not not_a_heading(title)
            and echoed_sentences(title, topic=topic)[0] == 0  # the topic's words aside, not our instructions
            and not restates(title, topic)
            and " ".join(words(title)) not in used
        ):
            return title
    return fallback


class Collector:
    def __init__(
        self,
        *,
        prose_max_tokens: int = 192,
        summary_max_tokens: int = 80,
        reuse_sources: bool = False,
        meaning: Callable[[], MeaningCheck | None] | None = None,
        writer_sees_evidence: bool = False,
    ):
        self.prose_max_tokens = prose_max_tokens
        self.summary_max_tokens = summary_max_tokens
        self.reuse_sources = reuse_sources  # agents_llm.sentence_reuse: source sentences stand in for junk prose
        # The check by meaning for grounding (None: by words alone); a function, since the
        # embedding is the retriever's, which the env sets per task.
        self.meaning = meaning
        # The writer gets the sentences of the passages its section will cite (and be grounded
        # in), not only what teammates relayed: without them it can only invent or echo.
        self.writer_sees_evidence = writer_sees_evidence

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
        evidence: list[str] = []
        if self.writer_sees_evidence:
            said = [s for sec in report.sections if sec.id != revise_section for s in sentences(sec.content)]
            focus = " ".join([report.topic, objective, planned_title, *(t for _, t in useful)])
            evidence = pick_source_sentences(
                src, focus=focus, exclude=said, max_sentences=EVIDENCE_SENTENCES, max_chars=EVIDENCE_CHARS
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
        filtered = filter_report_text(body)
        title_filtered = filter_report_text(title).text or f"Section {section_number}"
        text, reused, grounding = filtered.text, "", ""
        if self.reuse_sources:
            earlier = [s for sec in report.sections if sec.id != revise_section for s in sentences(sec.content)]
            source_texts = [r.text for r in src if r.text.strip()]
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
                picked = pick_source_sentences(src, focus=f"{report.topic} {objective} {text}", exclude=earlier)
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
            # The check: no sentence quoted from a source may start mid-way through one there.
            text, fragments = drop_fragments(text, source_texts)
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

        summary = await call(
            "Summarizer",
            "summarizer",
            prompts.summarizer_messages(previous_summary=report.progress_summary, addition=text),
            self.summary_max_tokens,
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
