"""The report being written: one `ReportState` per episode, owned by the env.

Passed explicitly to whoever needs it (engine, Collector, judges); there is no
process-wide instance, so several envs can run in one process.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from rag.sources import SourceRef, dedup_sources

OPENING_TITLE = "In brief"  # the heading of a report's opening paragraph in its files


@dataclass
class Section:
    id: str
    title: str
    content: str
    sources: list[SourceRef] = field(default_factory=list)
    revision: int = 0  # how many times replace_section rewrote it

    @property
    def chars(self) -> int:
        return len(self.content)


@dataclass
class ReportState:
    topic: str
    sections: list[Section] = field(default_factory=list)
    progress_summary: str = ""  # the Summarizer's running account of what is written
    deficient_topics: list[str] = field(default_factory=list)  # gaps noted in planning or by judges
    key_terms: list[str] = field(default_factory=list)  # the task's key terms (the reference judge's coverage)
    # A few sentences answering the task ahead of the sections (`agents_llm.opening`); not a section:
    # the judge scores the sections, and the opening restates them.
    opening: str = ""
    _ids: Any = field(default_factory=lambda: itertools.count(1), repr=False, compare=False)

    # -- mutation ------------------------------------------------------------------
    def append(self, title: str, content: str, sources: Iterable[SourceRef] = ()) -> Section:
        section = Section(
            id=f"S{next(self._ids)}",
            title=title.strip() or "Untitled section",
            content=content.strip(),
            sources=_dedup(sources),
        )
        self.sections.append(section)
        return section

    def replace_section(
        self, section_id: str, content: str, sources: Iterable[SourceRef] | None = None, title: str | None = None
    ) -> Section:
        section = self.get(section_id)
        section.content = content.strip()
        if title:
            section.title = title.strip()
        if sources is not None:
            section.sources = _dedup(list(section.sources) + list(sources))
        section.revision += 1
        return section

    def place(
        self, revise_section: str | None, title: str, content: str, sources: Iterable[SourceRef] = ()
    ) -> tuple[Section, str]:
        """A Collector's section: rewrites ``revise_section`` when the report has it, else appends
        a new one. Returns the section and "revised" or "appended"."""
        if revise_section is not None and revise_section in {s.id for s in self.sections}:
            return self.replace_section(revise_section, content, sources=sources), "revised"
        return self.append(title, content, sources), "appended"

    def note_deficiency(self, topic: str) -> None:
        topic = topic.strip()
        if topic and topic not in self.deficient_topics:
            self.deficient_topics.append(topic)

    # -- reading -------------------------------------------------------------------
    def get(self, section_id: str) -> Section:
        for s in self.sections:
            if s.id == section_id:
                return s
        known = ", ".join(s.id for s in self.sections) or "none yet"
        raise KeyError(f"no section {section_id!r} in the report (sections: {known})")

    def list_sections(self) -> list[tuple[str, str, int]]:
        """(id, title, chars) for each section, in report order."""
        return [(s.id, s.title, s.chars) for s in self.sections]

    @property
    def chars(self) -> int:
        """Length of the report body (what the length score measures)."""
        return sum(s.chars for s in self.sections)

    @property
    def is_empty(self) -> bool:
        return not self.sections

    def all_sources(self) -> list[SourceRef]:
        return _dedup(src for s in self.sections for src in s.sources)

    def to_markdown(self, with_references: bool = True) -> str:
        parts = [f"# {self.topic}\n"]
        for s in self.sections:
            parts.append(f"## {s.title}\n\n{s.content}\n")
        refs = self.all_sources()
        if with_references and refs:
            parts.append("## References\n")
            # Several chunks of one file and page are one reference for a reader.
            labels = list(dict.fromkeys(r.label() for r in refs))
            parts.extend(f"{i}. {label}" for i, label in enumerate(labels, 1))
        return "\n".join(parts).rstrip() + "\n"

    def to_dict(self) -> dict:
        return {
            "topic": self.topic,
            "progress_summary": self.progress_summary,
            "deficient_topics": list(self.deficient_topics),
            "key_terms": list(self.key_terms),
            "opening": self.opening,
            # a source's unguarded text stays out: the saved report cites it by its guarded text
            "sections": [
                {
                    **asdict(s),
                    "sources": [
                        {k: v for k, v in r.items() if k not in ("raw_text", "lead")} for r in asdict(s)["sources"]
                    ],
                }
                for s in self.sections
            ],
        }

    @classmethod
    def from_dict(cls, data: dict) -> "ReportState":
        state = cls(
            topic=data["topic"],
            progress_summary=data.get("progress_summary", ""),
            deficient_topics=list(data.get("deficient_topics", [])),
            key_terms=list(data.get("key_terms", [])),
            opening=data.get("opening", ""),
        )
        for s in data.get("sections", []):
            state.sections.append(
                Section(
                    id=s["id"],
                    title=s["title"],
                    content=s["content"],
                    sources=[SourceRef(**r) for r in s.get("sources", [])],
                    revision=s.get("revision", 0),
                )
            )
        n = max((int(s.id[1:]) for s in state.sections if s.id[1:].isdigit()), default=0)
        state._ids = itertools.count(n + 1)
        return state


def _dedup(sources: Iterable[SourceRef]) -> list[SourceRef]:
    return dedup_sources(sources)
