"""A report's outline from the documents' own headings: those the topic names, then the ones
closest to it.

A small model asked for an outline writes orders ("Briefly introduce ..."), restates the task
or invents parts the documents do not have. The documents already say what their parts are:
their headings (`rag.headings`). The outline takes those that are about the topic: first the
ones the topic names (a task that lists "uuid1, uuid4 and the UUID class" asks for those
entries), then the rest, each group ranked by the retriever's own embedding of the heading and
the words under it against the topic, so the facts the documents treat as central to the topic
are written first, under the documents' words, and each section's search (its heading) finds
the passage the heading heads.

A heading is left out when it is no heading for a report (`section_headings.not_a_heading`),
restates the topic, is the documents' apparatus (contents, index, licence, ...), is a
document's own title (its first heading, when more follow: it heads all of the document, and
the report has its own title), repeats an earlier heading, or names none of the topic's
content words, neither in itself nor in the words under it, or when its passage holds no
sentence a report can quote (all code or tables: a section is written from its heading's
passage, so it would be skipped and its rounds lost). Of a heading and one of its own
subheadings that the part's passage holds, only the closer to the topic is kept.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence

import numpy as np

from rag.heading_passages import PASSAGE_CHUNKS, HeadingPassages

from .text.split import words
from .section_headings import clean_title, not_a_heading, restates
from .sentence_reuse import content_stems, is_prose, source_sentences

OUTLINE_SIZE = 5  # what the LeadArchitect is asked for: 3 to 5 sections
MIN_DOCUMENT_OUTLINE = 2  # fewer usable headings: the plan keeps the model's outline

# The parts of a document that are about the document, not its subject.
APPARATUS = frozenset(
    {
        "contents", "table of contents", "index", "concept index", "function index", "general index",
        "references", "bibliography", "acknowledgements", "acknowledgments", "copyright", "copying",
        "license", "licence", "authors", "author", "colophon", "see also", "changelog", "change log",
        "revision history", "history", "footnotes", "notes", "about this document", "feedback",
        "reporting bugs", "bugs", "credits", "legal notice", "trademarks", "preface", "version", "revision",
        "status of this document", "list of figures", "list of tables", "document history",
    }
)  # fmt: skip


@dataclass(frozen=True)
class OutlineEntry:
    title: str
    citation: str  # where the heading is: "file" or "file, p. 3"
    score: float  # cosine of the heading (and the words under it) with the topic


def _is_document_title(heading: Any, later_levels: Sequence[int]) -> bool:
    """The first heading of its file, with two or more after it, all below it: deeper levels, or,
    where its level is unknown (an unnumbered line of a PDF), numbered sections after it."""
    if (heading.ordinal, heading.position) != (0, 0) or len(later_levels) < 2:
        return False
    if heading.level == 0:
        return any(level > 0 for level in later_levels)
    return all(level > heading.level for level in later_levels)


def _citation(heading: Any) -> str:
    return f"{heading.source}, p. {heading.page}" if heading.page is not None else heading.source


def document_outline(
    headings: Sequence[Any],
    topic: str,
    embedding: Any,
    size: int = OUTLINE_SIZE,
    quotable: Optional[Callable[[Any], bool]] = None,
    restating_ok: bool = False,
) -> List[OutlineEntry]:
    """Up to ``size`` of ``headings`` (`rag.headings.DocumentHeading`) for a report on ``topic``:
    those the topic names (`names`) first, then the rest, each group closest first by
    ``embedding`` (the store's); [] when none is about the topic. ``quotable``:
    whether a heading's passage holds a sentence a report can quote (`passage_has_prose`); a
    heading whose passage is all code or tables gives no section, so it takes no place.
    ``restating_ok``: a heading that restates ``topic`` stays (a part of the task: "The Epoch" is
    the section for "What is the Epoch"); else it is dropped as the report's own title again."""
    topic_stems = content_stems(topic)
    taken: set[str] = set()
    candidates = []
    later_levels: dict[str, list[int]] = defaultdict(list)
    for h in headings:
        if (h.ordinal, h.position) != (0, 0):
            later_levels[h.source_path].append(h.level)
    for heading in headings:
        if _is_document_title(heading, later_levels[heading.source_path]):
            continue
        title = clean_title(heading.title, topic)
        key = " ".join(words(title))
        echo = not content_stems(title) if restating_ok else restates(title, topic)
        if not title or key in taken or key in APPARATUS or not_a_heading(title) or echo:
            continue
        if topic_stems and not topic_stems & content_stems(f"{title} {heading.under}"):
            continue  # about something else
        if quotable is not None and not quotable(heading):
            continue  # nothing under it a section can be written from
        taken.add(key)
        candidates.append((heading, title))
    if not candidates:
        return []
    query = np.asarray(embedding.embed_queries([topic]), dtype=float)[0]
    texts = [f"{title}. {heading.under}".strip() for heading, title in candidates]
    vectors = np.asarray(embedding.embed_documents(texts), dtype=float)
    norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(query) or 1.0)
    scores = vectors @ query / np.where(norms == 0, 1.0, norms)
    by_file: dict[str, list] = defaultdict(list)
    for h in headings:
        by_file[h.source_path].append(h)
    # A heading the topic names is what the reader asked for: it comes before any the topic only resembles.
    named = [names(topic, title) for _, title in candidates]
    order: list[int] = []
    for i in sorted(range(len(candidates)), key=lambda i: (not named[i], -scores[i], i)):
        # A heading's passage holds its subsections': a part and its own subpart would share their text.
        if not any(_nested(candidates[i][0], candidates[j][0], by_file) for j in order):
            order.append(i)
        if len(order) == size:
            break
    return [OutlineEntry(candidates[i][1], _citation(candidates[i][0]), float(scores[i])) for i in order]


