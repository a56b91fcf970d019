"""The reference judge's components, from what it read: the grounding component
(`grounding_of`), each section's topicality (`topicality`), coverage of the key
terms (`coverage`, `term_match`, `supported_coverage`), redundancy (`duplicates`,
`redundancy`) and structure (`structure`, `heading_fit`). Functions of the judge (its
settings, embeddings and relevance band); `ReferenceJudge` exposes each as a method.
See `agents_llm.judges.reference` for what each component measures and how they combine."""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from ..report_state import ReportState
from .base import clamp01
from .reading import SectionReading, SentenceGrounding, content_sentences, is_echo, outline_stems
from ..text.terms import family_in, stems_of
from ..text.split import words


class JudgeView(Protocol):
    """What the components read of the judge (`agents_llm.judges.reference.ReferenceJudge`, which
    imports this module and exposes each component as a method): its settings, its embeddings
    (`_vecs`), its key terms and the components they combine."""

    contradiction_penalty: float
    duplicate_threshold: float
    support_level: float
    target_sections: int
    topic_terms: int

    def _vecs(self, texts: list[str]) -> np.ndarray: ...
    def _terms(self, report: ReportState) -> list[str]: ...
    def _term_table(self, report: ReportState) -> list[tuple[str, str]]: ...
    def _term_phrases(self, report: ReportState) -> list[str]: ...
    def relevance(self, similarity: np.ndarray | float) -> np.ndarray: ...
    def report_grounding(self, report: ReportState) -> list[list[SentenceGrounding]]: ...
    def read(self, report: ReportState) -> list[SectionReading]: ...
    def topicality(self, report: ReportState, section_sentences: Sequence[Sequence[str]]) -> list[float]: ...
    def term_match(self, terms: Sequence[tuple[str, str]], sents: Sequence[str]) -> np.ndarray: ...
    def duplicates(self, sents: list[str]) -> np.ndarray: ...
    def heading_fit(self, report: ReportState) -> float: ...


def read(judge: JudgeView, report: ReportState) -> list[SectionReading]:
    """Each section's grounding, topicality and per-sentence credit (`SectionReading`).

    A sentence's topicality is its section's, or that of the passage it restates where higher (a
    sentence grounded in an on-topic passage is on topic in whatever words it says it). Its credit:
    -`contradiction_penalty` if it contradicts its cited text, 0 if it is our prompt coming back or
    says nothing beyond the report's headings (an outline), else grounding times topicality, full at
    `support_level`."""
    per_section = judge.report_grounding(report)
    topical = judge.topicality(report, [[g.sentence for g in sec] for sec in per_section])
    cited = list(dict.fromkeys(g.evidence for sec in per_section for g in sec if g.evidence))
    evidence_topical = dict(zip(cited, judge.topicality(report, [[e] for e in cited]))) if cited else {}
    outline = outline_stems(report)
    out = []
    for sec, t in zip(per_section, topical):
        sentence_t = [max(t, evidence_topical.get(g.evidence, 0.0)) for g in sec]
        credit = [
            -judge.contradiction_penalty
            if g.conflict
            else 0.0
            if is_echo(g.sentence, report.topic) or stems_of(g.sentence) <= outline
            else min(1.0, g.grounded * st / judge.support_level)
            for g, st in zip(sec, sentence_t)
        ]
        out.append(SectionReading(sec, t, credit, sentence_t))
    return out


def coverage(judge: JudgeView, report: ReportState) -> float:
    """Share of the key terms whose word family appears anywhere (titles or text), supported or not."""
    terms = judge._terms(report)
    if not terms:
        return 1.0  # nothing to cover
    present = frozenset().union(*(stems_of(f"{sec.title} {sec.content}") for sec in report.sections))
    return sum(family_in(t, present) for t in terms) / len(terms)


def term_match(judge: JudgeView, terms: Sequence[tuple[str, str]], sents: Sequence[str]) -> np.ndarray:
    """(terms x sentences) in [0, 1]: 1 where the sentence uses a word of the term's family, else the
    similarity of the term to the sentence on the relevance band (the term said in other words)."""
    if not terms or not sents:
        return np.zeros((len(terms), len(sents)))
    match = judge.relevance(judge._vecs([w for _, w in terms]) @ judge._vecs(list(sents)).T)
    for j, s in enumerate(sents):
        stems = stems_of(s)
        for i, (t, _) in enumerate(terms):
            if family_in(t, stems):
                match[i, j] = 1.0
    return match


def supported_coverage(
    judge: JudgeView,
    report: ReportState,
    grounded: Sequence[SentenceGrounding],
    credit: Sequence[float] | None = None,
) -> float:
    """Mean over key terms of the best credit (default: grounding) of a sentence that says the term,
    weighted by how well it says it (`term_match`)."""
    terms = judge._term_table(report)
    if not terms:
        return 1.0
    if not grounded:
        return 0.0
    values = np.array([g.grounded for g in grounded] if credit is None else list(credit), dtype=np.float64)
    match = judge.term_match(terms, [g.sentence for g in grounded])
    return clamp01(float((match * np.maximum(values, 0.0)[None, :]).max(axis=1).mean()))


