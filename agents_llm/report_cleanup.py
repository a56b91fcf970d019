"""The last pass over a written report: nothing false, nothing dangling, nothing twice.

The team's sections are made of the writer's sentences and of sentences reused from the
documents. Whatever the rounds did, a reader must not meet a sentence twice, a heading run
into a sentence, a word broken at a line end, a sentence its source does not say, or one
that leans on a sentence the report left out ("So ...", "This ...", "see below"). Each
prose sentence of each section is taken through `report_checks`:

- a word broken at a line end is joined ("ker- nel" -> "kernel"); a heading glued to the
  sentence's start is cut off, and a lower-case term glued to its description is joined to it
  with a colon ("sync: The shell of user sync is /bin/sync.");
- a sentence that opens mid-sentence (a fragment) is dropped;
- a false sentence gives way to its closest source sentence when that one shares most of its
  words (`SNAP_SHARE`), else it is dropped;
- a sentence the report already holds is dropped;
- a sentence leaning on the source sentence before it is kept with that sentence put before
  it (when the report does not already hold it and it leans on nothing itself), else dropped;
  one pointing below is kept with the source sentence after it, else dropped.

A list item is taken as a sentence of its own (kept, mended or dropped); a heading inside a
section that restates the task or talks about the report is dropped; tables and code are left as
they are. A section left with no prose, item or code is removed. What was done is returned, for the trace and the console.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from rag.sentences import blocks, split_sentences

from .report_checks import (
    ITEM_MARK,
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
from .section_headings import restates

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
    where = sources.locate(mended)
    if sources.refuses(mended) or (where is not None and sources.refuses(sources.sentence(where))):
        # The last pass is the last door: whatever path a sentence took into a section (a writer
        # copying its evidence, a reused passage), an order or its paragraph's statements stay out.
        log.note("dropped order", title, mended)
        return None
    mended = _unglued(mended, title, sources, log)
    term = sources.unnamed_term(mended) if mended else None
    if term is not None:
        # "The hook is allowed to edit the message file" from commit-msg's part: named as the
        # part's opening sentence is ("commit-msg: This hook is invoked by ...").
        log.note("named the term it speaks of", title, mended)
        mended = f"{term}: {mended}"
    if not mended or cut_sentence(mended, sources):
        log.note("dropped fragment", title, mended)
        return None
    if false_sentence(mended, sources, agree):
        best = sources.closest(mended)
        if best is not None and best[1] >= SNAP_SHARE and not sources.refuses(sources.sentence(best[0])):
            log.note("replaced by its source sentence", title, mended)
            # The source sentence may carry a heading its loader glued to it ("O_NONBLOCK enabled,
            # n <= PIPE_BUF If there is room ..."), as a model's sentence may.
            return _unglued(sources.sentence(best[0]), title, sources, log) or None
        log.note("dropped unsupported", title, mended)
        return None
    return mended


def _unglued(sentence: str, title: str, sources: SourceText, log: Cleanup) -> str:
    """`sentence` without a heading glued to its start: a term over its description ("sync The
    shell of user sync is ...") stays as its subject, joined by a colon; any other heading is cut."""
    heading = glued_heading(sentence, sources.headings)
    if heading and (not heading[:1].isupper() or heading in sources.terms):
        # A term over its description: the description is about the term, so the term stays.
        log.note("joined term to its description", title, sentence)
        return f"{heading}: {sentence[len(heading) :].strip()}"
    if heading:
        log.note("cut glued heading", title, sentence)
        return sentence[len(heading) :].strip()
    return sentence


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
            if (
                key(previous) in seen
                or leans(previous)
                or _THESE.search(previous)
                or cut_sentence(previous, sources)
                or sources.refuses(previous)
            ):
                log.note("dropped dangling", title, sentence)
                continue
            leading = [previous]
            log.note("kept with the sentence it leans on", title, sentence)
        trailing: List[str] = []
        if _POINTS_ON.search(sentence):
            following = sources.neighbour(where, 1) if where is not None else None
            if (
                following is None
                or key(following) in seen
                or _POINTS_ON.search(following)
                or sources.refuses(following)
            ):
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
        parts: List[Tuple[str, str]] = []  # (kind, text)
        for block in blocks(section.content):
            if block.kind == "prose":
                sentences = split_sentences(block.text)
                kept = _section_sentences(sentences, section.title, seen, sources, agree, log)
                if kept:
                    parts.append(("prose", " ".join(kept)))
            elif block.kind == "item" and ITEM_MARK.match(block.text):
                # A list item is a sentence too, but it stands alone: kept, mended or dropped, never joined.
                mark = ITEM_MARK.match(block.text).group(0)  # type: ignore[union-attr]
                kept = _section_sentences([block.text[len(mark) :]], section.title, seen, sources, agree, log)
                if len(kept) == 1:
                    parts.append(("item", mark + kept[0]))
                elif kept:
                    log.note("dropped dangling", section.title, block.text)
                    for k in kept:
                        seen.discard(key(k))
            elif block.kind == "heading" and restates(block.text.lstrip("#").strip(), report.topic):
                log.note("dropped heading restating the task", section.title, block.text)
            elif block.kind == "heading" and block.text.lstrip("#").strip().lower().startswith("report"):
                log.note("dropped heading about the report", section.title, block.text)
            else:
                parts.append((block.kind, block.text))
        if any(kind in ("prose", "item", "code") for kind, _ in parts):
            section.content = _joined(parts)
        else:
            report.sections.remove(section)
            log.removed_sections.append(section.title)
    return log


def _joined(parts: List[Tuple[str, str]]) -> str:
    out = ""
    for i, (kind, text) in enumerate(parts):
        if i:
            out += "\n" if kind == "item" and parts[i - 1][0] == "item" else "\n\n"
        out += text
    return out
