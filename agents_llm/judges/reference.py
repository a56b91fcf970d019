"""The reference judge: a deterministic, cheap score from measurable properties.

What it reads: the report's content sentences (prose lines that are not Markdown
headings, with at least `min_sentence_words` words; code, HTML/XML tags and code fences
are not prose, and a section that is mostly code or markup has no content sentences:
`judges.text.markup_profile`), each section's title, and the text of the chunks each
section cites.

Words are read by meaning, not spelling (`judges.terms`): the Snowball stemmer maps
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
experiments/bench_judge.py) checks these orderings on twelve topics.

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
from functools import lru_cache
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..backends.accounting import TokenLedger
from ..report_state import ReportState
from .base import JudgeResult, clamp01
from .terms import STOPWORDS, family_in, key_term_words, key_terms_of, stem, stems_of
from .text import markup_profile, sentences, words

EmbedFn = Callable[[list[str]], np.ndarray]
_WORD_SPLIT = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")  # the words of judges.text.words, with their case

# (floor, ceiling) of the grounding similarity band per embedding, from the measurements above.
GROUNDING_BANDS = {"minilm": (0.3, 0.8), "hashing": (0.3, 0.7)}
# (floor, ceiling) of the relevance band: how close a text must be in meaning to the topic (a
# section), to a key term (a sentence) or to its own section (a title) to count as about it.
# MiniLM, measured on the validity suite's 12 topics: a good section against its own topic
# 0.34-0.72 (10th percentile 0.46), another topic's section 0.06-0.22; a section's own title
# 0.26-0.79, a junk title ("This is a new task that requires additional information.") at
# most 0.27. The hashing embedding shares stopwords with everything (another topic's section
# reaches 0.33, above the 10th percentile of the own topic, 0.12): its band sits above what
# stopwords give, so for it relevance is the word families of `judges.terms`.
RELEVANCE_BANDS = {"minilm": (0.2, 0.4), "hashing": (0.5, 0.8)}

# coverage, grounding, redundancy: exponents of the substance (a product); structure: the
# share of the score that structure can take away (in [0, 1]).
DEFAULT_WEIGHTS = {"coverage": 0.5, "grounding": 0.5, "redundancy": 1.0, "structure": 0.25}
SUBSTANCE_COMPONENTS = ("coverage", "grounding", "redundancy")


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
    lines: `judges.text.markup_profile`) are not prose, and a section that is mostly code
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
    in [0, 1] (0 when nothing is cited). `evidence`: the best-matching evidence text.
    """

    sentence: str
    similarity: float | None
    grounded: float
    evidence: str = ""


