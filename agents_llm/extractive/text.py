"""The extractive team's text rules: sentences, their sources, near-duplicates, key terms.

Shared by every version of the roles' rules (``engine`` for v1, ``rules_v2`` for v2).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

from ..text.absence import is_absence_only
from ..text.terms import STOPWORDS, stem
from ..text.split import sentences, words

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
    return {stem(w) for w in words(text) if len(w) >= 3 and w not in STOPWORDS}


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
        s = stem(w)
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
