"""The words the prompts and the policies share: phase names, signals, notices, directive ids.

The phase prompts (`agents_llm.phase_prompts`) teach the agents to write these signals;
the engine finds them in the model's output (`agents_llm.engine.feedback`) and reports
them as structured feedback (`report_protocol.feedback`); a fixed policy
(`algos.handcrafted`) reads that feedback and answers with directives named here. One
copy, imported by every layer.
"""

from __future__ import annotations

from .pipeline_parts import LEAD
from .pipeline_parts import RESEARCH as RESEARCH_PART

# Phase labels of the handcrafted pipeline, in pipeline order (`RoundPlan.phase` carries them).
PLANNING, RESEARCH, DRAFTING, REVIEW, REVISION = "planning", "research", "drafting", "review", "revision"
PHASE_ORDER = (PLANNING, RESEARCH, DRAFTING, REVIEW, REVISION)

# Signals an agent writes in its output.
RESEARCH_EXHAUSTED = "[RESEARCH_EXHAUSTED]"  # the sources have nothing (more) on this
DRAFTING_COMPLETE = "[DRAFTING_COMPLETE]"  # every planned section is written
REVISION_COMPLETE = "[REVISION_COMPLETE]"  # every correction is applied
HOLD = "[HOLD]"  # nothing from me this round
NO_QUERY = "NO_QUERY"  # the Researcher decided not to search
NO_REVISION_NEEDED = "[NO_REVISION_NEEDED]"  # the Reviewer found nothing to fix in a section
SIGNALS = (RESEARCH_EXHAUSTED, DRAFTING_COMPLETE, REVISION_COMPLETE, HOLD)
# Written in its phase by the part that closes the phase, a signal ends the phase early.
EXIT_SIGNALS = {RESEARCH: RESEARCH_EXHAUSTED, DRAFTING: DRAFTING_COMPLETE, REVISION: REVISION_COMPLETE}
# Who closes each phase (a `report_protocol.pipeline_parts` part, as the phase prompts say): every
# agent reads the phase block that names the signal, and a small model echoes it, so a signal from
# another part is not the phase's end (a DataAnalyst's "[DRAFTING_COMPLETE]" ended drafting before
# any section was written).
EXIT_SIGNALLERS = {RESEARCH: RESEARCH_PART, DRAFTING: LEAD, REVISION: LEAD}
# Absence markers: an output holding one does not count as having said something.
NON_OUTPUT_MARKERS = (HOLD, RESEARCH_EXHAUSTED)
# A line that opens with one of these declares absence, whatever detail follows (the
# queries tried): such a line never becomes report text.
ABSENCE_LEADERS = (RESEARCH_EXHAUSTED, NO_REVISION_NEEDED, NO_QUERY)

# "[SECTION_ID: S3]" names the live section a finding or a rewrite is for.
SECTION_ID_TAG = "SECTION_ID"
# "MISSING: <subtopic>": the Researcher's PLANNING mark for a subtopic the sources do not cover.
MISSING = "MISSING:"
# What the engine writes for a Researcher whose search found nothing (followed by the queries).
NOTHING_FOUND_FOR = "nothing relevant found for:"

# Notices: the task an agent finished last round, shown before its next one (`Directive.notice`),
# by id -> the marker the prompts show.
SECTION_COMPLETE, SECTION_SKIPPED, CORRECTION_APPLIED = "section_complete", "section_skipped", "correction_applied"
NOTICES = {
    SECTION_COMPLETE: "[SECTION_COMPLETE — ASSIGN NEXT SECTION]",
    SECTION_SKIPPED: "[SECTION_SKIPPED — ASSIGN NEXT SECTION]",
    CORRECTION_APPLIED: "[CORRECTION_APPLIED — ASSIGN NEXT CORRECTION]",
}

# Directive ids (`Directive.kind`): the tasks a plan may give an agent; `agents_llm.phase_prompts` words them.
ASSIGN_SECTION = "assign_section"  # LeadArchitect: the section to write now (title, position, total)
FIND_EVIDENCE = "find_evidence"  # Researcher: evidence for the section (title)
WRITE_SECTION = "write_section"  # DataAnalyst: write the section (title)
CLOSE_DRAFTING = "close_drafting"  # LeadArchitect: every planned section is written; signal DRAFTING_COMPLETE
NAME_NEXT_SECTION = "name_next_section"  # LeadArchitect: no outline; name the next section the report needs
ASSIGN_CORRECTION = "assign_correction"  # LeadArchitect: the correction to assign (section_id, title, finding)
APPLY_CORRECTION = "apply_correction"  # DataAnalyst: rewrite the section applying it (section_id, title, finding)
CLOSE_REVISION = "close_revision"  # LeadArchitect: every correction is applied; signal REVISION_COMPLETE
DIRECTIVE_KINDS = (
    ASSIGN_SECTION,
    FIND_EVIDENCE,
    WRITE_SECTION,
    CLOSE_DRAFTING,
    NAME_NEXT_SECTION,
    ASSIGN_CORRECTION,
    APPLY_CORRECTION,
    CLOSE_REVISION,
)
