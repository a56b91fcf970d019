"""What one round does, as plain data: the action table and the `RoundPlan`.

The engine runs only `RoundPlan`s. A learner's joint discrete action becomes a plan
through `plan_from_actions` (in `agents_llm.engine`); a fixed policy such as the
handcrafted pipeline may build a `RoundPlan` itself and hand it to
`ReportWritingEnv.step_plan`. Both paths then share prompts, reward, token accounting
and trace. Everything here is plain data (str, int, lists, dicts), so a policy in
`algos` can build a plan from a dict without importing any LLM code
(`RoundPlan.from_dict`).

Action table for N acting agents (`5 + N` actions; N = 4 gives the original's 0..8):

    0            solo_process       run alone (own previous output only)
    1            broadcast_all      send own output to every other acting agent
    2 .. N+1     selective_query_j  receive agent j's output (j = action - 2)
    N+2          aggregate_refine   receive every other acting agent's output
    N+3          append             send own output to the Collector
    N+4          terminate          vote to stop (does not run this round)
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

COLLECTOR = "Collector"  # the node that never chooses an action; edges to it are appends

SOLO, BROADCAST, QUERY0 = 0, 1, 2


@dataclass(frozen=True)
class ActionTable:
    """Index arithmetic for the `5 + N` actions of a team of `n_agents`."""

    n_agents: int

    def __post_init__(self) -> None:
        if self.n_agents < 1:
            raise ValueError(f"a team needs at least one acting agent, got {self.n_agents}")

    @property
    def size(self) -> int:
        return 5 + self.n_agents

    @property
    def solo(self) -> int:
        return SOLO

    @property
    def broadcast(self) -> int:
        return BROADCAST

    def query(self, j: int) -> int:
        if not 0 <= j < self.n_agents:
            raise ValueError(f"query target {j} outside [0, {self.n_agents})")
        return QUERY0 + j

    @property
    def aggregate(self) -> int:
        return self.n_agents + 2

    @property
    def append(self) -> int:
        return self.n_agents + 3

    @property
    def terminate(self) -> int:
        return self.n_agents + 4

    def decode(self, action: int) -> tuple[str, int | None]:
        """(kind, target): kind in solo/broadcast/query/aggregate/append/terminate."""
        a = int(action)
        if not 0 <= a < self.size:
            raise ValueError(f"action {action} outside [0, {self.size}) for a team of {self.n_agents}")
        if a == SOLO:
            return "solo", None
        if a == BROADCAST:
            return "broadcast", None
        if a < self.aggregate:
            return "query", a - QUERY0
        return {self.aggregate: "aggregate", self.append: "append", self.terminate: "terminate"}[a], None

    def name(self, action: int, agents: Sequence[str] | None = None) -> str:
        kind, target = self.decode(action)
        if kind == "query":
            who = agents[target] if agents is not None else str(target)
            return f"selective_query_{who}"
        return {"solo": "solo_process", "broadcast": "broadcast_all", "aggregate": "aggregate_refine",
                "append": "append", "terminate": "terminate"}[kind]

    def names(self, agents: Sequence[str] | None = None) -> list[str]:
        return [self.name(a, agents) for a in range(self.size)]


@dataclass
class Denial:
    """A choice that did not take effect, and why (recorded in the trace)."""

    agent: str
    action: int | None  # the action chosen (None for a plan-level denial)
    action_name: str
    reason: str  # "masked: ..." or "cycle: ..." or "plan: ..."
    fallback: str = "solo_process"


@dataclass
class GateCheck:
    """Ask one agent a YES/NO question after the round (the handcrafted pipeline's gate).

    The engine carries it out and reports `gate_passed` in the round result; the policy
    that asked decides what to do with it.
    """

    agent: str
    question: str


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
    * `phase`: a phase label (planning, research, drafting, section_review,
      validation, review, revision) that selects phase prompts; None for the
      learned-policy prompts. The handcrafted pipeline's labels (`phase_prompts.PHASES`)
      select `agents_llm.phase_prompts`.
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
        data["edges"] = [tuple(e) for e in data.get("edges", [])]
        data["denied"] = [Denial(**d) if isinstance(d, Mapping) else d for d in data.get("denied", [])]
        data["acting"] = list(data["acting"])
        return cls(**data)


PHASES = ("planning", "research", "drafting", "section_review", "validation", "review", "revision")
