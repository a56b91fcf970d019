"""The passage a document's heading heads: what a section planned from that heading is written from.

A report whose outline is the documents' own headings (`rag.headings`) should say, under each
heading, what the document says under it. A search for the heading's words finds the passages
that repeat those words, which are often elsewhere ("The Basics" names no word its own passage
uses). So the passage is read from the store directly: the heading's chunk from the heading on,
then the following chunks of the same file, up to the next heading of the same level or above
(any next heading when levels are unknown), at most `PASSAGE_CHUNKS` chunks. Its text is cut at
both ends, so it holds nothing of the neighbouring parts.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Set, Tuple

from rag.headings import (
    UNMARKED_HEADING_KINDS,
    DocumentHeading,
    document_headings,
    heading_blocks,
    heading_key,
    without_tail,
)
from rag.chunking import paragraph_before
from rag.guard import guard_untrusted_text
from rag.retrieval import RetrievedChunk
from rag.store_records import decode_locations

PASSAGE_CHUNKS = 3  # a section's worth: up to three 256-token chunks (a PDF chunk ends at its page)


@dataclass(frozen=True)
class PassagePart:
    """One chunk's share of a heading's passage."""

    chunk_id: str
    text: str  # the chunk's text from the heading (first part) to the next heading (last part)
    source: str
    source_path: str
    page: Optional[int]
    lead: str = ""  # the part of the paragraph it begins inside that lies in the chunk before (`paragraph_before`)


def _heading_lines(text: str, marked: bool) -> List[Tuple[str, Set[str], int]]:
    """(line as written, its title's keys, level) of each heading of a chunk's text, in order:
    the walk `rag.headings.headings_in` makes, so a heading's `position` indexes this list."""
    return [
        (block.text.strip(), {heading_key(found[0]), heading_key(without_tail(found[0]))}, found[1])
        for block, found in heading_blocks(text, marked_kinds=marked)
        if found is not None
    ]


def _find_line(text: str, line: str, start: int) -> int:
    """Where a heading block's line is in `text` from `start` (-1: not found). A heading underlined
    with === or --- is a '#' block whose line is not in the text as written: its words are."""
    at = text.find(line, start)
    return at if at >= 0 else text.find(line.lstrip("#").strip(), start)


def _ends(level: int, other: int) -> bool:
    """Whether a heading of level `other` ends the passage of one of level `level` (0: unknown)."""
    return level == 0 or other == 0 or other <= level


class HeadingPassages:
    """The headings of a set of stored chunks, and the passage each heads."""

    def __init__(self, chunks: Iterable[Tuple[str, str, dict]]):
        rows = list(chunks)
        self.headings: List[DocumentHeading] = document_headings(rows)
        self._by_title: Dict[str, List[DocumentHeading]] = defaultdict(list)
        for heading in self.headings:
            self._by_title[heading_key(heading.title)].append(heading)
        # Per file, its chunks in document order: (ordinal, id, text, page, marked, begins a paragraph).
        self._files: Dict[str, List[Tuple[int, str, str, Optional[int], bool, bool]]] = defaultdict(list)
        for chunk_id, text, metadata in rows:
            ordinal = int(metadata.get("ordinal", 0))
            for key, entry in decode_locations(metadata).items():
                page = entry["pages"][0] if entry.get("pages") else None
                marked = entry.get("kind", "") not in UNMARKED_HEADING_KINDS
                begins = entry.get("begins") is True
                self._files[key].append((ordinal, chunk_id, text, page, marked, begins))
        for parts in self._files.values():
            parts.sort(key=lambda p: p[0])

    @classmethod
    def of_store(cls, store) -> "HeadingPassages":
        return cls(store.iter_chunks())

    def find(self, title: str) -> List[DocumentHeading]:
        """The headings (one per file at most) whose words are `title`'s."""
        return list(self._by_title.get(heading_key(title), ()))

    def passage(self, heading: DocumentHeading, max_chunks: int = PASSAGE_CHUNKS) -> List[PassagePart]:
        """What `heading` heads, cut from its chunk and the chunks after it in its file."""
        parts = self._files.get(heading.source_path, [])
        at = bisect_right([p[0] for p in parts], heading.ordinal) - 1
        while at >= 0 and parts[at][1] != heading.chunk_id:
            at -= 1
        if at < 0:
            return []
        out: List[PassagePart] = []
        previous = ""
        for _, chunk_id, text, page, marked, begins in parts[at : at + max_chunks]:
            lines = _heading_lines(text, marked)
            start = 0
            if not out:  # the heading's own chunk: from the heading on
                if heading.position >= len(lines):
                    return []
                start = _find_line(text, lines[heading.position][0], 0)
                if start < 0:
                    return []
                lines = lines[heading.position + 1 :]
            else:
                # Chunks overlap: a next chunk may repeat the end of the last part and the heading
                # itself. What comes before the heading there is the earlier part's, and the
                # heading ends nothing of its own passage.
                own = heading_key(heading.title)
                again = next((i for i, (_, keys, _) in enumerate(lines) if own in keys), None)
                if again is not None:
                    at_line = _find_line(text, lines[again][0], 0)
                    start = at_line + len(lines[again][0]) if at_line >= 0 else 0
                    lines = lines[again + 1 :]
            end, ended = len(text), False
            for line, keys, level in lines:
                # A line that is no heading of the document (a running page header) ends nothing.
                if keys & self._by_title.keys() and _ends(heading.level, level):
                    cut = _find_line(text, line, start + 1)
                    if cut > start:
                        end, ended = cut, True
                        break
            piece = text[start:end].strip()
            if piece:
                lead = paragraph_before(previous, text) if out and start == 0 and not begins else ""
                out.append(PassagePart(chunk_id, piece, heading.source, heading.source_path, page, lead))
            previous = text
            if ended:
                break
        return out

    def passages(self, title: str, max_chunks: int = PASSAGE_CHUNKS) -> List[PassagePart]:
        """The passages every heading named `title` heads, at most `max_chunks` parts in all."""
        out: List[PassagePart] = []
        for heading in self.find(title):
            out.extend(self.passage(heading, max_chunks - len(out)))
            if len(out) >= max_chunks:
                break
        return out[:max_chunks]


def heading_passage(store, passages: HeadingPassages, title: str) -> List[RetrievedChunk]:
    """The passage under the heading `title` in `store` as retrieval results, guarded as a query's
    are, each carrying the heading (`RetrievedChunk.heading`); [] when no document has that heading."""
    guard = store.cfg.guard
    out: List[RetrievedChunk] = []
    for part in passages.passages(title):
        guarded = guard_untrusted_text(part.text, guard.max_chunk_chars) if guard.enabled else None
        out.append(
            RetrievedChunk(
                chunk_id=part.chunk_id,
                text=guarded.text if guarded else part.text,
                source=part.source,
                source_path=part.source_path,
                page=part.page,
                scores={},
                raw_text=part.text,
                lead=part.lead,
                neutralised=list(guarded.findings) if guarded else [],
                locations=[(part.source, part.source_path, part.page)],
                heading=title,
            )
        )
    return out
