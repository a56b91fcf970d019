"""The reference judge: a deterministic, cheap score from measurable properties.

Components, each in [0, 1]:
- coverage: share of the key terms (the configured ones, plus the content words of the
  task topic) that the report mentions.
- grounding: how closely each sentence matches the source chunks its section cites, by
  embedding similarity (best match over each chunk and its sentences), mapped linearly
  from `grounding_floor` (0) to `grounding_ceiling` (1); sentences of a section that
  cites nothing score 0. Averaged over sentences, weighted by length. The band depends
  on the embedding. Measured against the source sentence "Garnet-type LLZO electrolytes
  reach ionic conductivities near one millisiemens per centimetre at room temperature.":
  MiniLM gives a paraphrase 0.86, a same-topic sentence stating another fact 0.32,
  generic filler 0.24, off-topic -0.01; the hashing embedding gives 0.38, 0.06, 0.02,
  0.0. Neither tells a contradiction from support (MiniLM: 0.77 for the same sentence
  with the claim reversed): grounding measures topical anchoring in the cited text, not
  truth; the LLM judge's verifiability is the check for that.
- redundancy: 1 minus the share of text in sentences that nearly repeat an earlier one
  (cosine >= `duplicate_threshold`, or the same words).
- structure: mean of section count against `target_sections`, balance of section
  lengths (1 - coefficient of variation), and distinct, informative headings.

The overall score is the weighted mean of the components. Same input, same embedding
function: same score. It makes no LLM call, so it is the default judge on CPU and the
held-out metric for policies trained on the LLM judge.
"""
from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..backends.accounting import TokenLedger
from ..report_state import ReportState
from .base import JudgeResult, clamp01
from .text import sentences, words

EmbedFn = Callable[[list[str]], np.ndarray]

# (floor, ceiling) of the grounding similarity band per embedding, from the measurements above.
GROUNDING_BANDS = {"minilm": (0.3, 0.8), "hashing": (0.1, 0.6)}

DEFAULT_WEIGHTS = {"coverage": 0.25, "grounding": 0.35, "redundancy": 0.2, "structure": 0.2}

# Words that say nothing about what a topic covers.
STOPWORDS = frozenset("""
a an the and or nor but of for to in on at by with from into onto over under about as is are was were be been
being this that these those it its their there here how what why when where which who whom whose do does did
can could should would may might must will shall not no than then so such via vs versus between among within
without across through toward towards per using use used based report overview introduction review study
""".split())


def as_embed_fn(embed: Any) -> EmbedFn:
    """Accept a callable list[str] -> 2-D array, or an object with `embed_documents` (rag's embeddings)."""
    if hasattr(embed, "embed_documents"):
        return embed.embed_documents
    if callable(embed):
        return embed
    raise TypeError(f"embed must be a callable list[str] -> array or have embed_documents, got {type(embed).__name__}")


def _stem(word: str) -> str:
    # Enough to match "batteries"/"battery" and "vehicles"/"vehicle" without a stemmer dependency.
    for suffix, repl in (("ies", "y"), ("es", ""), ("s", "")):
        if len(word) > 4 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)] + repl
    return word


def key_terms_of(topic: str, extra: Sequence[str] = ()) -> list[str]:
    """Stemmed, de-duplicated content words of the topic and of the extra key terms."""
    out: list[str] = []
    for w in words(topic) + [w for term in extra for w in words(term)]:
        s = _stem(w)
        if len(w) >= 3 and w not in STOPWORDS and s not in out:
            out.append(s)
    return out