@dataclass(frozen=True)
class SectionReading:
    """What the judge reads in one section: its sentences' grounding, how far the section is
    about the report's topic (`topicality`, in [0, 1]) and each sentence's `credit`: grounding
    times topicality, full at `support_level` (see ReferenceJudge), 0 for a sentence that is our
    own prompt instructions coming back (the referee's `echo_reason`)."""

    grounded: list[SentenceGrounding]
    topicality: float
    credit: list[float]


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
                "supported_chars": self.supported_chars_of(flat, duplicate, report.topic, self._topical(readings)),
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
            flat, self.duplicates([g.sentence for g in flat]), report.topic, self._topical(readings)
        )

    @staticmethod
    def _topical(readings: Sequence[SectionReading]) -> list[float]:
        return [r.topicality for r in readings for _ in r.grounded]

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
        per_section = self.report_grounding(report)
        topical = self.topicality(report, [[g.sentence for g in sec] for sec in per_section])
        return [
            SectionReading(
                sec,
                t,
                [
                    0.0 if is_echo(g.sentence, report.topic) else min(1.0, g.grounded * t / self.support_level)
                    for g in sec
                ],
            )
            for sec, t in zip(per_section, topical)
        ]

    def topicality(self, report: ReportState, section_sentences: Sequence[Sequence[str]]) -> list[float]:
        """How far each section (its content sentences) is about the report's topic, in [0, 1].

        The larger of two readings: by words, the share of `topic_terms` key terms (the
        topic's content words and the task's key terms) whose word family the section's text
        uses (`judges.terms`: any inflection or derivation); by meaning, the similarity of the
        section's text to the topic and its key terms on the relevance band. Titles do not
        count: a heading made of the topic's words does not make the text under it on topic.
        A section without content sentences, or about something else, has 0.
        """
        terms = self._term_table(report)
        if not terms:
            return [1.0 if sents else 0.0 for sents in section_sentences]
        need = min(self.topic_terms, len(terms))
        texts = [" ".join(sents) for sents in section_sentences]
        with_text = [i for i, t in enumerate(texts) if t]
        out = [0.0] * len(texts)
        if not with_text:
            return out
        topic_text = f"{report.topic}. {', '.join(self._term_phrases(report))}".strip(". ")
        sims = self._vecs([texts[i] for i in with_text]) @ self._vecs([topic_text])[0]
        for row, i in enumerate(with_text):
            stems = frozenset().union(*(stems_of(s) for s in section_sentences[i]))
            lexical = min(1.0, sum(family_in(t, stems) for t, _ in terms) / need)
            out[i] = max(lexical, float(self.relevance(sims[row])))
        return out

    @staticmethod
    def grounding_of(grounded: Sequence[SentenceGrounding], credit: Sequence[float] | None = None) -> float:
        """Length-weighted mean of the sentences' credit (default: their grounding)."""
        weights = np.array([len(g.sentence) for g in grounded], dtype=np.float64)
        if not weights.sum():
            return 0.0
        values = np.array([g.grounded for g in grounded] if credit is None else list(credit), dtype=np.float64)
        return float(weights @ values / weights.sum())

    # -- other components ------------------------------------------------------------
    def _term_phrases(self, report: ReportState) -> list[str]:
        return list(self.key_terms) + list(getattr(report, "key_terms", ()) or ())

    def _terms(self, report: ReportState) -> list[str]:
        return key_terms_of(report.topic, self._term_phrases(report))

    def _term_table(self, report: ReportState) -> list[tuple[str, str]]:
        return key_term_words(report.topic, self._term_phrases(report))

    def coverage(self, report: ReportState) -> float:
        """Share of the key terms whose word family appears anywhere (titles or text), supported or not."""
        terms = self._terms(report)
        if not terms:
            return 1.0  # nothing to cover
        present = frozenset().union(*(stems_of(f"{sec.title} {sec.content}") for sec in report.sections))
        return sum(family_in(t, present) for t in terms) / len(terms)

    def term_match(self, terms: Sequence[tuple[str, str]], sents: Sequence[str]) -> np.ndarray:
        """(terms x sentences) in [0, 1]: 1 where the sentence uses a word of the term's family, else the
        similarity of the term to the sentence on the relevance band (the term said in other words)."""
        if not terms or not sents:
            return np.zeros((len(terms), len(sents)))
        match = self.relevance(self._vecs([w for _, w in terms]) @ self._vecs(list(sents)).T)
        for j, s in enumerate(sents):
            stems = stems_of(s)
            for i, (t, _) in enumerate(terms):
                if family_in(t, stems):
                    match[i, j] = 1.0
        return match

    def supported_coverage(
        self, report: ReportState, grounded: Sequence[SentenceGrounding], credit: Sequence[float] | None = None
    ) -> float:
        """Mean over key terms of the best credit (default: grounding) of a sentence that says the term,
        weighted by how well it says it (`term_match`)."""
        terms = self._term_table(report)
        if not terms:
            return 1.0
        if not grounded:
            return 0.0
        values = np.array([g.grounded for g in grounded] if credit is None else list(credit), dtype=np.float64)
        match = self.term_match(terms, [g.sentence for g in grounded])
        return float((match * values[None, :]).max(axis=1).mean())

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

    def structure(self, report: ReportState, readings: Sequence[SectionReading] | None = None) -> float:
        """Mean of section count, balance and heading fit.

        The count is of sections with content, each counted by its credit (its sentences'
        length-weighted mean: a section of junk or about another topic counts 0), against
        `target_sections`. Balance is 1 minus the coefficient of variation of the sections'
        credited sizes (characters times credit), so a section that carries nothing (code,
        junk, another topic) unbalances the report instead of padding it.
        """
        if readings is None:
            readings = self.read(report)
        credit_share, sizes = [], []
        for r in readings:
            lengths = np.array([len(g.sentence) for g in r.grounded], dtype=np.float64)
            credited = float(lengths @ np.array(r.credit)) if lengths.sum() else 0.0
            credit_share.append(credited / lengths.sum() if lengths.sum() else 0.0)
            sizes.append(max(credited, 1.0))
        count = min(sum(credit_share) / self.target_sections, 1.0)
        sized = np.array(sizes, dtype=np.float64)
        balance = 1.0 if len(sized) < 2 else clamp01(1.0 - sized.std() / sized.mean())
        return (count + balance + self.heading_fit(report)) / 3.0

    def heading_fit(self, report: ReportState) -> float:
        """How well each section's title fits its own text (0 for a missing or repeated title), summed over
        sections and divided by the number of sections or `target_sections`, whichever is larger: like
        the section count, it grows with each well-titled section up to the target, and a section
        whose title fits nothing does not lower what the others earned.

        How far a title is about its section's text: the larger of the share of its content
        words whose family the text uses (`judges.terms`) and its similarity to the text on
        the relevance band. That is scaled by how close the title is to its own text compared
        with the closest section's text (closeness: the larger of that word share and the raw
        similarity), so a stock title ("Further details") or one of our instructions fits
        nothing, and a title over another section's text fits less. Informative, first-seen
        titles only.
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
        texts = [" ".join(bodies[j]) for j in with_text]
        text_stems = [stems_of(t) for t in texts]
        cosine = self._vecs([secs[i].title for i in candidates]) @ self._vecs(texts).T
        fit = 0.0
        for row, i in enumerate(candidates):
            title_stems = stems_of(secs[i].title)
            lexical = [sum(family_in(t, s) for t in title_stems) / max(len(title_stems), 1) for s in text_stems]
            closeness = np.maximum(np.array(lexical), cosine[row])
            col = with_text.index(i)
            about = max(lexical[col], float(self.relevance(cosine[row, col])))
            if closeness[col] > 0.0:
                fit += about * float(closeness[col] / closeness.max())
        return fit / max(len(secs), self.target_sections)

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