def duplicates(judge: JudgeView, sents: list[str]) -> np.ndarray:
    """For each sentence, whether it nearly repeats an earlier one (cosine >= `duplicate_threshold`, or the same words)."""
    duplicate = np.zeros(len(sents), dtype=bool)
    if len(sents) < 2:
        return duplicate
    vecs = judge._vecs(sents)
    sims = vecs @ vecs.T
    seen: set[str] = set()
    for i, norm in enumerate(" ".join(words(s)) for s in sents):
        if norm in seen or (i and sims[i, :i].max() >= judge.duplicate_threshold):
            duplicate[i] = True
        seen.add(norm)
    return duplicate


def redundancy(judge: JudgeView, sents: list[str], duplicate: np.ndarray | None = None) -> float:
    if len(sents) < 2:
        return 1.0
    duplicate = judge.duplicates(sents) if duplicate is None else duplicate
    lengths = np.array([len(s) for s in sents], dtype=np.float64)
    return 1.0 - float(lengths[duplicate].sum() / lengths.sum())


def structure(judge: JudgeView, report: ReportState, readings: Sequence[SectionReading] | None = None) -> float:
    """Mean of section count, balance and heading fit.

    The count is of sections with content, each counted by its credit (its sentences'
    length-weighted mean: a section of junk or about another topic counts 0), against
    `target_sections`. Balance is 1 minus the coefficient of variation of the sections'
    credited sizes (characters times credit), so a section that carries nothing (code,
    junk, another topic) unbalances the report instead of padding it.
    """
    if readings is None:
        readings = judge.read(report)
    credit_share, sizes = [], []
    for r in readings:
        lengths = np.array([len(g.sentence) for g in r.grounded], dtype=np.float64)
        credited = float(lengths @ np.array(r.credit)) if lengths.sum() else 0.0
        credit_share.append(max(credited, 0.0) / lengths.sum() if lengths.sum() else 0.0)
        sizes.append(max(credited, 1.0))
    count = min(sum(credit_share) / judge.target_sections, 1.0)
    sized = np.array(sizes, dtype=np.float64)
    # One section is no organisation: there is nothing to balance, and nothing earned for it.
    balance = 0.0 if len(sized) < 2 else clamp01(1.0 - sized.std() / sized.mean())
    return (count + balance + judge.heading_fit(report)) / 3.0


def heading_fit(judge: JudgeView, report: ReportState) -> float:
    """How well each section's title fits its own text (0 for a missing or repeated title), summed over
    sections and divided by the number of sections or `target_sections`, whichever is larger: like
    the section count, it grows with each well-titled section up to the target, and a section
    whose title fits nothing does not lower what the others earned.

    How far a title is about its section's text: the larger of the share of its content
    words whose family the text uses (`text.terms`) and its similarity to the text on
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
    cosine = judge._vecs([secs[i].title for i in candidates]) @ judge._vecs(texts).T
    fit = 0.0
    for row, i in enumerate(candidates):
        title_stems = stems_of(secs[i].title)
        lexical = [sum(family_in(t, s) for t in title_stems) / max(len(title_stems), 1) for s in text_stems]
        closeness = np.maximum(np.array(lexical), cosine[row])
        col = with_text.index(i)
        about = max(lexical[col], float(judge.relevance(cosine[row, col])))
        if closeness[col] > 0.0:
            fit += about * float(closeness[col] / closeness.max())
    return fit / max(len(secs), judge.target_sections)


def grounding_of(grounded: Sequence[SentenceGrounding], credit: Sequence[float] | None = None) -> float:
    """Length-weighted mean of the sentences' credit (default: their grounding)."""
    weights = np.array([len(g.sentence) for g in grounded], dtype=np.float64)
    if not weights.sum():
        return 0.0
    values = np.array([g.grounded for g in grounded] if credit is None else list(credit), dtype=np.float64)
    return clamp01(float(weights @ values / weights.sum()))  # contradicted sentences count against the rest


def topicality(judge: JudgeView, report: ReportState, section_sentences: Sequence[Sequence[str]]) -> list[float]:
    """How far each section (its content sentences) is about the report's topic, in [0, 1].

    The larger of two readings: by words, the share of `topic_terms` key terms (the
    topic's content words and the task's key terms) whose word family the section's text
    uses (`text.terms`: any inflection or derivation); by meaning, the similarity of the
    section's text to the topic and its key terms on the relevance band. Titles do not
    count: a heading made of the topic's words does not make the text under it on topic.
    A section without content sentences, or about something else, has 0.
    """
    terms = judge._term_table(report)
    if not terms:
        return [1.0 if sents else 0.0 for sents in section_sentences]
    need = min(judge.topic_terms, len(terms))
    texts = [" ".join(sents) for sents in section_sentences]
    with_text = [i for i, t in enumerate(texts) if t]
    out = [0.0] * len(texts)
    if not with_text:
        return out
    topic_text = f"{report.topic}. {', '.join(judge._term_phrases(report))}".strip(". ")
    sims = judge._vecs([texts[i] for i in with_text]) @ judge._vecs([topic_text])[0]
    for row, i in enumerate(with_text):
        stems = frozenset().union(*(stems_of(s) for s in section_sentences[i]))
        lexical = min(1.0, sum(family_in(t, stems) for t, _ in terms) / need)
        out[i] = max(lexical, float(judge.relevance(sims[row])))
    return out
