"""Phase-aware prompts of the handcrafted pipeline (PLANNING, RESEARCH, DRAFTING, REVIEW, REVISION).

The engine picks these when a `RoundPlan.phase` is one of `PHASES` (the plan comes from
`algos.handcrafted`): a phase block appended to the role's system prompt, a per-phase,
per-role objective carrying the round number, the live section list (with ids) in
REVIEW and REVISION, and the gaps PLANNING found, shown to the LeadArchitect.

The signal strings below are the protocol between these prompts and the policy in
`algos.handcrafted_phases`, which keeps its own copy because `algos` never imports
`agents_llm` (tests check that both agree). Prompts stay short: the default model is a
135M-parameter model that loses long instructions.
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from . import prompts
from .report_state import ReportState

PLANNING, RESEARCH, DRAFTING, REVIEW, REVISION = "planning", "research", "drafting", "review", "revision"
PHASES = (PLANNING, RESEARCH, DRAFTING, REVIEW, REVISION)

RESEARCH_EXHAUSTED = prompts.RESEARCH_EXHAUSTED
DRAFTING_COMPLETE = "[DRAFTING_COMPLETE]"
REVISION_COMPLETE = "[REVISION_COMPLETE]"
HOLD = "[HOLD]"
SECTION_COMPLETE = "[SECTION_COMPLETE — ASSIGN NEXT SECTION]"
SECTION_SKIPPED = "[SECTION_SKIPPED — ASSIGN NEXT SECTION]"
CORRECTION_APPLIED = "[CORRECTION_APPLIED — ASSIGN NEXT CORRECTION]"
MISSING = "MISSING:"  # the Researcher's PLANNING mark for a subtopic the sources do not cover

# One short paragraph per phase, appended to every role's system prompt.
PHASE_BLOCK: dict[str, str] = {
    PLANNING: ("Phase: PLANNING. The team checks what the sources cover and fixes the outline of the report. "
               "Only plan sections the sources support."),
    RESEARCH: ("Phase: RESEARCH. The team gathers evidence from the sources for the planned sections. "
               f"When the sources have nothing new, the Researcher writes {RESEARCH_EXHAUSTED}."),
    DRAFTING: ("Phase: DRAFTING. The team writes the report one section at a time, using only the evidence. "
               f"When every planned section is written, the Lead Architect writes {DRAFTING_COMPLETE}."),
    REVIEW: ("Phase: REVIEW. The team reads the written sections and lists what must be corrected. "
             "Every finding starts with the section's tag, e.g. [SECTION_ID: S1]."),
    REVISION: ("Phase: REVISION. The team applies the corrections, one section at a time, rewriting it in place. "
               f"When no correction is left, the Lead Architect writes {REVISION_COMPLETE}."),
}

# What each role does in each phase. Missing roles fall back to the learned-policy task.
OBJECTIVE: dict[str, dict[str, str]] = {
    PLANNING: {
        "Researcher": (f"List the subtopics the sources cover, one per line, with their source. For a subtopic "
                       f"of the report the sources do not cover, write a line '{MISSING} <subtopic>'."),
        "LeadArchitect": ("Write the outline: a numbered list of 3 to 5 section titles the sources support. "
                          "Do not plan sections on known gaps."),
    },
    RESEARCH: {
        "LeadArchitect": "Write 'OBJECTIVE:' and the one fact the team must find next for the outline.",
        "Researcher": (f"List the facts from the sources that serve the objective, one per line, each with its "
                       f"source. If the sources have nothing new, write {RESEARCH_EXHAUSTED}."),
        "DataAnalyst": "Turn the evidence into a writing blueprint: key points in a logical order, with sources.",
        "Reviewer": "Point out evidence that is missing or weak for the outline.",
    },
    DRAFTING: {
        "LeadArchitect": ("Write 'OBJECTIVE:' and the title of the section to write now, then two points it must "
                          "cover."),
        "Researcher": (f"List the facts from the sources for the section, each with its source. If the sources "
                       f"say nothing about it, write {RESEARCH_EXHAUSTED}."),
        "DataAnalyst": "Write the section as clear paragraphs, using only the evidence you received.",
        "Reviewer": "Point out unsupported claims in the draft.",
    },
    REVIEW: {
        "Reviewer": ("Review the sections listed below. For each problem write one line: the section tag "
                     "[SECTION_ID: <id>], then the problem and its fix."),
        "LeadArchitect": ("Rank the review findings: keep the important ones, one per line, each starting with "
                          "its [SECTION_ID: <id>] tag."),
        "DataAnalyst": "Point out sections whose facts are not supported by their sources, with their tags.",
        "Researcher": "Point out claims in the sections that the sources contradict, with their tags.",
    },
    REVISION: {
        "LeadArchitect": (f"Assign the correction below: repeat its [SECTION_ID: <id>] tag and say what to "
                          f"change. If no correction is left, write {REVISION_COMPLETE}."),
        "Researcher": (f"If the correction needs new evidence, list it with sources; otherwise write {HOLD}."),
        "DataAnalyst": ("Rewrite the whole section with the correction applied. Start with its "
                        "[SECTION_ID: <id>] tag, then the corrected text."),
        "Reviewer": "Check that the correction was applied; list what is still wrong, with the section tag.",
    },
}

MAX_SECTION_EXCERPT = 300  # per section in REVIEW: enough to judge, small enough for a 2k context
MAX_SECTIONS_LISTED = 12


def system_prompt(role: str, phase: str) -> str:
    base = prompts.SYSTEM.get(role, prompts.SYSTEM["DataAnalyst"])
    return f"{base}\n\n{PHASE_BLOCK[phase]}"


def objective(role: str, phase: str, phase_round: int | None = None, phase_rounds: int | None = None) -> str:
    """The role's objective in this phase, headed by the phase and round number."""
    text = OBJECTIVE.get(phase, {}).get(role) or prompts.task_for(role, None)
    where = f"{phase.upper()}"
    if phase_round:
        where += f" round {phase_round}" + (f" of {phase_rounds}" if phase_rounds else "")
    return f"Objective ({where}): {text}"


