"""Sources: which retrieved chunks a piece of the report rests on.

`SourceRef` is one chunk (file, page, chunk id and its text, which the reference judge
grounds sentences in). The Researcher's retrievals go into a `SourceBuffer`; when the
part is appended, the Collector flushes the buffer into that section's sources.
`render_references` lists them per file with page numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from rag.headings import heading_key


@dataclass(frozen=True)
class SourceRef:
    source: str  # file name as cited
    page: Optional[int] = None
    chunk_id: str = ""
    text: str = ""  # the chunk's (guarded) text
    source_path: str = ""  # full path: two files with one name stay two sources
    heading: str = ""  # the document heading whose passage this text is ('' for a search hit)
    # What the document wrote, unguarded: only for quoting its code verbatim in a report
    # (agents_llm.section_examples), never for a prompt. Not part of the reference's identity,
    # and not kept in a saved report (ReportState.to_dict).
    raw_text: str = field(default="", compare=False, repr=False)
    # The part of the paragraph the chunk begins inside that lies before it, as written ('' when it
    # begins one): read with its first paragraph to tell an order cut in two; never quoted, prompted or saved.
    lead: str = field(default="", compare=False, repr=False)

    @property
    def file_key(self) -> str:
        return self.source_path or self.source

    @property
    def chunk_key(self) -> Tuple[str, Optional[int], str]:
        """The stored chunk this text is (or is cut from)."""
        return (self.file_key, self.page, self.chunk_id)

    @property
    def key(self) -> Tuple[str, Optional[int], str, str]:
        """The passage: two headings' parts of one chunk are two passages."""
        return (self.file_key, self.page, self.chunk_id, self.heading)

    def label(self) -> str:
        return f"{self.source}, p. {self.page}" if self.page is not None else self.source


def dedup_sources(*groups: Iterable[SourceRef]) -> List[SourceRef]:
    """Union of chunk references in first-seen order."""
    seen, out = set(), []
    for group in groups:
        for ref in group:
            if ref.key not in seen:
                seen.add(ref.key)
                out.append(ref)
    return out


def group_by_file(refs: Iterable[SourceRef]) -> List[Tuple[str, str, Tuple[int, ...]]]:
    """(source, source_path, sorted pages) per file, in first-seen order."""
    pages: Dict[str, set] = {}
    names: Dict[str, str] = {}
    for ref in refs:
        names.setdefault(ref.file_key, ref.source)
        pages.setdefault(ref.file_key, set())
        if ref.page is not None:
            pages[ref.file_key].add(ref.page)
    return [(names[k], k, tuple(sorted(pages[k]))) for k in names]


def as_source_ref(result: Any) -> SourceRef:
    """A SourceRef from a retrieval result (anything with source, page, chunk_id, text)."""
    if isinstance(result, SourceRef):
        return result
    return SourceRef(
        source=result.source,
        page=result.page,
        chunk_id=getattr(result, "chunk_id", ""),
        text=getattr(result, "text", ""),
        source_path=getattr(result, "source_path", ""),
        heading=getattr(result, "heading", ""),
        raw_text=getattr(result, "raw_text", ""),
        lead=getattr(result, "lead", ""),
    )


def as_source_refs(result: Any) -> List[SourceRef]:
    """One SourceRef per location of a retrieval result: identical text is stored once,
    and a section resting on it rests on every place it occurs."""
    locations = getattr(result, "locations", None)
    if isinstance(result, SourceRef) or not locations:
        return [as_source_ref(result)]
    chunk_id, text, heading, raw, lead = (
        getattr(result, "chunk_id", ""),
        getattr(result, "text", ""),
        getattr(result, "heading", ""),
        getattr(result, "raw_text", ""),
        getattr(result, "lead", ""),
    )
    return [
        SourceRef(
            source=name,
            page=page,
            chunk_id=chunk_id,
            text=text,
            source_path=path,
            heading=heading,
            raw_text=raw,
            lead=lead,
        )
        for name, path, page in locations
    ]


def passages_first(refs: Sequence[SourceRef]) -> List[SourceRef]:
    """`refs` less each whole chunk of which a heading's passage is among them: the passage (the
    chunk cut to what the heading heads) stands for it, so a section planned from that heading
    is written from, and cites, its own part and not its neighbours'."""
    cut = {ref.chunk_key for ref in refs if ref.heading}
    return [ref for ref in refs if ref.heading or ref.chunk_key not in cut]


def sources_under_heading(refs: Sequence[SourceRef], heading: str) -> List[SourceRef]:
    """What a section planned from the document heading `heading` is written from, and grounded in:
    that heading's passages when they are among `refs` (search hits elsewhere would pull the section
    back to the topic's vocabulary), else the search hits; never another heading's passage, fetched
    for a section not yet written."""
    key = heading_key(heading)
    own = [ref for ref in refs if ref.heading and heading_key(ref.heading) == key]
    return own or [ref for ref in refs if not ref.heading]


class SourceBuffer:
    """The chunks retrieved since the last append."""

    def __init__(self) -> None:
        self._refs: List[SourceRef] = []

    def add(self, results: Iterable[Any]) -> None:
        self._refs = passages_first(dedup_sources(self._refs, (ref for r in results for ref in as_source_refs(r))))

    def pending(self) -> List[SourceRef]:
        return list(self._refs)

    def flush(self) -> List[SourceRef]:
        """The buffered sources; the buffer is empty afterwards."""
        refs, self._refs = self._refs, []
        return refs

    def flush_into(self, section_sources: List[SourceRef]) -> List[SourceRef]:
        """Flush into a section's source list in place (deduplicated); returns that list."""
        section_sources[:] = dedup_sources(section_sources, self.flush())
        return section_sources

    def __len__(self) -> int:
        return len(self._refs)


def render_references(refs: Sequence[SourceRef]) -> str:
    """A numbered reference list, one line per file: `[1] report.pdf, pp. 2, 5`."""
    lines = []
    for number, (source, _path, pages) in enumerate(group_by_file(refs), start=1):
        label = "" if not pages else (" p. " if len(pages) == 1 else " pp. ") + ", ".join(map(str, pages))
        lines.append(f"[{number}] {source}{',' + label if label else ''}")
    return "\n".join(lines)