_CODE_TITLE = re.compile(r"[`()_]|\w\.\w")  # an API entry, a call, an identifier: not prose words


def names(topic: str, title: str) -> bool:
    """Whether ``topic`` names the heading ``title``: every content word of a prose heading, by
    stem ("Magic rules" in "glob patterns, magic rules and ..."); every name of a code heading,
    whole ("base64.b64encode()" in "b64encode, b64decode and ...", but not
    "base64.urlsafe_b64decode()" nor "base64.encode()", whose names only share parts with it)."""
    if _CODE_TITLE.search(title):
        names_in_title = set(re.findall(r"\w+", re.sub(r"\([^()]*\)", "", title).lower()))  # arguments aside
        return bool(names_in_title) and names_in_title <= set(re.findall(r"\w+", topic.lower()))
    stems = content_stems(title)
    return bool(stems) and stems <= content_stems(topic)


def _nested(a: Any, b: Any, by_file: dict[str, list]) -> bool:
    """Whether one of two headings' passages holds the other heading: same file, a deeper level
    after it with no heading of its level or above between them (unknown levels nest nothing),
    and within the chunks a passage holds (`PASSAGE_CHUNKS`): a document's part 5 and its 5.3
    ten pages on share no text."""
    if a.source_path != b.source_path or a.level == 0 or b.level == 0 or a.level == b.level:
        return False
    outer, inner = (a, b) if a.level < b.level else (b, a)
    start, end = (outer.ordinal, outer.position), (inner.ordinal, inner.position)
    if start >= end or inner.ordinal >= outer.ordinal + PASSAGE_CHUNKS:
        return False
    between = [h for h in by_file[outer.source_path] if start < (h.ordinal, h.position) < end]
    return not any(0 < h.level <= outer.level for h in between)


def passage_has_prose(passages: HeadingPassages) -> Callable[[Any], bool]:
    """Whether a heading's passage (read from ``passages``) holds a sentence a report can quote."""
    return lambda heading: any(
        is_prose(sentence) for part in passages.passage(heading) for sentence in source_sentences(part.text)
    )
