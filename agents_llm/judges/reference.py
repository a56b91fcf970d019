"""The reference judge: a deterministic, cheap score from measurable properties.

What it reads: the report's content sentences (prose lines that are not Markdown
headings, with at least `min_sentence_words` words; code, HTML/XML tags and code fences
are not prose, and a section that is mostly code or markup has no content sentences:
`judges.text.markup_profile`), each section's title, and the text of the chunks each
section cites.

Components, each in [0, 1]:
- grounding: for each sentence, its best embedding similarity to the cited evidence
  (each cited chunk and its sentences), mapped linearly from `grounding_floor` (0) to
  `grounding_ceiling` (1); a sentence of a section that cites nothing scores 0. The
  component is the length-weighted mean over sentences. `sentence_grounding` exposes
  the per-sentence figures (the referee uses them).
- coverage: share of the key terms (the task's, the configured ones and the content
  words of the topic) that the report mentions, in titles or text (`mentioned`), and
  `coverage`, the supported share: each term counts with the grounding of its
  best-grounded mention, so a term is covered only as far as a cited chunk backs the
  sentence that names it. Text that names the topic without support (a prompt echoed
  back, filler) covers nothing.
- redundancy: 1 minus the share of text in sentences that nearly repeat an earlier one
  (cosine >= `duplicate_threshold`, or the same words).
- structure: mean of section count (sections with content) against `target_sections`, balance of section
  lengths (1 - coefficient of variation), and headings that fit: each section's title,
  if informative and distinct, scored by its similarity to its own section's text on
  the grounding band (a title over someone else's text fits less).

Combination (a gate, not a sum): the report's substance is the weighted geometric mean
of coverage, grounding and redundancy (weights = exponents), so a report that is not
supported by its sources, not about its topic, or mostly repeated has no substance
whatever its shape; structure then scales the substance between `1 - w_structure` and
1 (w_structure = its share of the weights). Junk (empty, a stock sentence, headings, an
echo of the prompt) therefore scores near 0 instead of collecting structure points, and
appending a good section raises the score while appending a copy lowers it. The
validity suite (agents_llm/judges/validity, tests/agents_llm/judges/test_validity.py,
experiments/bench_judge.py) checks these orderings on six topics.

What it cannot tell, by construction:
- truth: grounding measures topical anchoring in the cited text. Measured against the
  source sentence "Garnet-type LLZO electrolytes reach ionic conductivities near one
  millisiemens per centimetre at room temperature.": MiniLM gives a paraphrase 0.86, a
  same-topic sentence stating another fact 0.32, generic filler 0.24, off-topic -0.01;
  the hashing embedding gives 0.38, 0.06, 0.02, 0.0. Neither tells a contradiction from
  support (MiniLM: 0.77 for the same sentence with the claim reversed); the LLM judge's
  verifiability is the check for that.
- order and flow: sections in another order score the same; sentences within a
  section are not checked for coherence.
- a heading that is on topic but wrong for its section is caught only as far as its
  similarity to the section's text drops (the hashing embedding sees shared words only).

Same input, same embedding function: same score. It makes no LLM call, so it is the
default judge on CPU and the held-out metric for policies trained on the LLM judge.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..backends.accounting import TokenLedger
from ..report_state import ReportState
from .base import JudgeResult, clamp01
from .text import markup_profile, sentences, words

EmbedFn = Callable[[list[str]], np.ndarray]
_WORD_SPLIT = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")  # the words of judges.text.words, with their case

# (floor, ceiling) of the grounding similarity band per embedding, from the measurements above.
GROUNDING_BANDS = {"minilm": (0.3, 0.8), "hashing": (0.3, 0.7)}

# coverage, grounding, redundancy: exponents of the substance (a product); structure: the
# share of the score that structure can take away (in [0, 1]).
DEFAULT_WEIGHTS = {"coverage": 0.5, "grounding": 0.5, "redundancy": 1.0, "structure": 0.25}
SUBSTANCE_COMPONENTS = ("coverage", "grounding", "redundancy")

# Words that say nothing about what a topic covers.
STOPWORDS = frozenset(
    """
