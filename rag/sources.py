"""SourceBuffer: the sources behind the report part being written.

The Researcher adds what it retrieved; when the part is appended to the report, the
Collector flushes the buffer into that section's sources. References render with page
numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Protocol, Sequence, Tuple


class HasSource(Protocol):
    source: str
    source_path: str
    page: Optional[int]


@dataclass(frozen=True)
class SourceRef:
    source: str
    source_path: str
    pages: Tuple[int, ...] = ()

    def render(self) -> str:
        if not self.pages:
            return self.source
        label = "p." if len(self.pages) == 1 else "pp."
        return f"{self.source}, {label} {', '.join(str(page) for page in self.pages)}"


def merge_sources(*groups: Iterable[SourceRef]) -> List[SourceRef]:
    """Union of source references, one per file, pages merged and sorted, first-seen order."""
    pages: Dict[str, set] = {}
    names: Dict[str, str] = {}
    for group in groups:
        for ref in group:
            names.setdefault(ref.source_path, ref.source)
            pages.setdefault(ref.source_path, set()).update(ref.pages)
    return [SourceRef(names[path], path, tuple(sorted(pages[path]))) for path in names]


class SourceBuffer:
    def __init__(self) -> None:
        self._refs: List[SourceRef] = []

    def add(self, results: Iterable[HasSource]) -> None:
        for result in results:
            pages = (result.page,) if result.page is not None else ()
            self._refs.append(SourceRef(result.source, result.source_path, pages))

    def pending(self) -> List[SourceRef]:
        return merge_sources(self._refs)

    def flush(self) -> List[SourceRef]:
        """The buffered sources, merged; the buffer is empty afterwards."""
        refs = merge_sources(self._refs)
        self._refs = []
        return refs

    def flush_into(self, section_sources: List[SourceRef]) -> List[SourceRef]:
        """Flush into a section's source list in place (merging); returns that list."""
        merged = merge_sources(section_sources, self.flush())
        section_sources[:] = merged
        return section_sources

    def __len__(self) -> int:
        return len(merge_sources(self._refs))


def render_references(refs: Sequence[SourceRef]) -> str:
    """A numbered reference list: `[1] report.pdf, pp. 2, 5`."""
    return "\n".join(f"[{number}] {ref.render()}" for number, ref in enumerate(merge_sources(refs), start=1))