class ReferenceJudge:
    kind = "reference"

    def __init__(self, embed: Any, *, key_terms: Sequence[str] = (), weights: Mapping[str, float] | None = None,
                 grounding_floor: float = GROUNDING_BANDS["minilm"][0],
                 grounding_ceiling: float = GROUNDING_BANDS["minilm"][1], duplicate_threshold: float = 0.92,
                 target_sections: int = 5, min_sentence_words: int = 3, cache_size: int = 50000):
        self.embed = as_embed_fn(embed)
        self.key_terms = list(key_terms)
        self.weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
        unknown = set(self.weights) - set(DEFAULT_WEIGHTS)
        if unknown:
            raise ValueError(f"unknown reference judge weights {sorted(unknown)}; expected {sorted(DEFAULT_WEIGHTS)}")
        if any(w < 0 for w in self.weights.values()) or sum(self.weights.values()) <= 0:
            raise ValueError(f"reference judge weights must be >= 0 with a positive sum, got {self.weights}")
        if not grounding_floor < grounding_ceiling:
            raise ValueError(f"grounding_floor ({grounding_floor}) must be below grounding_ceiling ({grounding_ceiling})")
        if target_sections < 1:
            raise ValueError(f"target_sections must be >= 1, got {target_sections}")
        self.grounding_floor, self.grounding_ceiling = grounding_floor, grounding_ceiling
        self.duplicate_threshold = duplicate_threshold
        self.target_sections = target_sections
        self.min_sentence_words = min_sentence_words
        self.cache_size = cache_size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        # One judge may serve several episodes whose scorings run in worker threads.
        self._lock = threading.Lock()

    async def score(self, report: ReportState, *, ledger: TokenLedger | None = None) -> JudgeResult:
        # Embedding is CPU work; a worker thread lets other episodes' LLM calls proceed meanwhile.
        return await asyncio.to_thread(self.score_sync, report)

    def score_sync(self, report: ReportState) -> JudgeResult:
        if report.is_empty or not report.chars:
            return JudgeResult(score=0.0, components={k: 0.0 for k in DEFAULT_WEIGHTS}, reason="empty report")
        per_section = [[s for s in sentences(sec.content) if len(words(s)) >= self.min_sentence_words]
                       for sec in report.sections]
        components = {
            "coverage": self.coverage(report),
            "grounding": self.grounding(report, per_section),
            "redundancy": self.redundancy([s for secs in per_section for s in secs]),
            "structure": self.structure(report),
        }
        total_w = sum(self.weights.get(k, 0.0) for k in components)
        score = sum(self.weights.get(k, 0.0) * v for k, v in components.items()) / total_w
        return JudgeResult(score=clamp01(score), components=components,
                           details={"sentences": sum(len(s) for s in per_section), "key_terms": self._terms(report)})

    # -- components ----------------------------------------------------------------
    def _terms(self, report: ReportState) -> list[str]:
        return key_terms_of(report.topic, self.key_terms)

    def coverage(self, report: ReportState) -> float:
        terms = self._terms(report)
        if not terms:
            return 1.0  # nothing to cover
        present = {_stem(w) for sec in report.sections for w in words(f"{sec.title} {sec.content}")}
        return sum(t in present for t in terms) / len(terms)

    def grounding(self, report: ReportState, per_section: list[list[str]]) -> float:
        num = den = 0.0
        for sec, sents in zip(report.sections, per_section):
            if not sents:
                continue
            weights = np.array([len(s) for s in sents], dtype=np.float64)
            evidence: list[str] = []
            for src in sec.sources:
                if src.text.strip():
                    evidence.append(src.text.strip())
                    evidence.extend(sentences(src.text))
            if evidence:
                sims = self._vecs(sents) @ self._vecs(evidence).T
                best = sims.max(axis=1)
                grounded = np.clip((best - self.grounding_floor) / (self.grounding_ceiling - self.grounding_floor),
                                   0.0, 1.0)
                num += float(weights @ grounded)
            den += float(weights.sum())
        return num / den if den else 0.0

    def redundancy(self, sents: list[str]) -> float:
        if len(sents) < 2:
            return 1.0
        vecs = self._vecs(sents)
        sims = vecs @ vecs.T
        normalised = [" ".join(words(s)) for s in sents]
        lengths = np.array([len(s) for s in sents], dtype=np.float64)
        duplicate = np.zeros(len(sents), dtype=bool)
        seen: set[str] = set()
        for i, norm in enumerate(normalised):
            if norm in seen or (i and sims[i, :i].max() >= self.duplicate_threshold):
                duplicate[i] = True
            seen.add(norm)
        return 1.0 - float(lengths[duplicate].sum() / lengths.sum())

    def structure(self, report: ReportState) -> float:
        secs = report.sections
        count = min(len(secs) / self.target_sections, 1.0)
        sizes = np.array([max(s.chars, 1) for s in secs], dtype=np.float64)
        balance = 1.0 if len(secs) < 2 else clamp01(1.0 - sizes.std() / sizes.mean())
        titles = [" ".join(words(s.title)) for s in secs]
        informative = {t for t in titles if t and t != "untitled section"}
        headings = len(informative) / len(secs)
        return (count + balance + headings) / 3.0

    # -- embeddings ------------------------------------------------------------------
    def _vecs(self, texts: list[str]) -> np.ndarray:
        """Unit-norm rows for `texts`, embedding only those not seen before."""
        with self._lock:
            return self._vecs_locked(texts)

    def _vecs_locked(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            mat = np.asarray(self.embed(missing), dtype=np.float64)
            if mat.ndim != 2 or mat.shape[0] != len(missing):
                raise ValueError(f"embedding returned shape {mat.shape} for {len(missing)} texts; expected (n, dim)")
            norms = np.linalg.norm(mat, axis=1, keepdims=True)
            mat = mat / np.where(norms == 0.0, 1.0, norms)
            for t, v in zip(missing, mat):
                self._vectors[t] = v
        rows = []
        for t in texts:
            self._vectors.move_to_end(t)
            rows.append(self._vectors[t])
        while len(self._vectors) > self.cache_size:
            self._vectors.popitem(last=False)
        return np.stack(rows)
