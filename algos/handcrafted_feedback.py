"""What the handcrafted pipeline takes from a round: the engine's structured feedback.

The report env puts the engine's reading of the round (``report_protocol.RoundFeedback``:
per agent whether it said something, the signals, outline titles and tagged findings it
wrote; the collector's result; the live sections; the gate verdict) in its full infos
under ``feedback``. :func:`feedback_from_infos` gets it out, :class:`WorkLog` keeps what
the pipeline learns from it across rounds. Nothing here reads the model's text: the
decisions are made from the feedback's fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from report_protocol import RoundFeedback
from report_protocol.pipeline_parts import LEAD, RESEARCH, REVIEW, WRITE

# The built-in role that plays each part: its agent's name is the part's agent when the env lists no
# parts (an EnvSpec without extras["pipeline_parts"]), an agent whose name starts with it plays the part.
CONVENTIONAL_AGENTS = {LEAD: "LeadArchitect", RESEARCH: "Researcher", WRITE: "DataAnalyst", REVIEW: "Reviewer"}


def agent_parts(agents: Sequence[str], declared: Optional[Mapping[str, Any]] = None) -> dict[str, str]:
    """Each agent's pipeline part (report_protocol.pipeline_parts): the env's (`EnvSpec.extras
    ["pipeline_parts"]`, from each agent's role) when given, else by the built-in roles' names."""
    if declared is not None:
        missing = [a for a in agents if a not in declared]
        if missing:
            raise ValueError(f"pipeline_parts: no part for agents {missing} (parts given: {dict(declared)})")
        return {a: str(declared[a]) for a in agents}
    out = {}
    for a in agents:
        part = next((p for p, name in CONVENTIONAL_AGENTS.items() if a.startswith(name)), None)
        if part is not None:
            out[a] = part
    return out


def feedback_from_infos(infos: Optional[Mapping[str, Any]]) -> Optional[RoundFeedback]:
    """The round's feedback from the env's full infos (one agent's dict or all of them); None after reset."""
    if not infos:
        return None
    info: Mapping[str, Any] = infos
    if "feedback" not in infos:
        found = next((v for v in infos.values() if isinstance(v, Mapping) and "feedback" in v), None)
        if found is None:
            if any(isinstance(v, Mapping) and "round" in v for v in infos.values()):
                # The env's default infos hold numbers only (for TorchRL): without the
                # round's feedback the pipeline would plan blind.
                raise ValueError(
                    "the handcrafted pipeline reads the round's feedback, which these infos lack: pass "
                    "env.last_round_info() to next_plan, or build the env with infos='full'"
                )
            return None
        info = found
    return RoundFeedback.from_dict(info["feedback"])


@dataclass
class Correction:
    section_id: str
    finding: str


@dataclass
class WorkLog:
    """What the pipeline learned from the rounds of an episode."""

    produced: set[str] = field(default_factory=set)  # agents that said something since the last memory wipe
    outline: list[str] = field(default_factory=list)  # the planned section titles
    outline_fixed: bool = False  # the outline was given (HandcraftedConfig.outline): the model's does not replace it
    sections: list[tuple[str, str, int]] = field(default_factory=list)  # live (id, title, chars)
    corrections: list[Correction] = field(default_factory=list)  # REVIEW's tagged findings, in order
    review_notes: list[str] = field(default_factory=list)  # the Reviewer's untagged notes
    parts: Mapping[str, str] = field(default_factory=dict)  # each agent's pipeline part (agent_parts)

    def note_round(self, fb: RoundFeedback) -> None:
        """Every round: the live sections and who said something."""
        if fb.sections or fb.collector_status in ("appended", "revised"):
            self.sections = [(s.id, s.title, s.chars) for s in fb.sections]
        self.produced |= {agent for agent, read in fb.agents.items() if read.said_something}

    def take_outline(self, fb: RoundFeedback) -> None:
        """PLANNING: the LeadArchitect's latest usable outline wins, unless one was given."""
        if self.outline_fixed:
            return
        for agent, read in fb.agents.items():
            if self.parts.get(agent) == LEAD and read.outline:
                self.outline = list(read.outline)

    def take_findings(self, fb: RoundFeedback) -> None:
        """REVIEW: tagged findings become corrections (once each); the Reviewer's notes are kept."""
        for agent in sorted(fb.agents):
            read = fb.agents[agent]
            for f in read.findings:
                if not any(c.section_id == f.section_id and c.finding == f.text for c in self.corrections):
                    self.corrections.append(Correction(f.section_id, f.text))
            if read.said_something and self.parts.get(agent) == REVIEW:
                self.review_notes.append(read.text.strip())

    def corrections_for_revision(self, limit: int) -> list[Correction]:
        """REVISION's work list: the tagged findings, or without any, every section with the review notes."""
        if self.corrections:
            return self.corrections[:limit]
        note = " ".join(self.review_notes)[-400:]
        return [Correction(sid, note) for sid, _, _ in self.sections][:limit]

    def title_of(self, section_id: str) -> str:
        return next((t for sid, t, _ in self.sections if sid == section_id), "")


def writers_target(fb: RoundFeedback, parts: Mapping[str, str]) -> Optional[str]:
    """The section the round's outputs tag first, the writer's (the DataAnalyst's) before the others'."""
    for agent in sorted(fb.agents, key=lambda a: parts.get(a) != WRITE):
        findings = fb.agents[agent].findings
        if findings:
            return findings[0].section_id
    return None


def no_evidence(fb: RoundFeedback, parts: Mapping[str, str]) -> bool:
    """A Researcher ran this round and brought nothing ([RESEARCH_EXHAUSTED], [HOLD] or empty). A
    [RESEARCH_EXHAUSTED] the protocol does not believe (asked for a section's evidence, its search
    found facts the report lacks: `report_protocol.feedback.exhaustion_believed`) reads as said."""
    researchers = [read for agent, read in fb.agents.items() if parts.get(agent) == RESEARCH]
    return bool(researchers) and not any(read.said_something for read in researchers)


def signalled(fb: RoundFeedback, signal: Optional[str], parts: Mapping[str, str], by: Optional[str] = None) -> bool:
    """Whether an agent playing part `by` wrote `signal` this round (any agent when `by` is None or
    no agent plays it)."""
    closers = {agent for agent, part in parts.items() if part == by}
    return signal is not None and any(
        signal in read.signals for agent, read in fb.agents.items() if not closers or agent in closers
    )
