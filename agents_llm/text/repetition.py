"""How much of a text repeats: sentences that repeat an earlier one, looping phrases, and
the size of the span an edit changed. Pure functions on text (the referee's repetition and
score-jump checks)."""

from __future__ import annotations

from typing import Iterable

from .split import sentences, words


def _norm(sentence: str) -> tuple[str, ...]:
    return tuple(words(sentence))


def _same(a: tuple[str, ...], b: tuple[str, ...], similarity: float) -> bool:
    if a == b:
        return True
    sa, sb = set(a), set(b)
    return bool(sa and sb) and len(sa & sb) / len(sa | sb) >= similarity


def near_repeat(a: str, b: str, similarity: float = 0.8) -> bool:
    """Whether sentence `a` says `b` again in nearly the same words (the share of their words
    they have in common, of all words either uses, is at least `similarity`)."""
    return _same(_norm(a), _norm(b), similarity)


def repeated_sentences(text: str, earlier: Iterable[str] = (), similarity: float = 0.8) -> tuple[float, list[str]]:
    """(share of `text`'s characters in sentences repeating an earlier one, those sentences)."""
    seen = [_norm(s) for s in earlier if words(s)]
    sents = [s for s in sentences(text) if words(s)]
    total = sum(len(s) for s in sents)
    repeats: list[str] = []
    for s in sents:
        n = _norm(s)
        if any(_same(n, m, similarity) for m in seen):
            repeats.append(s)
        seen.append(n)
    return (sum(len(s) for s in repeats) / total if total else 0.0), repeats


def loop_share(text: str, n: int = 3) -> tuple[float, int]:
    """(share of the word n-grams of `text` that repeat an earlier n-gram, number of n-grams)."""
    w = words(text)
    grams = [tuple(w[i : i + n]) for i in range(len(w) - n + 1)]
    if not grams:
        return 0.0, 0
    return 1.0 - len(set(grams)) / len(grams), len(grams)


def changed_chars(before: str, after: str) -> int:
    """Characters of the changed span: the longer text minus the prefix and suffix both share."""
    n = min(len(before), len(after))
    prefix = 0
    while prefix < n and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < n - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    return max(len(before), len(after)) - prefix - suffix