def section_list(report: ReportState, *, excerpts: bool) -> str:
    """The live sections as '[SECTION_ID: S1] Title (N chars)', optionally with an excerpt."""
    lines = []
    for s in report.sections[:MAX_SECTIONS_LISTED]:
        line = f"[SECTION_ID: {s.id}] {prompts.untrusted(s.title, 120)} ({s.chars} chars)"
        if excerpts and s.content:
            body = prompts.untrusted(" ".join(s.content.split()), len(s.content) + 1)
            if len(body) > MAX_SECTION_EXCERPT:
                body = body[: MAX_SECTION_EXCERPT - 3].rstrip() + "..."
            line += f": {body}"
        lines.append(line)
    if len(report.sections) > MAX_SECTIONS_LISTED:
        lines.append(f"... and {len(report.sections) - MAX_SECTIONS_LISTED} more sections")
    return "\n".join(lines) if lines else "(no section written yet)"


def agent_messages(role: str, *, phase: str, topic: str, objective_text: str, report: ReportState,
                   inbox: Sequence[tuple[str, str]], memory: str = "", evidence: str = "", instruction: str = "",
                   phase_round: int | None = None, phase_rounds: int | None = None) -> list[dict[str, str]]:
    """The chat for one agent's turn in a handcrafted phase."""
    parts = [f"Report topic: {topic}"]
    if objective_text:
        parts.append(f"Current team objective: {prompts.untrusted(objective_text, 300)}")
    if phase in (REVIEW, REVISION):
        parts.append("Sections of the report:\n" + section_list(report, excerpts=phase == REVIEW))
    elif report.sections:
        parts.append("Sections written so far: " + "; ".join(prompts.untrusted(s.title, 120) for s in report.sections))
    if role == "LeadArchitect" and report.deficient_topics:
        parts.append("Not covered by the sources (do not plan or write about these): "
                     + "; ".join(prompts.untrusted(topic, 120) for topic in report.deficient_topics[:8]))
    parts += prompts.context_lines(summary=report.progress_summary, memory=memory, inbox=inbox, evidence=evidence)
    if instruction:
        parts.append(f"Instruction: {instruction}")
    parts.append(objective(role, phase, phase_round, phase_rounds))
    return [{"role": "system", "content": system_prompt(role, phase)},
            {"role": "user", "content": "\n\n".join(parts)}]


_MISSING_LINE = re.compile(r"^\W*MISSING\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_EXHAUSTED_FOR = re.compile(re.escape(RESEARCH_EXHAUSTED) + r"\s*nothing relevant found for:\s*(.+)", re.IGNORECASE)


def extract_deficiencies(text: str) -> list[str]:
    """Subtopics an output says the sources do not cover ('MISSING: x' lines, or the
    engine's '[RESEARCH_EXHAUSTED] nothing relevant found for: q1; q2')."""
    found = [m.group(1).strip(" .;") for m in _MISSING_LINE.finditer(text)]
    m = _EXHAUSTED_FOR.search(text)
    if m:
        found += [q.strip(" .") for q in m.group(1).split(";")]
    return [f[:120] for f in found if len(f) >= 3]


def after_round(phase: str | None, outputs: Mapping[str, str], report: ReportState, roles: Mapping[str, str]) -> None:
    """Persist what a round of `phase` found out into the report state.

    PLANNING: the Researcher's deficiencies become `report.deficient_topics`, which the
    LeadArchitect sees in every later prompt and the exported report lists as gaps.
    """
    if phase != PLANNING:
        return
    for agent, text in outputs.items():
        if roles.get(agent) == "Researcher" and text:
            for topic in extract_deficiencies(text):
                report.note_deficiency(topic)


def handles(phase: Any) -> bool:
    return phase in PHASES
