"""BM25 keyword search behind a small interface.

`LexicalIndex` is what the store needs: add, remove, search by chunk id. Every backend
keeps the tokenised corpus and rebuilds its scorer lazily, once, at the first search after
any number of mutations, so ingesting a thousand files costs one build, not a thousand.

Backends (``rag.store.bm25_backend``), all with the same tokens and the same ranking
(BM25 with Lucene's idf, k1 = 1.5, b = 0.75):

* ``rank_bm25``: rank_bm25's BM25Okapi statistics, scored through postings lists; the
  cheapest to build, fine up to tens of thousands of chunks.
* ``bm25s``: bm25s's sparse-matrix index, faster to query and to build on a large
  store (``experiments/timing/bench_rag.py --lexical`` measures both).
* ``auto`` (the default): ``rank_bm25`` below ``bm25s_min_chunks`` chunks, ``bm25s``
  from there on (decided at each rebuild).
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
            self._length_norm = self.k1 * (
                1 - self.b + self.b * np.asarray(self.doc_len, dtype=np.float64) / self.avgdl
            )

        def _calc_idf(self, nd):
            for word, freq in nd.items():
                self.idf[word] = math.log(1.0 + (self.corpus_size - freq + 0.5) / (freq + 0.5))

        def knows(self, term: str) -> bool:
            return term in self.idf

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
        # An empty token list would make BM25 divide by zero on average length.
        self._scorer = self._build_scorer([tokens or ["\x00"] for tokens in self._tokens.values()])
        self.builds += 1

    def _build_scorer(self, corpus: List[List[str]]):
        return _rank_bm25_scorer()(corpus)

    def search(self, query: str, top_n: int) -> List[Tuple[str, float]]:
        self._ensure_scorer()
        if self._scorer is None:
            return []
        # Terms absent from the corpus score zero everywhere; skipping them saves a
        # full pass over the corpus each.
        terms = [term for term in bm25_tokens(query) if self._scorer.knows(term)]
        if not terms:
            return []
        scores = self._scorer.get_scores(terms)
        count = min(top_n, len(scores))
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(self._scorer_ids[i], float(scores[i])) for i in best if scores[i] > 0.0]


class _BM25sScorer:
    """bm25s's sparse index over our tokens (so rankings match the other backend)."""

    def __init__(self, corpus: List[List[str]]):
        import bm25s
        from bm25s.tokenization import Tokenized

        vocab: Dict[str, int] = {}
        ids = [[vocab.setdefault(token, len(vocab)) for token in doc] for doc in corpus]
        # method="lucene": the idf and length normalisation of the rank_bm25 backend above;
        # its tf factor lacks the constant (k1 + 1), which scales scores but not the order.
        self._bm25 = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
        self._bm25.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
        self._vocab = vocab

    def knows(self, term: str) -> bool:
        return term in self._vocab

    def get_scores(self, terms: List[str]) -> np.ndarray:
        return np.asarray(self._bm25.get_scores([self._vocab[t] for t in terms]), dtype=np.float64)


class BM25sIndex(RankBM25Index):
    """The same index with bm25s's scorer (faster queries on a large store)."""

    def _build_scorer(self, corpus: List[List[str]]):
        return _BM25sScorer(corpus)


DEFAULT_BM25S_MIN_CHUNKS = 20_000


class AutoLexicalIndex(RankBM25Index):
    """rank_bm25 for a small store, bm25s from ``min_chunks_for_bm25s`` chunks on."""

    def __init__(self, min_chunks_for_bm25s: int = DEFAULT_BM25S_MIN_CHUNKS) -> None:
        super().__init__()
        if int(min_chunks_for_bm25s) < 0:
            raise ValueError(f"rag.store.bm25s_min_chunks must be >= 0, got {min_chunks_for_bm25s}")
        self.min_chunks_for_bm25s = int(min_chunks_for_bm25s)
        self.scorer_backend = ""  # which backend the last build used: rank_bm25 | bm25s

    def _build_scorer(self, corpus: List[List[str]]):
        if len(corpus) >= self.min_chunks_for_bm25s:
            self.scorer_backend = "bm25s"
            return _BM25sScorer(corpus)
        self.scorer_backend = "rank_bm25"
        return super()._build_scorer(corpus)


LEXICAL_BACKENDS: Dict[str, Callable[..., LexicalIndex]] = {
    "auto": AutoLexicalIndex,
    "rank_bm25": RankBM25Index,
    "bm25s": BM25sIndex,
}


def build_lexical_index(name: str, *, bm25s_min_chunks: int = DEFAULT_BM25S_MIN_CHUNKS) -> LexicalIndex:
    try:
        backend = LEXICAL_BACKENDS[name]
    except KeyError:
        raise ValueError(
            f"rag.store.bm25_backend: unknown backend {name!r} (available: {', '.join(LEXICAL_BACKENDS)})"
        ) from None
    return backend(bm25s_min_chunks) if backend is AutoLexicalIndex else backend()
