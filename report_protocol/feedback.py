"""What a round produced, as structured plain data: the engine's reading of the model output.

The engine (`agents_llm.engine.feedback.read_round`) fills these from the round's
outputs and the report; the report env hands them to a plan-emitting policy in its full
infos (key `feedback`, the `to_dict` form); the policy reads them back with
`RoundFeedback.from_dict`. Nothing here parses text: a policy decides from fields.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from .vocabulary import FIND_EVIDENCE, RESEARCH_EXHAUSTED


@dataclass(frozen=True)
class Finding:
    """A review finding tagged with a live section id ("[SECTION_ID: S2] cite more" -> S2, "cite more")."""

    section_id: str
    text: str


@dataclass
class AgentFeedback:
    """One agent's output this round, read."""

    text: str  # what it wrote (passed on as data, e.g. as a correction's review note)
    said_something: bool  # not empty and no absence marker (vocabulary.NON_OUTPUT_MARKERS)
    signals: list[str] = field(default_factory=list)  # vocabulary.SIGNALS found in the output
    outline: list[str] = field(default_factory=list)  # section titles, when it wrote a list or headings
    findings: list[Finding] = field(default_factory=list)  # tagged with a live section, in order
    deficiencies: list[str] = field(default_factory=list)  # subtopics it says the sources do not cover
    # Chunks its search found this turn that hold a fact the report does not have yet (0: it did not
    # search, found nothing, or only what the report already says). See `exhaustion_believed`.
    new_evidence: int = 0

    @property
    def holds(self) -> bool:
        return not self.said_something


@dataclass(frozen=True)
class SectionInfo:
    """A live section of the report after the round."""

    id: str
    title: str
    chars: int


@dataclass(frozen=True)
class GateVerdict:
    """The answer to the plan's gate check: passed None when the call gave no answer."""

    agent: str
    passed: bool | None


@dataclass
class RoundFeedback:
    """The round as a policy reads it. `agents` keeps the order the agents finished in."""

    agents: dict[str, AgentFeedback] = field(default_factory=dict)
    collector_status: str = "idle"  # appended | revised | skipped | failed | idle
    collector_section: str | None = None  # id of the section appended or revised
    sections: list[SectionInfo] = field(default_factory=list)
    gate: GateVerdict | None = None

    @property
    def gate_passed(self) -> bool | None:
        return self.gate.passed if self.gate is not None else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RoundFeedback":
        """The inverse of `to_dict`; raises ValueError naming the first field that is not feedback."""
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"RoundFeedback.from_dict: unknown keys {sorted(unknown)}")
        try:
            agents = {
                str(name): AgentFeedback(
                    text=str(a["text"]),
                    said_something=bool(a["said_something"]),
                    signals=list(a.get("signals", [])),
                    outline=list(a.get("outline", [])),
                    findings=[Finding(**f) for f in a.get("findings", [])],
                    deficiencies=list(a.get("deficiencies", [])),
                    new_evidence=int(a.get("new_evidence", 0)),
                )
                for name, a in dict(data.get("agents") or {}).items()
            }
            sections = [SectionInfo(**s) for s in data.get("sections") or []]
            gate = data.get("gate")
            return cls(
                agents=agents,
                collector_status=str(data.get("collector_status") or "idle"),
                collector_section=data.get("collector_section"),
                sections=sections,
                gate=GateVerdict(**gate) if gate is not None else None,
            )
        except (KeyError, TypeError) as e:
            raise ValueError(f"RoundFeedback.from_dict: malformed feedback ({type(e).__name__}: {e})") from e


# Directives under which a Researcher's search is checked against the report: its task is the
# evidence for one section, and the report is what that evidence must add to.
EVIDENCE_TASKS = (FIND_EVIDENCE,)


def exhaustion_believed(directive_kind: str | None, new_evidence: int) -> bool:
    """Is a Researcher's RESEARCH_EXHAUSTED ("the sources have nothing (more) on this") taken as written?

    Not when the plan asked it for a section's evidence (`EVIDENCE_TASKS`) and its search this
    turn found `new_evidence` > 0 chunks holding facts the report does not have yet: the claim
    is checked against what the search returned (measured: qwen2.5-coder-0.5b answers the signal,
    or echoes the instruction that names it, beside chunks it was just given). Elsewhere (RESEARCH,
    where the Researcher judges whether the sources have more than it gathered) it is.
    """
    return new_evidence <= 0 or directive_kind not in EVIDENCE_TASKS


def signals_believed(signals: list[str], directive_kind: str | None, new_evidence: int) -> list[str]:
    """`signals` without RESEARCH_EXHAUSTED where `exhaustion_believed` says it is not taken as written."""
    if exhaustion_believed(directive_kind, new_evidence):
        return list(signals)
    return [s for s in signals if s != RESEARCH_EXHAUSTED]
