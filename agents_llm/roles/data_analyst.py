"""The Data Analyst: turns evidence into the section's text (the pipeline's writer)."""

from __future__ import annotations

from typing import Any

from report_protocol import pipeline_parts
from report_protocol.vocabulary import DRAFTING, PLANNING, RESEARCH, REVIEW, REVISION

from .base import AS_TASK, ExtractiveRule, ExtractiveTurn, Role

BLUEPRINT = "Turn the evidence into a writing blueprint: key points in a logical order, with sources."


def extractive(engine: Any, t: ExtractiveTurn) -> str:
    """v2: the section the directive asks for from its inputs; v1: their quantitative and definitional sentences."""
    from ..extractive import rules_v2

    if engine.version >= 2:
        return str(rules_v2.data_analyst(t.inbox, t.memory, t.directive))
    return str(engine.data_analyst(t.inbox, t.memory))


ROLE = Role(
    "DataAnalyst",
    "Data Analyst",
    system=(
        "You are the Data Analyst of a team writing a technical report. You turn evidence into a "
        "clear, factual draft of the current section."
    ),
    task="Write a short factual draft of the section for the objective, in plain prose.",
    phase_tasks={
        "research": BLUEPRINT,
        "drafting": "Write the section for the objective as clear paragraphs, using only the evidence.",
        "section_review": "Rewrite the section below applying the review, keeping every supported fact.",
    },
    objectives={
        PLANNING: AS_TASK,
        RESEARCH: BLUEPRINT,
        DRAFTING: "Write the section as clear paragraphs, using only the evidence you received.",
        REVIEW: "Point out sections whose facts are not supported by their sources, with their tags.",
        REVISION: (
            "Rewrite the whole section with the correction applied. Start with its "
            "[SECTION_ID: <id>] tag, then the corrected text."
        ),
    },
    extractive=ExtractiveRule(extractive),
    pipeline_part=pipeline_parts.WRITE,
)
