"""BM25 keyword search behind a small interface.

`LexicalIndex` is what the store needs: add, remove, search by chunk id. The rank_bm25
implementation keeps the tokenised corpus and rebuilds its scorer lazily, once, at the
first search after any number of mutations, so ingesting a thousand files costs one
build, not a thousand. Scoring goes through postings lists, so a query touches only the
documents that contain its terms; the build still costs a pass over the corpus (seconds
at 100k chunks), where a bm25s-backed index registered here would do better.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Dict, Iterable, List, Protocol, Sequence, Tuple

import numpy as np

# Identifiers such as QX-7741-B or err_4471 are kept whole *and* split into parts, so
# an exact identifier query matches exactly while a partial one still matches.
_TOKEN = re.compile(r"\w+(?:[-.:/]\w+)*", re.UNICODE)
_PART = re.compile(r"[^\W_]+", re.UNICODE)
_SEPARATOR = re.compile(r"[-.:/_]")
_STOPWORDS = frozenset(
    """a an and are as at be by for from has have in is it its of on or that the this
    to was were will with which what who how when where why do does did not no can""".split()
)


def bm25_tokens(text: str) -> List[str]:
    tokens: List[str] = []
    for word in _TOKEN.findall(text.lower()):
        if _SEPARATOR.search(word) is None:  # the common case: a plain word
            if word not in _STOPWORDS:
                tokens.append(word)
            continue
        tokens.append(word)
        tokens.extend(part for part in _PART.findall(word) if part not in _STOPWORDS)
    return tokens


class LexicalIndex(Protocol):
    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None: ...

    def remove(self, ids: Iterable[str]) -> None: ...

    def search(self, query: str, top_n: int) -> List[Tuple[str, float]]: ...

    def __len__(self) -> int: ...

    def __contains__(self, chunk_id: str) -> bool: ...


def _rank_bm25_scorer():
    from rank_bm25 import BM25Okapi

    class PostingsBM25(BM25Okapi):
        """rank_bm25's BM25Okapi statistics (document lengths, term frequencies, idf)
        with two changes:

        - Lucene's idf, log(1 + (N - n + 0.5) / (n + 0.5)), which stays positive: the
          classic idf is zero or negative for a term in half the documents or more, so
          in a small store a matching document could score nothing.
        - Scoring through postings lists built once: BM25Okapi.get_scores walks every
          document in Python for every query term (tens of ms at 10k chunks); here only
          the documents containing a term are touched, with the same formula.
        """

        def __init__(self, corpus):
            super().__init__(corpus)
            doc_ids: Dict[str, List[int]] = {}
            term_counts: Dict[str, List[int]] = {}
            for doc_index, frequencies in enumerate(self.doc_freqs):
                for term, count in frequencies.items():
                    doc_ids.setdefault(term, []).append(doc_index)
                    term_counts.setdefault(term, []).append(count)
            self._postings = {
                term: (np.asarray(doc_ids[term], dtype=np.int64), np.asarray(term_counts[term], dtype=np.float64))
                for term in doc_ids
            }
            self._length_norm = self.k1 * (1 - self.b + self.b * np.asarray(self.doc_len, dtype=np.float64) / self.avgdl)

        def _calc_idf(self, nd):
            for word, freq in nd.items():
                self.idf[word] = math.log(1.0 + (self.corpus_size - freq + 0.5) / (freq + 0.5))

        def get_scores(self, query):
            scores = np.zeros(self.corpus_size)
            for term in query:
                posting = self._postings.get(term)
                if posting is None:
                    continue
                docs, counts = posting
                scores[docs] += self.idf[term] * counts * (self.k1 + 1) / (counts + self._length_norm[docs])
            return scores

    return PostingsBM25


class RankBM25Index:
    def __init__(self) -> None:
        self._tokens: Dict[str, List[str]] = {}
        self._scorer = None
        self._scorer_ids: List[str] = []
        self.builds = 0  # how many times the scorer was rebuilt; tests watch it

    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, chunk_id: str) -> bool:
        return chunk_id in self._tokens

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        for chunk_id, text in zip(ids, texts, strict=True):
            self._tokens[chunk_id] = bm25_tokens(text)
        self._scorer = None

    def remove(self, ids: Iterable[str]) -> None:
        removed = False
        for chunk_id in ids:
            removed |= self._tokens.pop(chunk_id, None) is not None
        if removed:
            self._scorer = None

    def _ensure_scorer(self) -> None:
        if self._scorer is not None or not self._tokens:
            return
        self._scorer_ids = list(self._tokens)
        # An empty token list would make rank_bm25 divide by zero on average length.
        self._scorer = _rank_bm25_scorer()([tokens or ["\x00"] for tokens in self._tokens.values()])
        self.builds += 1

    def search(self, query: str, top_n: int) -> List[Tuple[str, float]]:
        self._ensure_scorer()
        if self._scorer is None:
            return []
        # Terms absent from the corpus score zero everywhere; skipping them saves a
        # full pass over the corpus each.
        terms = [term for term in bm25_tokens(query) if term in self._scorer.idf]
        if not terms:
            return []
        scores = self._scorer.get_scores(terms)
        count = min(top_n, len(scores))
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(self._scorer_ids[i], float(scores[i])) for i in best if scores[i] > 0.0]


LEXICAL_BACKENDS: Dict[str, Callable[[], LexicalIndex]] = {"rank_bm25": RankBM25Index}


def build_lexical_index(name: str) -> LexicalIndex:
    try:
        return LEXICAL_BACKENDS[name]()
    except KeyError:
        raise ValueError(
            f"rag.store.bm25_backend: unknown backend {name!r} (available: {', '.join(LEXICAL_BACKENDS)})"
        ) from None
