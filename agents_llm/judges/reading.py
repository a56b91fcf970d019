"""What the reference judge reads in a report: its content sentences (prose, no headings,
code or markup), whether a sentence is our own prompt coming back, and the per-sentence and
per-section readings (`SentenceGrounding`, `SectionReading`) its components are computed from."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from ..text.markup import markup_profile
from ..text.split import sentences, words

EmbedFn = Callable[[list[str]], np.ndarray]
MAX_HEADING_WORDS = 15  # a line starting with '#' and longer than this is text pasted after a heading, not one


def as_embed_fn(embed: Any) -> EmbedFn:
    """Accept a callable list[str] -> 2-D array, or an object with `embed_documents` (rag's embeddings)."""
    if hasattr(embed, "embed_documents"):
        return embed.embed_documents
    if callable(embed):
        return embed
    raise TypeError(f"embed must be a callable list[str] -> array or have embed_documents, got {type(embed).__name__}")


def content_sentences(text: str, min_words: int = 3) -> list[str]:
    """The sentences of a section's text that carry content: its prose (see `_content_sentences`)."""
    return list(_content_sentences(text, min_words))


@lru_cache(maxsize=20_000)
def _content_sentences(text: str, min_words: int) -> tuple[str, ...]:
    """The sentences of a section's text that carry content: its prose.

    Markdown headings are structure, not content; code and markup (tags, fences, code
    lines: `text.markup.markup_profile`) are not prose, and a section that is mostly code
    or markup carries no content at all (copied code shares every word with the chunk it
    came from, so grounding alone would pay for it).
    """
    profile = markup_profile(text)
    if profile.is_markup:
        return ()
    return tuple(s for s in sentences(profile.prose) if not s.lstrip().startswith("#") and len(words(s)) >= min_words)


@lru_cache(maxsize=50_000)
def is_echo(sentence: str, topic: str) -> bool:
    """Whether `sentence` is our own prompt instructions coming back (the referee's `echo_reason`)."""
    from ..prompt_echo import echo_reason  # the referee's echo rule: one definition of "our prompt coming back"

    return echo_reason(sentence, topic=topic) is not None


@dataclass(frozen=True)
class SentenceGrounding:
    """How well one sentence is anchored in the chunks it cites.

    `similarity`: best cosine to the evidence (each cited chunk and its sentences), or
    None when nothing with text is cited. `grounded`: that similarity on the judge's band,
    in [0, 1] (0 when nothing is cited or the sentence contradicts the cited text).
    `evidence`: the best-matching evidence text.
    """

    sentence: str
    similarity: float | None
    grounded: float
    evidence: str = ""
    # The conflict with the cited text (`judges.agreement`: "number", "negation", ...), or "" when none:
    # a sentence that contradicts its source is not grounded in it, however close it reads.
    conflict: str = ""


@dataclass(frozen=True)
class SectionReading:
    """What the judge reads in one section: its sentences' grounding, how far the section is
    about the report's topic (`topicality`, in [0, 1]) and each sentence's `credit`: grounding
    times topicality, full at `support_level` (see ReferenceJudge), 0 for a sentence that is our
    own prompt instructions coming back (the referee's `echo_reason`) or that only restates the
    report's headings, negative for one that contradicts its source."""

    grounded: list[SentenceGrounding]
    topicality: float
    credit: list[float]
    # Each sentence's topicality: the section's, or that of the evidence it restates where higher (a
    # sentence grounded in an on-topic passage is on topic in whatever words it says it). Empty: the section's.
    sentence_topicality: list[float] = field(default_factory=list)


def outline_stems(report: Any) -> frozenset[str]:
    """The stems of the report's outline: its topic, its section titles and the Markdown headings inside its
    sections. A sentence that says nothing beyond them (a bullet repeating a heading) has no body."""
    from ..text.terms import stems_of

    heads = [report.topic] + [sec.title for sec in report.sections]
    heads += [
        line
        for sec in report.sections
        for line in sec.content.splitlines()
        if line.lstrip().startswith("#") and len(words(line)) <= MAX_HEADING_WORDS
    ]
    return frozenset().union(*(stems_of(h) for h in heads))


def per_sentence_topicality(readings: Sequence[SectionReading]) -> list[float]:
    """Each sentence's topicality (`SectionReading.sentence_topicality`), in reading order."""
    return [t for r in readings for t in (r.sentence_topicality or [r.topicality] * len(r.grounded))]
