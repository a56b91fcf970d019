"""Sentence-level filter for text that goes into the report.

Small models leak their scaffolding into the prose: role names, markers such as
[RESEARCH_EXHAUSTED], talk about "the team" or "this round", and transitions that
promise a "next section". A reader must not see any of that, so a sentence that
carries such a phrase is dropped whole (rewriting it would need another LLM call).
Headings and the rest of each paragraph are kept. The removed sentences are returned
so the trace shows what was cut and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence
from .addressed_orders import continues_order, order_to_reader

# Phrases that only make sense inside the writing pipeline.
_JARGON = [
    r"lead architect",
    r"data analyst",
    r"\breviewer\b",
    r"\bresearcher\b",
    r"\bcollector\b",
    r"\bsummari[sz]er\b",
    r"\[[A-Z_]{4,}\]",
    # an evidence block's label ("[1] (dgram.md) ...", "[2] (spec.pdf, p. 3)"), copied from a prompt
    r"\[\d+\]\s*\([^()]*?(?:\.(?:md|pdf|html?|txt|docx)\b|, p\.)",
    r"\bNO_QUERY\b",
    r"evidence atoms?",
    r"state deficiency",
    r"global report state",
    r"current (?:team )?objective",
    r"current target",
    r"\bthe team\b",
    r"\bour team\b",
    r"\bmy team\b",
    r"\b(?:this|next|previous|current) (?:communication )?round\b",
    r"\bcommunication rounds?\b",
    r"\bRAG\b",
    r"knowledge base",
    r"retrieved (?:sources|chunks|documents)",
    r"\bthe sources? (?:provided|above)\b",
    r"\bmaterial (?:above|provided)\b",
    r"\bteam reward\b",
    r"\bappend(?:ed|ing)? to the report\b",
    # the handcrafted pipeline's tags and sentinels, also when echoed without their brackets
    r"SECTION_ID",
    r"\b(?:SECTION_COMPLETE|SECTION_SKIPPED|CORRECTION_APPLIED|DRAFTING_COMPLETE|REVISION_COMPLETE)\b",
    r"\bASSIGN NEXT (?:SECTION|CORRECTION)\b",
    r"\bas an ai\b",
    r"\blanguage model\b",
    r"\bhere is (?:the|a|my) (?:draft|section|report|summary)\b",
    r"\bI (?:will|have|can|would)\b",
    r"\bsure[,!]",
    r"\b(?:the|my|our|your) task\b",
    r"\bfactual draft\b",
    r"\bformal style\b",
    r"\bwritten in a formal\b",
]
# Transitions that announce what comes next instead of saying something.
_TRANSITIONS = [
    r"\b(?:in|within) the (?:next|following|upcoming|subsequent) sections?\b",
    r"\b(?:next|following|upcoming|subsequent) sections? (?:will|would|shall|discuss|covers?|explores?|examines?)\b",
    r"\b(?:we|this report) will (?:now )?(?:discuss|explore|examine|look at|turn to|cover)\b",
    r"\blet(?:'s| us) (?:now )?(?:move on|turn|dive|explore|look)\b",
    r"\bstay tuned\b",
    r"\bmore on this later\b",
]
# A sentence about the report, or a document's sentence about itself ("This section describes
# ..."): in a report it says nothing about the subject, and a quoted one points at the wrong text.
_SELF_REFERENCE = [
    r"^\W*(?:the|this|our) report\b",
    # "The new report is: <a quoted sentence>": the writer announcing its own text
    r"^\W*(?:the|this|our) (?:new|next|final|updated|revised|complete|whole) (?:report|section|draft|summary)\b",
    r"^\W*this (?:section|chapter|document|paper|manual|page)\b",
    # "The purpose of this report is to ensure ...": what the text is for, not what the subject is
    r"^\W*(?:the )?(?:purpose|aim|goal|scope|focus|objective|intent)s? of (?:this|the|our) (?:report|section|draft)\b",
    r"^\W*in this (?:report|section|chapter|document|paper|manual)\b",
]
_PATTERNS = [("jargon", re.compile(p, re.IGNORECASE)) for p in _JARGON] + [
    ("transition", re.compile(p, re.IGNORECASE)) for p in _TRANSITIONS
]
# Markers are case-sensitive (a bracketed uppercase token); recompile that one strictly.
_PATTERNS[_JARGON.index(r"\[[A-Z_]{4,}\]")] = ("jargon", re.compile(r"\[[A-Z_]{4,}\]"))

_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\bp\.)(?<!\bpp\.)\s+(?=[A-Z0-9\"'(\[*])")  # not after "p. 3"


@dataclass
class FilterResult:
    text: str
    removed: list[dict] = field(default_factory=list)  # {"sentence", "kind", "match"}

    @property
    def changed(self) -> bool:
        return bool(self.removed)


_SELF_PATTERNS = [("self_reference", re.compile(p, re.IGNORECASE)) for p in _SELF_REFERENCE]


def _offending(sentence: str, patterns=_PATTERNS, *, quoted: bool = False) -> tuple[str, str] | None:
    for kind, pattern in patterns:
        if quoted and kind == "jargon":
            continue  # a document's "Reviewer approval is required" is its statement, not our scaffolding
        m = pattern.search(sentence)
        if m:
            return kind, m.group(0)
    if "[neutralised" in sentence:  # the guard's mark: what it stands in for was an order
        return "order:neutralised", sentence.strip()[:40]
    order = order_to_reader(sentence)  # an order to a model, or no language: never report text
    return (f"order:{order}", sentence.strip()[:40]) if order else None


# An HTML tag a writer left in its prose ("<p>The hook can be used ...") renders as markup, or as
# nothing, in a Markdown report; an image or a script tag would fetch or run. Only HTML's own tag
# names: a man page's "git rev-parse <ref>" or "PKT-LINE(ok <ref>)" is text.
_HTML_TAG = re.compile(
    r"</?(?:p|br|div|span|img|a|b|i|u|em|strong|code|pre|ul|ol|li|h[1-6]|table|thead|tbody|tr|td|th|script|"
    r"style|iframe|sup|sub|font|blockquote|hr|section|article|header|footer|nav|center|small|big|object|embed|"
    r"svg|video|audio|source|link|meta)\b[^<>]{0,300}/?>",
    re.IGNORECASE,
)


def filter_report_text(
    text: str, *, self_reference: bool = False, quoted_from: Sequence[str] = (), drop_html_tags: bool = True
) -> FilterResult:
    """Drop every HTML tag, and every sentence with pipeline jargon or a 'next section' transition; with
    `self_reference`, also every sentence about the report or the document it was quoted from
    (a section's text; not a progress summary, which is about the report).

    `quoted_from`: the source texts a section quotes. The jargon list catches the writer's
    scaffolding ("the team", "Reviewer", "the task"); a sentence that stands word for word in
    one of them is the document's own statement ("The task list in the appendix covers the
    yearly inspections.") and is not held to it. Orders, transitions and self-reference still
    count: a document's order is no statement, and its "next section" is not the report's.

    `drop_html_tags`: False keeps them, for the extractive proxy, whose recorded results were
    measured before tags were dropped (the default corpus's package READMEs hold 382 of them).
    """
    patterns = _PATTERNS + _SELF_PATTERNS if self_reference else _PATTERNS
    sources = [" ".join(t.split()) for t in quoted_from]
    removed: list[dict] = []
    out_lines: list[str] = []
    seen: set[str] = set()  # a small model at temperature 0 repeats itself; keep the first copy
    for line in text.splitlines():
        stripped = line.strip()
        tag = _HTML_TAG.search(stripped) if drop_html_tags else None
        if tag is not None:
            removed.append({"sentence": stripped, "kind": "html_tag", "match": tag.group(0)[:40]})
            stripped = _HTML_TAG.sub("", stripped).strip()
        if not stripped:
            out_lines.append("")
            continue
        if stripped.startswith("#"):
            # A heading is kept unless it is scaffolding itself ("## Researcher notes").
            hit = _offending(stripped, patterns)
            if not re.search(r"\w", stripped) or stripped.lower() in seen:
                removed.append({"sentence": stripped, "kind": "empty_or_repeated_heading", "match": stripped[:40]})
            elif hit:
                removed.append({"sentence": stripped, "kind": hit[0], "match": hit[1]})
            else:
                seen.add(stripped.lower())
                out_lines.append(stripped)
            continue
        kept = []
        previous_order = False
        for sentence in _SENTENCE_END.split(stripped):
            flat = " ".join(sentence.split())
            hit = _offending(sentence, patterns, quoted=bool(flat) and any(flat in source for source in sources))
            if hit is None and continues_order(sentence, previous_order):
                hit = ("order:continues", sentence.strip()[:40])
            previous_order = hit is not None and hit[0].startswith("order:")
            norm = " ".join(re.findall(r"\w+", sentence.lower()))
            if hit:
                removed.append({"sentence": sentence, "kind": hit[0], "match": hit[1]})
            elif norm and norm in seen:
                removed.append({"sentence": sentence, "kind": "repetition", "match": sentence.strip()[:40]})
            elif sentence.strip():
                seen.add(norm)
                kept.append(sentence.strip())
        if kept:
            out_lines.append(" ".join(kept))
    cleaned = re.sub(r"\n{3,}", "\n\n", "\n".join(out_lines)).strip()
    # A reply cut by max_tokens ends mid-sentence: drop the fragment when a full sentence precedes it.
    m = re.search(r"(?<=[.!?])\s+([^.!?#\n][^.!?]*)$", cleaned)
    if m and len(m.group(1).split()) >= 1 and not cleaned.endswith((".", "!", "?", ")", '"')):
        removed.append({"sentence": m.group(1), "kind": "fragment", "match": m.group(1)[:40]})
        cleaned = cleaned[: m.start(1)].rstrip()
    return FilterResult(cleaned, removed)
