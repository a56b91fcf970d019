"""The Lead Architect: plans the report and sets the team's objective; writes no report text."""

from __future__ import annotations

from typing import Any

from report_protocol import pipeline_parts
from report_protocol.vocabulary import DRAFTING, PLANNING, RESEARCH, REVIEW, REVISION, REVISION_COMPLETE

from .base import ExtractiveRule, ExtractiveTurn, Role


def extractive(engine: Any, t: ExtractiveTurn) -> str:
    """An objective and outline from the key terms received (v2: following the plan's directive)."""
    from ..extractive import rules_v2

    output = engine.lead_architect(t.report, t.inbox)
    if engine.version >= 2:
        output = rules_v2.lead_architect(t.report, t.inbox, t.directive, output)
    return str(output)


ROLE = Role(
    "LeadArchitect",
    "Lead Architect",
    system=(
        "You are the Lead Architect of a team writing a technical report. You plan; you do not "
        "write the report. Decide the next section the team should add."
    ),
    task=(
        "Write one line that starts with 'OBJECTIVE:' naming the next section to write, "
        "then up to three short bullet points it must cover."
    ),
    phase_tasks={
        "planning": (
            "Write an outline of the report: 'OBJECTIVE:' and the first section, then the list "
            "of section titles, grounded in what the sources cover."
        ),
        "research": "Write 'OBJECTIVE:' and name what the team must find out next.",
        "drafting": "Write 'OBJECTIVE:' and name the section to write now.",
        "validation": "Decide whether the report is complete. Answer with the remaining gaps, if any.",
    },
    objectives={
        PLANNING: (
            "Write the outline: a numbered list of 3 to 5 section titles the sources support. "
            "Do not plan sections on known gaps."
        ),
        RESEARCH: "Write 'OBJECTIVE:' and the one fact the team must find next for the outline.",
        DRAFTING: "Write 'OBJECTIVE:' and the title of the section to write now, then two points it must cover.",
        REVIEW: (
            "Rank the review findings: keep the important ones, one per line, each starting with "
            "its [SECTION_ID: <id>] tag."
        ),
        REVISION: (
            f"Assign the correction below: repeat its [SECTION_ID: <id>] tag and say what to "
            f"change. If no correction is left, write {REVISION_COMPLETE}."
        ),
    },
    extractive=ExtractiveRule(extractive),
    pipeline_part=pipeline_parts.LEAD,
    sets_objective=True,
    sees_gaps=True,
)
