"""A plan from the task's parts: each part a section under the documents' heading closest to
it, or a plain line saying the documents do not cover it.

A task that asks three things ("when is it written, how is it named and how is it sent to a
program?") is answered only when each of them gets a section. The parts come from
`agents_llm.task_parts`; each part's section is the document heading closest to the part
(`agents_llm.document_outline`, the part as its topic, with the task's subject before a colon
beside it), one heading per part. A part no heading is about gets a section titled by the part
itself when a search for it finds a passage naming its words (`agents_llm.coverage`); else it
is not covered, and the report says so. After the run a part is covered when its section is
in the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence

from agents_llm.coverage import probe_coverage
from agents_llm.sentence_reuse import content_stems
from agents_llm.task_parts import task_parts

NOT_COVERED = "the documents do not cover this"


@dataclass
class PartPlan:
    part: str
    title: Optional[str]  # its section's title; None: not covered
    covered: bool = False  # after the run: its section is in the report

    def line(self) -> str:
        return f"{self.part}: {NOT_COVERED}."


def plan_parts(task: str, store: Optional[Any], search: Callable[[List[str]], Sequence[Any]]) -> List[PartPlan]:
    """One `PartPlan` per part of ``task``; [] when the task asks one thing (the outline is then
    the documents' headings closest to the whole task). ``store``: the RAG store (its headings
    and embedding), None with a caller's own retriever (parts are then titled by themselves)."""
    parts = task_parts(task)
    if len(parts) < 2:
        return []
    head, colon, _ = task.partition(":")
    context = head.strip() if colon else ""
    headings, quotable = [], None
    if store is not None:
        from agents_llm.document_outline import passage_has_prose
        from rag.heading_passages import HeadingPassages

        passages = HeadingPassages.of_store(store)
        headings, quotable = passages.headings, passage_has_prose(passages)
    taken: set[str] = set()
    plans: List[PartPlan] = []
    for i, part in enumerate(parts):
        topic = f"{part} ({context})" if context else part
        # What this part asks that the others do not: a heading about it names one of these words.
        others = set().union(*(content_stems(p) for j, p in enumerate(parts) if j != i))
        own = content_stems(part) - others
        title = _closest_heading(headings, topic, store, quotable, taken, own)
        if title is None and probe_coverage(topic, search).covered:
            title = part
        if title is not None:
            taken.add(title.lower())
        plans.append(PartPlan(part, title))
    return plans


def _closest_heading(
    headings: Sequence[Any], topic: str, store: Any, quotable: Any, taken: set[str], own: set[str]
) -> Optional[str]:
    if not headings or store is None:
        return None
    from agents_llm.document_outline import document_outline
    from rag.headings import heading_key

    under = {heading_key(h.title): h.under for h in headings}
    for entry in document_outline(headings, topic, store.embedding, quotable=quotable):
        about = content_stems(f"{entry.title} {under.get(heading_key(entry.title), '')}")
        if entry.title.lower() not in taken and (not own or own & about):
            return entry.title
    return None


def mark_covered(plans: Sequence[PartPlan], section_titles: Sequence[str]) -> None:
    """After the run: a part is covered when a section under its title was written."""
    written = {t.strip().lower() for t in section_titles}
    for plan in plans:
        plan.covered = plan.title is not None and plan.title.strip().lower() in written
