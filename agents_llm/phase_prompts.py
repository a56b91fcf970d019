"""Phase-aware prompts of the handcrafted pipeline (PLANNING, RESEARCH, DRAFTING, REVIEW, REVISION).

The engine picks these when a `RoundPlan.phase` is one of `PHASES` (the plan comes from
`algos.handcrafted`): a phase block appended to the role's system prompt, a per-phase,
per-role objective carrying the round number, the live section list (with ids) in
REVIEW and REVISION, and the gaps PLANNING found, shown to the LeadArchitect. The
plan's directives (`report_protocol.Directive`) and its gate check are worded here too.

The signals the prompts ask for are the protocol's (`report_protocol.vocabulary`); the
engine reads them back (`agents_llm.engine.feedback`). Prompts stay short: the default
model is a 135M-parameter model that loses long instructions.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from report_protocol import Directive, RoundFeedback
from report_protocol import vocabulary as v
from report_protocol.vocabulary import (
    DRAFTING,
    DRAFTING_COMPLETE,
    PLANNING,
    RESEARCH,
    RESEARCH_EXHAUSTED,
    REVIEW,
    REVISION,
    REVISION_COMPLETE,
)

from . import prompts
from .directive_words import DEFAULT_FINDING, section_tag
from .report_state import ReportState
from .roles import AS_TASK, ROLES, get_role

PHASES = v.PHASE_ORDER

# One short paragraph per phase, appended to every role's system prompt.
PHASE_BLOCK: dict[str, str] = {
    PLANNING: (
        "Phase: PLANNING. The team checks what the sources cover and fixes the outline of the report. "
        "Only plan sections the sources support."
    ),
    RESEARCH: (
        "Phase: RESEARCH. The team gathers evidence from the sources for the planned sections. "
        f"When the sources have nothing new, the Researcher writes {RESEARCH_EXHAUSTED}."
    ),
    DRAFTING: (
        "Phase: DRAFTING. The team writes the report one section at a time, using only the evidence. "
        f"When every planned section is written, the Lead Architect writes {DRAFTING_COMPLETE}."
    ),
    REVIEW: (
        "Phase: REVIEW. The team reads the written sections and lists what must be corrected. "
        "Every finding starts with the section's tag, e.g. [SECTION_ID: S1]."
    ),
    REVISION: (
        "Phase: REVISION. The team applies the corrections, one section at a time, rewriting it in place. "
        f"When no correction is left, the Lead Architect writes {REVISION_COMPLETE}."
    ),
}


# What each role does in each phase: declared on the role (`Role.objectives`); this is a live,
# read-only view, by phase then role, of the objectives that are not the role's round task.
def _objectives() -> dict[str, dict[str, str]]:
    return {
        phase: {
            r.name: str(text)
            for r in ROLES.values()
            if (text := (r.objectives or {}).get(phase, AS_TASK)) is not AS_TASK
        }
        for phase in PHASES
    }


OBJECTIVE: Mapping[str, Mapping[str, str]] = prompts.RoleMap(_objectives)

GAPS_RULE = "Do not plan or write about the subtopics listed as not covered by the sources."
MAX_SECTION_EXCERPT = 300  # per section in REVIEW: enough to judge, small enough for a 2k context
MAX_SECTIONS_LISTED = 12


def system_prompt(role: str, phase: str) -> str:
    return f"{prompts.system_for(role)}\n\n{PHASE_BLOCK[phase]}"


def objective(role: str, phase: str, phase_round: int | None = None, phase_rounds: int | None = None) -> str:
    """The role's objective in this phase, headed by the phase and round number."""
    text = get_role(role).objective(phase)
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


