"""Words by meaning, not by spelling: stems, word families and a topic's key terms.

A reader counts "cache", "caches", "cached" and "caching" as one word, and "parse" and
"parser" as one family. `stem` is the Snowball English stemmer (the `snowballstemmer`
package), which maps inflections and most derivations to one stem; `same_family` adds the
derived forms the stemmer keeps apart, where one stem extends the other by a short ending
(pars/parser, read/reader, write/writer). What the embedding adds (a term covered by a
sentence that says it in other words) is the reference judge's part.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Iterable, Sequence

import snowballstemmer

from .split import words

# Words that say nothing about what a topic covers.
STOPWORDS = frozenset(
    """
a an the and or nor but of for to in on at by with from into onto over under about as is are was were be been
being this that these those it its their there here how what why when where which who whom whose do does did
can could should would may might must will shall not no than then so such via vs versus between among within
without across through toward towards per using use used based report overview introduction review study
""".split()
)

# A derived form may extend a stem by this many letters at most (pars -> parser: 2), and
# only stems of at least FAMILY_MIN_STEM letters take part ("use" is not "user").
FAMILY_MAX_EXTENSION = 3
FAMILY_MIN_STEM = 4

_local = threading.local()  # a Snowball stemmer object keeps state: one per thread


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """The Snowball English stem of `word` (lowercased)."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word.lower()))


def same_family(a: str, b: str) -> bool:
    """Whether two stems belong to one word family: equal, or one a short extension of the other."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= FAMILY_MIN_STEM and long_.startswith(short) and len(long_) - len(short) <= FAMILY_MAX_EXTENSION


@lru_cache(maxsize=50_000)
def stems_of(text: str) -> frozenset[str]:
    """The stems of the content words of `text`."""
    return frozenset(stem(w) for w in words(text) if w not in STOPWORDS)


@lru_cache(maxsize=50_000)
def _shortened(stems: frozenset[str]) -> frozenset[str]:
    """Every stem that one of `stems` extends within the family rule (parser -> pars, parse, ...)."""
    return frozenset(s[:k] for s in stems for k in range(max(FAMILY_MIN_STEM, len(s) - FAMILY_MAX_EXTENSION), len(s)))


def family_in(term: str, stems: Iterable[str]) -> bool:
    """Whether the stem `term` or a word of its family (`same_family`) is among `stems`."""
    pool = stems if isinstance(stems, frozenset) else frozenset(stems)
    if term in pool:
        return True
    if len(term) >= FAMILY_MIN_STEM and term in _shortened(pool):  # a stem of the pool extends the term
        return True
    # the term extends a stem of the pool
    return any(term[:k] in pool for k in range(max(FAMILY_MIN_STEM, len(term) - FAMILY_MAX_EXTENSION), len(term)))


def key_term_words(topic: str, extra: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(stem, word) of each content word of the topic and of the extra key terms, one per stem."""
    out: dict[str, str] = {}
    for w in words(topic) + [w for term in extra for w in words(term)]:
        if len(w) >= 3 and w not in STOPWORDS:
            out.setdefault(stem(w), w)
    return list(out.items())


def key_terms_of(topic: str, extra: Sequence[str] = ()) -> list[str]:
    """Stemmed, de-duplicated content words of the topic and of the extra key terms."""
    return [s for s, _ in key_term_words(topic, extra)]
