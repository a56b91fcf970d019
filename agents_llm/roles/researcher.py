"""The Researcher: the one role that searches the store; reports facts with their sources."""

from __future__ import annotations

from typing import Any

from report_protocol import pipeline_parts
from report_protocol.vocabulary import DRAFTING, HOLD, MISSING, PLANNING, RESEARCH, RESEARCH_EXHAUSTED, REVIEW, REVISION

from .base import ExtractiveRule, ExtractiveTurn, Role

TASK = (
    "List the key facts from the sources that serve the objective, one per line, each ending "
    "with its source in brackets. If the sources say nothing relevant, write "
    f"{RESEARCH_EXHAUSTED}."
)


def extractive(engine: Any, t: ExtractiveTurn) -> str:
    """The retrieved sentences that share the most query terms, each with its source."""
    return str(engine.researcher(list(t.queries), t.chunks, t.memory, t.inbox, focus=t.focus))


ROLE = Role(
    "Researcher",
    "Researcher",
    system=(
        "You are the Researcher of a team writing a technical report. You report facts from the "
        "retrieved sources only, each with its source. Never invent facts."
    ),
    task=TASK,
    phase_tasks={
        "planning": "Summarise which subtopics the sources cover, one per line, with sources.",
        "research": TASK,
        "drafting": TASK,
        "section_review": TASK,
    },
    objectives={
        PLANNING: (
            f"List the subtopics the sources cover, one per line, with their source. For a subtopic "
            f"of the report the sources do not cover, write a line '{MISSING} <subtopic>'."
        ),
        RESEARCH: (
            f"List the facts from the sources that serve the objective, one per line, each with its "
            f"source. If the sources have nothing new, write {RESEARCH_EXHAUSTED}."
        ),
        DRAFTING: (
            f"List the facts from the sources for the section, each with its source. If the sources "
            f"say nothing about it, write {RESEARCH_EXHAUSTED}."
        ),
        REVIEW: "Point out claims in the sections that the sources contradict, with their tags.",
        REVISION: f"If the correction needs new evidence, list it with sources; otherwise write {HOLD}.",
    },
    extractive=ExtractiveRule(extractive),
    pipeline_part=pipeline_parts.RESEARCH,
    uses_rag=True,
    reports_gaps=True,
)