def agent_prompt(
    role: str,
    *,
    phase: str,
    topic: str,
    objective_text: str,
    report: ReportState,
    inbox: Sequence[tuple[str, str]],
    memory: str = "",
    evidence: str = "",
    instruction: str = "",
    instruction_data: Sequence[str] = (),
    phase_round: int | None = None,
    phase_rounds: int | None = None,
) -> prompts.AgentPrompt:
    """The prompt for one agent's turn in a handcrafted phase, stable parts first (as
    `prompts.agent_prompt`): role and phase, topic, the report so far, this round's
    material and the objective, then the instruction and the role's objective in the phase.
    The section list (titles and excerpts), the gaps PLANNING found and the team objective
    came from the report and from teammates: they are in the data block with the messages."""
    data = []
    if phase in (REVIEW, REVISION):
        data.append("Sections of the report:\n" + section_list(report, excerpts=phase == REVIEW))
    else:
        data.append(prompts.outline_item([s.title for s in report.sections]))
    gaps = report.deficient_topics[:8] if get_role(role).sees_gaps else []
    if gaps:
        data.append("Not covered by the sources: " + "; ".join(prompts.untrusted(topic, 120) for topic in gaps))
    data += prompts.context_items(summary=report.progress_summary, memory=memory, inbox=inbox, evidence=evidence)
    data.append(prompts.objective_item(objective_text))
    data += instruction_data  # what the instruction refers to (`directive_parts`), guarded there
    directions = [GAPS_RULE] if gaps else []  # what to do with them is ours, outside the data block
    if instruction:
        directions.append(f"Instruction: {instruction}")
    directions.append(objective(role, phase, phase_round, phase_rounds))
    return prompts.AgentPrompt(
        prompts.system_for(role), topic, tuple(d for d in data if d), tuple(directions), PHASE_BLOCK[phase]
    )


def agent_messages(role: str, **kwargs: Any) -> list[dict[str, str]]:
    """The chat of `agent_prompt(role, **kwargs)` for a call that stands alone."""
    return agent_prompt(role, **kwargs).messages()


# The gate check's question when the plan leaves the wording to the engine (GateCheck.question None).
GATE_QUESTION = (
    "Next is {phase} round {round}. Would your contribution add something new to it? "
    "Answer YES to EXECUTE or NO to SKIP."
)


def gate_question(agent: str, phase: str | None, next_round: int | None) -> str:
    return GATE_QUESTION.format(agent=agent, phase=phase, round=next_round)


def directive_parts(d: Directive) -> tuple[str, list[str]]:
    """A plan's directive for an agent's prompt: (the instruction line, the data items it
    refers to). The section's title comes from the Lead Architect's outline and the
    finding from the Reviewer's output, so they are data: guarded and shown in the data
    block (`agent_messages`), the instruction naming them by their label. The notice, the
    section id and the counts are the plan's."""
    notice = f"{v.NOTICES[d.notice]} " if d.notice else ""
    tag = section_tag(d.section_id)
    title = prompts.untrusted(d.title or "", 160)
    finding = prompts.untrusted(d.finding or DEFAULT_FINDING, 300)
    section = f"Section to write now ({d.position} of {d.total}): {title}"
    correction = f"Correction for {tag} ({title}): {finding}"
    wording: dict[str, Callable[[], tuple[str, list[str]]]] = {
        v.ASSIGN_SECTION: lambda: (f"{notice}Assign the section to write now, given above.", [section]),
        v.FIND_EVIDENCE: lambda: (
            "Find evidence for the section given above.",
            [f"Section to find evidence for: {title}"],
        ),
        v.WRITE_SECTION: lambda: ("Write the section given above.", [f"Section to write: {title}"]),
        v.CLOSE_DRAFTING: lambda: (f"{notice}Every planned section is written: answer {DRAFTING_COMPLETE}.", []),
        v.NAME_NEXT_SECTION: lambda: (f"{notice}Name the next section the report needs.", []),
        v.ASSIGN_CORRECTION: lambda: (f"{notice}Assign the correction for {tag} given above.", [correction]),
        v.APPLY_CORRECTION: lambda: (
            f"Rewrite section {tag} applying the correction given above. Start your answer with {tag}.",
            [correction],
        ),
        v.CLOSE_REVISION: lambda: (f"{notice}Every correction is applied: answer {REVISION_COMPLETE}.", []),
    }
    return wording[d.kind]()


def directive_text(d: Directive) -> str:
    """The directive as one text (instruction, then its data), for logs and tests; prompts
    use `directive_parts`, which keeps the data in the data block."""
    instruction, data = directive_parts(d)
    return "\n".join([*data, instruction])


def after_round(phase: str | None, feedback: RoundFeedback, report: ReportState, roles: Mapping[str, str]) -> None:
    """Persist what a round of `phase` found out into the report state.

    PLANNING: the deficiencies of the roles that report gaps (the Researcher) become
    `report.deficient_topics`, which the roles that see gaps (the LeadArchitect) see in
    every later prompt and the exported report lists as gaps. `roles`: agent -> role name.
    """
    if phase != PLANNING:
        return
    for agent, read in feedback.agents.items():
        role = ROLES.get(roles.get(agent, ""))
        if role is not None and role.reports_gaps and read.text:
            for topic in read.deficiencies:
                report.note_deficiency(topic)


def handles(phase: Any) -> bool:
    return phase in PHASES
