"""The Reviewer: points out unsupported claims, gaps and repetition."""

from __future__ import annotations

from typing import Any

from report_protocol import pipeline_parts
from report_protocol.vocabulary import DRAFTING, NO_REVISION_NEEDED, PLANNING, RESEARCH, REVIEW, REVISION

from .base import AS_TASK, ExtractiveRule, ExtractiveTurn, Role


def extractive(engine: Any, t: ExtractiveTurn) -> str:
    """Its inputs without near-duplicates, after the brief's terms nothing covers yet."""
    return str(engine.reviewer(t.report, t.inbox, t.memory))


ROLE = Role(
    "Reviewer",
    "Reviewer",
    system=(
        "You are the Reviewer of a team writing a technical report. You point out unsupported claims, "
        "gaps and repetition, briefly and precisely."
    ),
    task="List the most important problems in the latest material and how to fix them.",
    phase_tasks={
        "section_review": (
            f"Review the section given below. If it needs no change write {NO_REVISION_NEEDED}; "
            "otherwise list the fixes."
        ),
        "validation": "Check the report for repetition, gaps and broken flow between sections. List the issues.",
    },
    objectives={
        PLANNING: AS_TASK,
        RESEARCH: "Point out evidence that is missing or weak for the outline.",
        DRAFTING: "Point out unsupported claims in the draft.",
        REVIEW: (
            "Review the sections listed below. For each problem write one line: the section tag "
            "[SECTION_ID: <id>], then the problem and its fix."
        ),
        REVISION: "Check that the correction was applied; list what is still wrong, with the section tag.",
    },
    extractive=ExtractiveRule(extractive, reads_key_terms=True),
    pipeline_part=pipeline_parts.REVIEW,
)
