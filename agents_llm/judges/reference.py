"""The reference judge: a deterministic, cheap score from measurable properties.

What it reads: the report's content sentences (prose lines that are not Markdown
headings, with at least `min_sentence_words` words; code, HTML/XML tags and code fences
are not prose, and a section that is mostly code or markup has no content sentences:
`text.markup.markup_profile`), each section's title, and the text of the chunks each
section cites.

Words are read by meaning, not spelling (`text.terms`): the Snowball stemmer maps
inflections to one stem (caching/cache/cached), and a word family joins derived forms the
stemmer keeps apart (parse/parser, read/reader).

Topicality: each section is about the report's topic as far as it uses `topic_terms` of
its key terms (the topic's content words and the task's key terms, any form) or, by
meaning, is close to the topic on the relevance band (`RELEVANCE_BANDS`). Titles do not
count. A sentence's credit is its grounding times its section's topicality, full at
`support_level` (a sentence that is supported counts fully; more similarity does not make
it more supported), and 0 for our own prompt instructions coming back (the referee's
`echo_reason`). So a grounded sentence copied from another topic's document is support
for nothing.

Components, each in [0, 1]:
- grounding: for each sentence, its best embedding similarity to the cited evidence
  (each cited chunk and its sentences) without the topic's words, mapped linearly from
  `grounding_floor` (0) to `grounding_ceiling` (1); a sentence of a section that cites
  nothing scores 0. The component is the length-weighted mean of the sentences' credit.
  `sentence_grounding` exposes the per-sentence figures (the referee uses them).
- coverage: for each key term, the best credit of a sentence that says it, weighted by how
  well it says it (`term_match`: 1 for a word of the term's family, else the term's
  similarity to the sentence on the relevance band); the mean over terms. `mentioned`
  (details) is the share of terms whose family appears anywhere. Text that names the
  topic without support (a prompt echoed back, filler) covers nothing.
- redundancy: 1 minus the share of text in sentences that nearly repeat an earlier one
  (cosine >= `duplicate_threshold`, or the same words).
- structure: mean of section count (each section counted by its credit) against
  `target_sections`, balance of the sections' credited sizes (1 - coefficient of
  variation), and heading fit: each title by how far it is about its own section's text
  (shared word families or similarity on the relevance band) and how it compares with the
  section it is closest to, summed and divided by max(sections, `target_sections`).

Combination (a gate, not a sum): the report's substance is the weighted geometric mean
of coverage, grounding and redundancy (weights = exponents), so a report that is not
supported by its sources, not about its topic, or mostly repeated has no substance
whatever its shape; structure then scales the substance between `1 - w_structure` and
1 (w_structure = its share of the weights). Junk (empty, a stock sentence, headings, an
echo of the prompt) therefore scores near 0 instead of collecting structure points;
appending a good section raises the score, appending a copy or a section about another
topic lowers it, and a report of good sections scores at least as much as any prefix
of it. The validity suite (agents_llm/judges/validity,
tests/agents_llm/judges/test_validity.py, tests/agents_llm/judges/test_reading_rules.py,
experiments/protocol/bench_judge.py) checks these orderings on twelve topics.

Truth: closeness is not support (MiniLM gives 0.77 to a sentence with its claim reversed), so
each grounded sentence is also read against its cited text for agreement (`judges.agreement`:
numbers, negation, antonyms, quantifiers, swapped roles, code names); a sentence that
contradicts it is not grounded and its credit is -`contradiction_penalty` (`components.read`).

What it cannot tell, by construction:
- truth beyond those rules: a contradiction in other words (a mechanism swapped for
  another) passes; the LLM judge's verifiability is the check for that.
- a true section in synonyms with the hashing embedding: its grounding sees shared words.
- order and flow: sections in another order score the same; sentences within a
  section are not checked for coherence.
- a heading that is on topic but wrong for its section is caught only as far as its
  similarity to the section's text drops (the hashing embedding sees shared words only).

Same input, same embedding function: same score. It makes no LLM call, so it is the
default judge on CPU and the held-out metric for policies trained on the LLM judge.
Parts: what it reads (`judges.reading`), the components (`judges.components`), its embeddings
(`judges.vector_cache`); here: settings, the grounding of sentences, the combination.
"""

