"""What one round does, as plain data: the `RoundPlan` and what it carries.

The engine runs only `RoundPlan`s. A learner's joint discrete action becomes a plan
through `plan_from_actions` (in `agents_llm.engine`); a fixed policy such as the
handcrafted pipeline may build a `RoundPlan` itself and hand it to
`ReportWritingEnv.step_plan`. Both paths then share prompts, reward, token accounting
and trace. Everything here is plain data (str, int, lists, dicts), so a policy in
`algos` can build a plan from a dict without importing any LLM code
(`RoundPlan.from_dict`). The action table is in `report_protocol.actions`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

from .actions import COLLECTOR, SOLO_PROCESS
from .vocabulary import DIRECTIVE_KINDS, NOTICES


@dataclass
class Denial:
    """A choice that did not take effect, and why (recorded in the trace)."""

    agent: str
    action: int | None  # the action chosen (None for a plan-level denial)
    action_name: str
    reason: str  # "masked: ..." or "cycle: ..." or "plan: ..."
    fallback: str = SOLO_PROCESS


@dataclass
class GateCheck:
    """Ask one agent a YES/NO question after the round (the handcrafted pipeline's gate).

    The engine carries it out and reports `gate_passed` in the round result; the policy
    that asked decides what to do with it. `question` None: the engine's own wording,
    asking about the plan's phase and the round after this one.
    """

    agent: str
    question: str | None = None


@dataclass(frozen=True)
class Directive:
    """A task a plan gives one agent, named by a protocol id; the engine words it.

    `kind` is one of `vocabulary.DIRECTIVE_KINDS`; the other fields are its parameters
    (None where a kind does not use them). `notice` is one of `vocabulary.NOTICES`: the
    task the agent finished last round, shown before the new one.
    """

    kind: str
    title: str | None = None  # the section's title
    section_id: str | None = None  # the live section a correction is for
    finding: str | None = None  # what the correction must change (None: the review notes in general)
    position: int | None = None  # 1-based position of the section in the outline ...
    total: int | None = None  # ... of this many sections
    notice: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in DIRECTIVE_KINDS:
            raise ValueError(f"Directive.kind: unknown kind {self.kind!r}; expected one of {list(DIRECTIVE_KINDS)}")
        if self.notice is not None and self.notice not in NOTICES:
            raise ValueError(f"Directive.notice: unknown notice {self.notice!r}; expected one of {list(NOTICES)}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "Directive") -> "Directive":
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown or "kind" not in data:
            raise ValueError(
                f"{where}: expected 'kind' and any of {sorted(cls.__dataclass_fields__)}, got keys {sorted(data)}"
            )
        return cls(**data)


@dataclass
class RoundPlan:
    """Who acts, which messages flow, what each agent is told.

    * `acting`: agents that run this round. The team order (`possible_agents`) is the
      priority order, whatever order this list has.
    * `edges`: (sender, receiver) pairs among team agents; the receiver gets the
      sender's output of this round, or its previous-round output when the pair is
      mutual and the receiver has the higher priority. A receiver of `"Collector"`
      means append. A sender that does not act this round delivers its last output.
    * `instructions`: extra text for an agent's prompt this round.
    * `directives`: a task per agent as a protocol id with parameters (`Directive`),
      worded by the engine; an agent with both gets the directive.
    * `phase`: a phase label (planning, research, drafting, section_review,
      validation, review, revision) that selects phase prompts; None for the
      learned-policy prompts. The handcrafted pipeline's labels
      (`report_protocol.vocabulary.PHASE_ORDER`) select `agents_llm.phase_prompts`.
    * `phase_round`, `phase_rounds`: the round's number within its phase (1-based) and
      the phase's round budget, shown in the phase prompts; None outside phases.
    * `revise_section`: a section id the Collector rewrites instead of appending.
    * `reset_memory`: wipe every agent's previous output before the round (phase
      boundaries in the handcrafted pipeline).
    * `terminate`: end the episode after this round.
    * `gate_check`: optional `GateCheck`.
    * `actions`, `denied`, `terminate_votes`, `effective`: what the plan was made from
      and what took effect, filled by `plan_from_actions` (empty for a hand-built plan).
    """

    acting: list[str]
    edges: list[tuple[str, str]] = field(default_factory=list)
    instructions: dict[str, str] = field(default_factory=dict)
    directives: dict[str, Directive] = field(default_factory=dict)
    phase: str | None = None
    revise_section: str | None = None
    reset_memory: bool = False
    terminate: bool = False
    gate_check: GateCheck | None = None
    phase_round: int | None = None
    phase_rounds: int | None = None
    actions: dict[str, int] = field(default_factory=dict)
    denied: list[Denial] = field(default_factory=list)
    terminate_votes: list[str] = field(default_factory=list)
    effective: dict[str, str] = field(default_factory=dict)  # action name that took effect, per agent

    @property
    def appenders(self) -> list[str]:
        return [s for s, r in self.edges if r == COLLECTOR]

    @property
    def message_edges(self) -> list[tuple[str, str]]:
        """Edges between agents (appends excluded)."""
        return [(s, r) for s, r in self.edges if r != COLLECTOR]

    def validate(self, team: Sequence[str]) -> "RoundPlan":
        """Raise ValueError naming the first reference to an agent not in `team`."""
        known = set(team)
        for a in self.acting:
            if a not in known:
                raise ValueError(f"RoundPlan.acting names unknown agent {a!r}; team: {list(team)}")
        if len(set(self.acting)) != len(self.acting):
            raise ValueError(f"RoundPlan.acting lists an agent twice: {self.acting}")
        for s, r in self.edges:
            if s not in known:
                raise ValueError(f"RoundPlan edge {s}->{r}: unknown sender {s!r}; team: {list(team)}")
            if r != COLLECTOR and r not in known:
                raise ValueError(f"RoundPlan edge {s}->{r}: unknown receiver {r!r}; team: {list(team)}")
            if r == COLLECTOR and s not in self.acting:
                raise ValueError(f"RoundPlan edge {s}->Collector: only an acting agent can append")
        for a in self.instructions:
            if a not in known:
                raise ValueError(f"RoundPlan.instructions names unknown agent {a!r}")
        for a in self.directives:
            if a not in known:
                raise ValueError(f"RoundPlan.directives names unknown agent {a!r}")
        if self.gate_check is not None and self.gate_check.agent not in known:
            raise ValueError(f"RoundPlan.gate_check names unknown agent {self.gate_check.agent!r}")
        return self

    def to_dict(self) -> dict:
        d = asdict(self)
        d["edges"] = [list(e) for e in self.edges]
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RoundPlan":
        data = dict(data)
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"RoundPlan.from_dict: unknown keys {sorted(unknown)}")
        if "acting" not in data:
            raise ValueError("RoundPlan.from_dict: 'acting' is required")
        gate = data.get("gate_check")
        if isinstance(gate, Mapping):
            data["gate_check"] = GateCheck(**gate)
        data["directives"] = {
            a: Directive.from_dict(d, f"RoundPlan.directives[{a!r}]") if isinstance(d, Mapping) else d
            for a, d in dict(data.get("directives") or {}).items()
        }
        data["edges"] = [tuple(e) for e in data.get("edges", [])]
        data["denied"] = [Denial(**d) if isinstance(d, Mapping) else d for d in data.get("denied", [])]
        data["acting"] = list(data["acting"])
        return cls(**data)
