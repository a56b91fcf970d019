"""The last pass over a written report: nothing false, nothing dangling, nothing twice.

The team's sections are made of the writer's sentences and of sentences reused from the
documents. Whatever the rounds did, a reader must not meet a sentence twice, a heading run
into a sentence, a word broken at a line end, a sentence its source does not say, or one
that leans on a sentence the report left out ("So ...", "This ...", "see below"). Each
prose sentence of each section is taken through `report_checks`:

- a word broken at a line end is joined ("ker- nel" -> "kernel"); a heading glued to the
  sentence's start is cut off;
- a sentence that opens mid-sentence (a fragment) is dropped;
- a false sentence gives way to its closest source sentence when that one shares most of its
  words (`SNAP_SHARE`), else it is dropped;
- a sentence the report already holds is dropped;
- a sentence leaning on the source sentence before it is kept with that sentence put before
  it (when the report does not already hold it and it leans on nothing itself), else dropped;
  one pointing below is kept with the source sentence after it, else dropped.

Lists, tables and code are left as they are. A section left with no prose and nothing else is
removed. What was done is returned, for the trace and the console.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from rag.sentences import blocks, split_sentences

from .report_checks import (
    AgreementCheck,
    SourceText,
    cut_sentence,
    dangling,
    default_agreement,
    false_sentence,
    glued_heading,
    key,
    leans,
    missing_antecedent,
    _THESE,
    mend_broken_words,
    _POINTS_ON,
)
from .report_state import ReportState

SNAP_SHARE = 0.5  # a false sentence gives way to a source sentence sharing this share of its words


@dataclass
class Cleanup:
    changes: List[Tuple[str, str, str]] = field(default_factory=list)  # (what, section title, sentence)
    removed_sections: List[str] = field(default_factory=list)

    def note(self, what: str, title: str, sentence: str) -> None:
        self.changes.append((what, title, sentence))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for what, _, _ in self.changes:
            out[what] = out.get(what, 0) + 1
        return out


def _is_prose(text: str) -> bool:
    parsed = blocks(text)
    return bool(parsed) and all(b.kind == "prose" for b in parsed)


def _one(sentence: str, title: str, sources: SourceText, agree: AgreementCheck, log: Cleanup) -> Optional[str]:
    """The sentence mended, replaced by its source sentence, or None to drop it."""
    mended = mend_broken_words(sentence)
    if mended != sentence:
        log.note("mended broken word", title, sentence)
    heading = glued_heading(mended, sources.headings)
    if heading:
        log.note("cut glued heading", title, mended)
        mended = mended[len(heading) :].strip()
    if not mended or cut_sentence(mended, sources):
        log.note("dropped fragment", title, mended)
        return None
    if false_sentence(mended, sources, agree):
        best = sources.closest(mended)
        if best is not None and best[1] >= SNAP_SHARE:
            log.note("replaced by its source sentence", title, mended)
            return sources.sentence(best[0])
        log.note("dropped unsupported", title, mended)
        return None
    return mended


def _section_sentences(
    sentences: List[str], title: str, seen: set[str], sources: SourceText, agree: AgreementCheck, log: Cleanup
) -> List[str]:
    kept: List[str] = []
    for raw in sentences:
        sentence = _one(raw, title, sources, agree, log)
        if sentence is None:
            continue
        if key(sentence) in seen:
            log.note("dropped repeat", title, sentence)
            continue
        where = sources.locate(sentence)
        leading: List[str] = []
        previous = missing_antecedent(sentence, kept, sources)
        if previous is not None:
            if key(previous) in seen or leans(previous) or _THESE.search(previous) or cut_sentence(previous, sources):
                log.note("dropped dangling", title, sentence)
                continue
            leading = [previous]
            log.note("kept with the sentence it leans on", title, sentence)
        trailing: List[str] = []
        if _POINTS_ON.search(sentence):
            following = sources.neighbour(where, 1) if where is not None else None
            if following is None or key(following) in seen or _POINTS_ON.search(following):
                log.note("dropped dangling", title, sentence)
                continue
            trailing = [following]
            log.note("kept with the sentence it points at", title, sentence)
        if dangling(sentence, kept + leading, trailing, sources):
            log.note("dropped dangling", title, sentence)
            continue
        for s in leading + [sentence] + trailing:
            seen.add(key(s))
            kept.append(s)
    return kept


def clean_report(report: ReportState, sources: SourceText, agreement: Optional[AgreementCheck] = None) -> Cleanup:
    """Clean ``report``'s sections in place against ``sources`` (see the module doc)."""
    agree = agreement or default_agreement()
    log = Cleanup()
    seen: set[str] = set()
    for section in list(report.sections):
        parts: List[str] = []
        for paragraph in [p for p in section.content.split("\n\n") if p.strip()]:
            if not _is_prose(paragraph):
                parts.append(paragraph)
                continue
            sentences = [s for b in blocks(paragraph) for s in split_sentences(b.text)]
            kept = _section_sentences(sentences, section.title, seen, sources, agree, log)
            if kept:
                parts.append(" ".join(kept))
        if parts:
            section.content = "\n\n".join(parts)
        else:
            report.sections.remove(section)
            log.removed_sections.append(section.title)
    return log
