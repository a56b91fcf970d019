"""The report env's action table: `5 + N` discrete actions for a team of N acting agents.

For N acting agents (N = 4 gives the original's 0..8):

    0            solo_process       run alone (own previous output only)
    1            broadcast_all      send own output to every other acting agent
    2 .. N+1     selective_query_j  receive agent j's output (j = action - 2)
    N+2          aggregate_refine   receive every other acting agent's output
    N+3          append             send own output to the Collector
    N+4          terminate          vote to stop (does not run this round)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

COLLECTOR = "Collector"  # the node that never chooses an action; edges to it are appends

SOLO, BROADCAST, QUERY0 = 0, 1, 2

# Action names (the trace, the infos and the logs use these), by kind of `ActionTable.decode`.
SOLO_PROCESS, BROADCAST_ALL, SELECTIVE_QUERY = "solo_process", "broadcast_all", "selective_query"
AGGREGATE_REFINE, APPEND, TERMINATE = "aggregate_refine", "append", "terminate"
ACTION_NAMES = {
    "solo": SOLO_PROCESS,
    "broadcast": BROADCAST_ALL,
    "aggregate": AGGREGATE_REFINE,
    "append": APPEND,
    "terminate": TERMINATE,
}


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
            who = agents[target] if agents is not None and target is not None else str(target)
            return f"{SELECTIVE_QUERY}_{who}"
        return ACTION_NAMES[kind]

    def names(self, agents: Sequence[str] | None = None) -> list[str]:
        return [self.name(a, agents) for a in range(self.size)]