a an the and or nor but of for to in on at by with from into onto over under about as is are was were be been
being this that these those it its their there here how what why when where which who whom whose do does did
can could should would may might must will shall not no than then so such via vs versus between among within
without across through toward towards per using use used based report overview introduction review study
""".split()
)


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


def content_sentences(text: str, min_words: int = 3) -> list[str]:
    """The sentences of a section's text that carry content: its prose.

    Markdown headings are structure, not content; code and markup (tags, fences, code
    lines: `judges.text.markup_profile`) are not prose, and a section that is mostly code
    or markup carries no content at all (copied code shares every word with the chunk it
    came from, so grounding alone would pay for it).
    """
    profile = markup_profile(text)
    if profile.is_markup:
        return []
    return [s for s in sentences(profile.prose) if not s.lstrip().startswith("#") and len(words(s)) >= min_words]


@dataclass(frozen=True)
class SentenceGrounding:
    """How well one sentence is anchored in the chunks it cites.

    `similarity`: best cosine to the evidence (each cited chunk and its sentences), or
    None when nothing with text is cited. `grounded`: that similarity on the judge's band,
    in [0, 1] (0 when nothing is cited). `evidence`: the best-matching evidence text.
    """

    sentence: str
    similarity: float | None
    grounded: float
    evidence: str = ""


class ReferenceJudge:
    kind = "reference"

    def __init__(
        self,
        embed: Any,
        *,
        key_terms: Sequence[str] = (),
        weights: Mapping[str, float] | None = None,
        grounding_floor: float = GROUNDING_BANDS["minilm"][0],
        grounding_ceiling: float = GROUNDING_BANDS["minilm"][1],
        duplicate_threshold: float = 0.92,
        target_sections: int = 5,
        min_sentence_words: int = 3,
        cache_size: int = 50000,
    ):
        self.embed = as_embed_fn(embed)
        self.key_terms = list(key_terms)
        self.weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
        unknown = set(self.weights) - set(DEFAULT_WEIGHTS)
        if unknown:
            raise ValueError(f"unknown reference judge weights {sorted(unknown)}; expected {sorted(DEFAULT_WEIGHTS)}")
        if (
            any(w < 0 for w in self.weights.values())
            or sum(self.weights.get(k, 0.0) for k in SUBSTANCE_COMPONENTS) <= 0
        ):
            raise ValueError(
                "reference judge weights must be >= 0 with a positive sum over "
                f"{SUBSTANCE_COMPONENTS}, got {self.weights}"
            )
        if self.weights.get("structure", 0.0) > 1.0:
            raise ValueError(
                f"reference judge weight 'structure' is a share of the score, at most 1, got "
                f"{self.weights['structure']}"
            )
        if not grounding_floor < grounding_ceiling:
            raise ValueError(
                f"grounding_floor ({grounding_floor}) must be below grounding_ceiling ({grounding_ceiling})"
            )
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
        zeros = {k: 0.0 for k in ("coverage", "grounding", "redundancy", "structure")}
        if report.is_empty or not report.chars:
            return JudgeResult(score=0.0, components=zeros, reason="empty report", details={"supported_chars": 0.0})
        per_section = self.report_grounding(report)
        flat = [g for sec in per_section for g in sec]
        if not flat:
            return JudgeResult(
                score=0.0,
                components=dict(zeros, structure=self.structure(report)),
                reason="no content sentences (headings or fragments only)",
                details={"sentences": 0, "key_terms": self._terms(report), "supported_chars": 0.0},
            )
        duplicate = self.duplicates([g.sentence for g in flat])
        components = {
            "coverage": self.supported_coverage(report, flat),
            "grounding": self.grounding_of(flat),
            "redundancy": self.redundancy([g.sentence for g in flat], duplicate),
            "structure": self.structure(report),
        }
        substance = self.substance(components)
        share = self.weights.get("structure", 0.0)
        score = substance * (1.0 - share + share * components["structure"])
        return JudgeResult(
            score=clamp01(score),
            components=components,
            details={
                "sentences": len(flat),
                "key_terms": self._terms(report),
                "substance": substance,
                "mentioned": self.coverage(report),
                "supported_chars": self.supported_chars_of(flat, duplicate, report.topic),
            },
        )

    # -- the length the reward measures (judge.length_measure=supported) ----------------
    def supported_chars(self, report: ReportState) -> float:
        """The report's length as the reward's length term counts it: characters of supported, distinct prose.

        Each content sentence the judge reads (prose only: no headings, code or markup;
        `content_sentences`) counts with its length times its grounding in the chunks its
        section cites (in [0, 1], the topic's own words left out, as in `grounding`); a
        sentence that repeats an earlier one (the `redundancy` rule) and a sentence that is
        our own prompt instructions coming back (the referee's `echo_reason`: verbatim,
        label, rephrased) count nothing. So junk adds ~0 characters whatever its size: a
        stock sentence repeated (repeats, ungrounded), the prompt echoed, headings only (no
        prose), code or markup (not prose), generic filler (below the grounding floor),
        while a new grounded section adds about its own length. Same figure as
        `details["supported_chars"]` of `score`.
        """
        flat = [g for sec in self.report_grounding(report) for g in sec]
        return self.supported_chars_of(flat, self.duplicates([g.sentence for g in flat]), report.topic)

    @staticmethod
    def supported_chars_of(grounded: Sequence[SentenceGrounding], duplicate: np.ndarray, topic: str = "") -> float:
        from ..referee import echo_reason  # the referee's echo rule: one definition of "our prompt coming back"

        return float(
            sum(
                len(g.sentence) * g.grounded
                for g, dup in zip(grounded, duplicate)
                if not dup and g.grounded > 0.0 and echo_reason(g.sentence, topic=topic) is None
            )
        )

    def substance(self, components: Mapping[str, float]) -> float:
        """coverage^a · grounding^b · redundancy^c (the weights are the exponents): 0 when any of them is 0."""
        return math.prod(components[k] ** self.weights.get(k, 0.0) for k in SUBSTANCE_COMPONENTS)

    # -- grounding (public: the referee reuses it) ---------------------------------
    def sentence_grounding(
        self, sents: Sequence[str], sources: Sequence[Any], topic: str = ""
    ) -> list[SentenceGrounding]:
        """Per-sentence grounding of `sents` in `sources` (SourceRefs, or anything with a `text`).

        With `topic`, each sentence is compared with its sources without the topic's own
        words: restating the task is not support (an echoed prompt shares the topic's
        words with every source). A sentence with fewer than `min_sentence_words` words
        left scores 0.
        """
        sents = list(sents)
        if not sents:
            return []
        probes = [self.without_topic(s, topic) for s in sents]
        evidence: list[str] = []
        for src in sources:
            text = (getattr(src, "text", src) or "").strip()
            if text:
                evidence.append(text)
                evidence.extend(sentences(text))
        evidence = list(dict.fromkeys(evidence))
        kept = [i for i, p in enumerate(probes) if len(words(p)) >= self.min_sentence_words]
        if not evidence or not kept:
            return [SentenceGrounding(s, None, 0.0) for s in sents]
        sims = self._vecs([probes[i] for i in kept]) @ self._vecs(evidence).T
        best = sims.argmax(axis=1)
        out = [SentenceGrounding(s, None, 0.0) for s in sents]
        for row, i in enumerate(kept):
            sim = float(sims[row, best[row]])
            out[i] = SentenceGrounding(sents[i], sim, self.band(sim), evidence[best[row]])
        return out

    @staticmethod
    def without_topic(sentence: str, topic: str) -> str:
        """`sentence` without the words of `topic` (compared by stem, stopwords kept)."""
        if not topic:
            return sentence
        topic_stems = {_stem(w) for w in words(topic) if w not in STOPWORDS}
        return _WORD_SPLIT.sub(
            lambda m: "" if _stem(m.group(0).lower()) in topic_stems else m.group(0), sentence
        ).strip()

    def band(self, similarity: float) -> float:
        """A similarity on the grounding band: 0 at the floor, 1 at the ceiling."""
        return clamp01((similarity - self.grounding_floor) / (self.grounding_ceiling - self.grounding_floor))

    def report_grounding(self, report: ReportState) -> list[list[SentenceGrounding]]:
        """`sentence_grounding` of each section's content sentences in that section's sources."""
        return [
            self.sentence_grounding(content_sentences(sec.content, self.min_sentence_words), sec.sources, report.topic)
            for sec in report.sections
        ]

    @staticmethod
    def grounding_of(grounded: Sequence[SentenceGrounding]) -> float:
        """Length-weighted mean of the sentences' grounding."""
        weights = np.array([len(g.sentence) for g in grounded], dtype=np.float64)
        if not weights.sum():
            return 0.0
        return float(weights @ np.array([g.grounded for g in grounded]) / weights.sum())

    # -- other components ------------------------------------------------------------
    def _terms(self, report: ReportState) -> list[str]:
        return key_terms_of(report.topic, list(self.key_terms) + list(getattr(report, "key_terms", ()) or ()))

    def coverage(self, report: ReportState) -> float:
        """Share of the key terms mentioned anywhere (titles or text), supported or not."""
        terms = self._terms(report)
        if not terms:
            return 1.0  # nothing to cover
        present = {_stem(w) for sec in report.sections for w in words(f"{sec.title} {sec.content}")}
        return sum(t in present for t in terms) / len(terms)

    def supported_coverage(self, report: ReportState, grounded: Sequence[SentenceGrounding]) -> float:
        """Mean over key terms of the grounding of the best-grounded sentence that names the term."""
        terms = self._terms(report)
        if not terms:
            return 1.0
        best = dict.fromkeys(terms, 0.0)
        for g in grounded:
            for w in {_stem(w) for w in words(g.sentence)}:
                if w in best and g.grounded > best[w]:
                    best[w] = g.grounded
        return sum(best.values()) / len(terms)

    def duplicates(self, sents: list[str]) -> np.ndarray:
        """For each sentence, whether it nearly repeats an earlier one (cosine >= `duplicate_threshold`, or the same words)."""
        duplicate = np.zeros(len(sents), dtype=bool)
        if len(sents) < 2:
            return duplicate
        vecs = self._vecs(sents)
        sims = vecs @ vecs.T
        seen: set[str] = set()
        for i, norm in enumerate(" ".join(words(s)) for s in sents):
            if norm in seen or (i and sims[i, :i].max() >= self.duplicate_threshold):
                duplicate[i] = True
            seen.add(norm)
        return duplicate

    def redundancy(self, sents: list[str], duplicate: np.ndarray | None = None) -> float:
        if len(sents) < 2:
            return 1.0
        duplicate = self.duplicates(sents) if duplicate is None else duplicate
        lengths = np.array([len(s) for s in sents], dtype=np.float64)
        return 1.0 - float(lengths[duplicate].sum() / lengths.sum())

    def structure(self, report: ReportState) -> float:
        secs = report.sections
        # Only sections with content count towards the target: headings or code are not sections of a report.
        with_content = sum(bool(content_sentences(s.content, self.min_sentence_words)) for s in secs)
        count = min(with_content / self.target_sections, 1.0)
        sizes = np.array([max(s.chars, 1) for s in secs], dtype=np.float64)
        balance = 1.0 if len(secs) < 2 else clamp01(1.0 - sizes.std() / sizes.mean())
        return (count + balance + self.heading_fit(report)) / 3.0

    def heading_fit(self, report: ReportState) -> float:
        """Share of sections whose title is informative, seen for the first time, and fits its own text.

        A title fits when it is closer to its own section than to any other section of the
        report (closeness: best similarity to one of the section's sentences). A relative
        test, so it holds for any embedding's similarity scale; a report with one section
        only needs a title that shares something with its text.
        """
        secs = report.sections
        bodies = [content_sentences(sec.content, 1) for sec in secs]
        candidates = []
        seen: set[str] = set()
        for i, sec in enumerate(secs):
            norm = " ".join(words(sec.title))
            if norm and norm != "untitled section" and norm not in seen and bodies[i]:
                candidates.append(i)
            seen.add(norm)
        if not secs or not candidates:
            return 0.0
        with_text = [i for i, b in enumerate(bodies) if b]
        fit = 0
        for i in candidates:
            title = self._vecs([secs[i].title])[0]
            closeness = {j: float((self._vecs(bodies[j]) @ title).max()) for j in with_text}
            own, others = closeness[i], [v for j, v in closeness.items() if j != i]
            fit += own > 0.0 and all(own > v for v in others)
        return fit / len(secs)

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