from __future__ import annotations

import asyncio
import math
import re
from typing import Any, Mapping, Sequence

import numpy as np

from ..backends.accounting import TokenLedger
from ..report_state import ReportState
from . import components
from .base import JudgeResult, clamp01
from .reading import (  # noqa: F401 (re-exported: callers import them from here)
    EmbedFn,
    SectionReading,
    SentenceGrounding,
    _content_sentences,
    as_embed_fn,
    content_sentences,
    is_echo,
    per_sentence_topicality,
)
from .agreement import check_agreement
from ..text.terms import STOPWORDS, family_in, key_term_words, key_terms_of, stem
from ..text.split import sentences, words
from .vector_cache import VectorCache
from ..text.bands import GROUNDING_BANDS, RELEVANCE_BANDS

_WORD_SPLIT = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")  # the words of text.split.words, with their case

# coverage, grounding, redundancy: exponents of the substance (a product); structure: the
# share of the score that structure can take away (in [0, 1]).
DEFAULT_WEIGHTS = {"coverage": 0.5, "grounding": 0.5, "redundancy": 1.0, "structure": 0.3}
SUBSTANCE_COMPONENTS = ("coverage", "grounding", "redundancy")


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
        relevance_floor: float | None = None,
        relevance_ceiling: float | None = None,
        support_level: float = 0.5,
        topic_terms: int = 2,
        duplicate_threshold: float = 0.92,
        target_sections: int = 5,
        min_sentence_words: int = 3,
        cache_size: int = 50000,
        contradiction_penalty: float = 0.5,
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
        # The relevance band follows the embedding: rag's hashing embedding names itself "hashing-...".
        default_band = RELEVANCE_BANDS[
            "hashing" if str(getattr(embed, "identity", "")).startswith("hashing") else "minilm"
        ]
        rel_floor = default_band[0] if relevance_floor is None else relevance_floor
        rel_ceiling = default_band[1] if relevance_ceiling is None else relevance_ceiling
        if not rel_floor < rel_ceiling:
            raise ValueError(f"relevance_floor ({rel_floor}) must be below relevance_ceiling ({rel_ceiling})")
        if not 0.0 < support_level <= 1.0:
            raise ValueError(f"support_level must be in (0, 1], got {support_level}")
        if topic_terms < 1:
            raise ValueError(f"topic_terms must be >= 1, got {topic_terms}")
        if target_sections < 1:
            raise ValueError(f"target_sections must be >= 1, got {target_sections}")
        self.grounding_floor, self.grounding_ceiling = grounding_floor, grounding_ceiling
        self.relevance_floor, self.relevance_ceiling = rel_floor, rel_ceiling
        self.support_level = support_level
        self.topic_terms = topic_terms
        self.duplicate_threshold = duplicate_threshold
        self.target_sections = target_sections
        self.min_sentence_words = min_sentence_words
        self.cache_size = cache_size
        if contradiction_penalty < 0:
            raise ValueError(f"contradiction_penalty must be >= 0, got {contradiction_penalty}")
        self.contradiction_penalty = contradiction_penalty
        self._cache = VectorCache(self.embed, cache_size)

    async def score(self, report: ReportState, *, ledger: TokenLedger | None = None) -> JudgeResult:
        # Embedding is CPU work; a worker thread lets other episodes' LLM calls proceed meanwhile.
        return await asyncio.to_thread(self.score_sync, report)

    def score_sync(self, report: ReportState) -> JudgeResult:
        zeros = {k: 0.0 for k in ("coverage", "grounding", "redundancy", "structure")}
        if report.is_empty or not report.chars:
            return JudgeResult(score=0.0, components=zeros, reason="empty report", details={"supported_chars": 0.0})
        readings = self.read(report)
        flat = [g for r in readings for g in r.grounded]
        if not flat:
            return JudgeResult(
                score=0.0,
                components=dict(zeros, structure=self.structure(report, readings)),
                reason="no content sentences (headings or fragments only)",
                details={"sentences": 0, "key_terms": self._terms(report), "supported_chars": 0.0},
            )
        credit = [c for r in readings for c in r.credit]
        duplicate = self.duplicates([g.sentence for g in flat])
        components = {
            "coverage": self.supported_coverage(report, flat, credit),
            "grounding": self.grounding_of(flat, credit),
            "redundancy": self.redundancy([g.sentence for g in flat], duplicate),
            "structure": self.structure(report, readings),
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
                "topicality": [r.topicality for r in readings],
                "supported_chars": self.supported_chars_of(
                    flat, duplicate, report.topic, per_sentence_topicality(readings)
                ),
            },
        )

    # -- the length the reward measures (judge.length_measure=supported) ----------------
    def supported_chars(self, report: ReportState) -> float:
        """The report's length as the reward's length term counts it: characters of supported, distinct prose.

        Each content sentence the judge reads (prose only: no headings, code or markup;
        `content_sentences`) counts with its length times its grounding in the chunks its
        section cites (in [0, 1], the topic's own words left out, as in `grounding`) times its
        section's topicality (`topicality`: a section about another topic counts nothing,
        however well its sentences match what it cites); a sentence that repeats an earlier
        one (the `redundancy` rule) and a sentence that is our own prompt instructions coming
        back (the referee's `echo_reason`: verbatim, label, rephrased) count nothing. So junk
        adds ~0 characters whatever its size: a stock sentence repeated (repeats,
        ungrounded), the prompt echoed, headings only (no prose), code or markup (not prose),
        generic filler (below the grounding floor), sentences copied from another topic's
        documents (off topic), while a new grounded section on the topic adds about its own
        length. Same figure as `details["supported_chars"]` of `score`.
        """
        readings = self.read(report)
        flat = [g for r in readings for g in r.grounded]
        return self.supported_chars_of(
            flat, self.duplicates([g.sentence for g in flat]), report.topic, per_sentence_topicality(readings)
        )

    @staticmethod
    def supported_chars_of(
        grounded: Sequence[SentenceGrounding],
        duplicate: np.ndarray,
        topic: str = "",
        topicality: Sequence[float] | None = None,
    ) -> float:
        """Characters of `grounded` times their grounding (times `topicality`, one per sentence, if given)."""
        topical = [1.0] * len(grounded) if topicality is None else list(topicality)
        return float(
            sum(
                len(g.sentence) * g.grounded * t
                for g, dup, t in zip(grounded, duplicate, topical)
                if not dup and g.grounded > 0.0 and not is_echo(g.sentence, topic)
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
        texts: set[str] = set()
        for src in sources:
            text = (getattr(src, "text", src) or "").strip()
            if text:
                texts.add(text)
                evidence.append(text)
                evidence.extend(sentences(text))
        evidence = list(dict.fromkeys(evidence))
        kept = [i for i, p in enumerate(probes) if len(words(p)) >= self.min_sentence_words]
        if not evidence or not kept:
            return [SentenceGrounding(s, None, 0.0) for s in sents]
        sims = self._vecs([probes[i] for i in kept]) @ self._vecs(evidence).T
        best = sims.argmax(axis=1)
        cited = "\n\n".join(t for t in evidence if t.strip() in texts)
        out = [SentenceGrounding(s, None, 0.0) for s in sents]
        for row, i in enumerate(kept):
            sim = float(sims[row, best[row]])
            grounded = self.band(sim)
            # Support means the source says it: closeness alone cannot tell a reversed claim from its source.
            conflict = check_agreement(sents[i], cited).reason if grounded > 0.0 else ""
            out[i] = SentenceGrounding(sents[i], sim, 0.0 if conflict else grounded, evidence[best[row]], conflict)
        return out

    @staticmethod
    def without_topic(sentence: str, topic: str) -> str:
        """`sentence` without the words of `topic`, in any form of their family (stopwords kept)."""
        if not topic:
            return sentence
        topic_stems = frozenset(stem(w) for w in words(topic) if w not in STOPWORDS)
        return _WORD_SPLIT.sub(
            lambda m: "" if family_in(stem(m.group(0)), topic_stems) else m.group(0), sentence
        ).strip()

    def band(self, similarity: float) -> float:
        """A similarity on the grounding band: 0 at the floor, 1 at the ceiling."""
        return clamp01((similarity - self.grounding_floor) / (self.grounding_ceiling - self.grounding_floor))

    def relevance(self, similarity: np.ndarray | float) -> np.ndarray:
        """Similarities on the relevance band: 0 at its floor, 1 at its ceiling."""
        span = self.relevance_ceiling - self.relevance_floor
        return np.clip((np.asarray(similarity, dtype=np.float64) - self.relevance_floor) / span, 0.0, 1.0)

    def report_grounding(self, report: ReportState) -> list[list[SentenceGrounding]]:
        """`sentence_grounding` of each section's content sentences in that section's sources."""
        return [
            self.sentence_grounding(content_sentences(sec.content, self.min_sentence_words), sec.sources, report.topic)
            for sec in report.sections
        ]

    def read(self, report: ReportState) -> list[SectionReading]:
        """Each section's grounding, topicality and per-sentence credit (see `SectionReading`)."""
        return components.read(self, report)

    def topicality(self, report: ReportState, section_sentences: Sequence[Sequence[str]]) -> list[float]:
        """How far each section is about the report's topic, in [0, 1] (`components.topicality`)."""
        return components.topicality(self, report, section_sentences)

    @staticmethod
    def grounding_of(grounded: Sequence[SentenceGrounding], credit: Sequence[float] | None = None) -> float:
        """Length-weighted mean of the sentences' credit (default: their grounding)."""
        return components.grounding_of(grounded, credit)

    # -- other components ------------------------------------------------------------
    def _term_phrases(self, report: ReportState) -> list[str]:
        return list(self.key_terms) + list(getattr(report, "key_terms", ()) or ())

    def _terms(self, report: ReportState) -> list[str]:
        return key_terms_of(report.topic, self._term_phrases(report))

    def _term_table(self, report: ReportState) -> list[tuple[str, str]]:
        return key_term_words(report.topic, self._term_phrases(report))

    # -- the other components (agents_llm.judges.components) --------------------------
    def coverage(self, report: ReportState) -> float:
        """Share of the key terms whose word family appears anywhere (titles or text), supported or not."""
        return components.coverage(self, report)

    def term_match(self, terms: Sequence[tuple[str, str]], sents: Sequence[str]) -> np.ndarray:
        """(terms x sentences) in [0, 1]: how well each sentence says each key term (`components.term_match`)."""
        return components.term_match(self, terms, sents)

    def supported_coverage(
        self, report: ReportState, grounded: Sequence[SentenceGrounding], credit: Sequence[float] | None = None
    ) -> float:
        """Mean over key terms of the best credit of a sentence that says the term (`components.supported_coverage`)."""
        return components.supported_coverage(self, report, grounded, credit)

    def duplicates(self, sents: list[str]) -> np.ndarray:
        """For each sentence, whether it nearly repeats an earlier one (`components.duplicates`)."""
        return components.duplicates(self, sents)

    def redundancy(self, sents: list[str], duplicate: np.ndarray | None = None) -> float:
        return components.redundancy(self, sents, duplicate)

    def structure(self, report: ReportState, readings: Sequence[SectionReading] | None = None) -> float:
        """Mean of section count, balance and heading fit (`components.structure`)."""
        return components.structure(self, report, readings)

    def heading_fit(self, report: ReportState) -> float:
        """How well each section's title fits its own text (`components.heading_fit`)."""
        return components.heading_fit(self, report)

    # -- embeddings ------------------------------------------------------------------
    def _vecs(self, texts: list[str]) -> np.ndarray:
        """Unit-norm rows for `texts`, embedding only those not seen before (`VectorCache`)."""
        return self._cache.rows(texts)
