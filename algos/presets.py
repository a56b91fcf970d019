"""Preset communication topologies (solo, star, chain, full, ring) as fixed policies.

A preset is a constant joint action over the report env's ``5 + N`` action table, so
it runs through exactly the path a learner's actions take (masks, cycle dropping,
prompts, reward, trace) and is compared with QMIX on equal terms. The actions are the
report protocol's (``report_protocol.ActionTable``: solo_process, broadcast_all,
selective_query_j, aggregate_refine, append, terminate).

Topologies, agents in team order 0..N-1 (index 0 = highest priority):

* ``solo``:  nobody talks; every agent works alone.
* ``star``:  agent 0 (the hub, the LeadArchitect by default) broadcasts to all.
* ``chain``: agent i queries agent i-1: 0 -> 1 -> ... -> N-1.
* ``full``:  every agent aggregates every other one (mutual pairs: priority order).
* ``ring``:  agent i queries agent i-1 mod N. The closing edge would make a cycle, so the
  engine drops the lowest-priority agent's edge, as it does for a learner's actions
  (recorded as a denial in the trace).

Every ``append_every``-th round the writer (``writer``, default the DataAnalyst, else
the last agent) appends instead; nobody ever votes terminate, so an episode ends at the
env's round budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from report_protocol import ActionTable

from .base import AlgoConfig, FixedPolicy

TOPOLOGIES = ("solo", "star", "chain", "full", "ring")


@dataclass
class PresetConfig(AlgoConfig):
    name: str = "preset"
    topology: str = "chain"  # solo | star | chain | full | ring
    writer: Optional[str] = None  # agent that appends (default: DataAnalyst if in the team, else the last agent)
    append_every: int = 2  # the writer appends every k-th round (1 = every round)


def topology_actions(topology: str, n_agents: int) -> list[int]:
    """Each agent's action (by team index) in a communication round of ``topology``."""
    N, table = n_agents, ActionTable(n_agents)
    if topology == "solo" or N == 1:
        return [table.solo] * N
    if topology == "star":
        return [table.broadcast] + [table.solo] * (N - 1)
    if topology == "chain":
        return [table.solo] + [table.query(i - 1) for i in range(1, N)]
    if topology == "full":
        return [table.aggregate] * N
    if topology == "ring":
        return [table.query((i - 1) % N) for i in range(N)]
    raise ValueError(f"algo.topology: unknown topology {topology!r}; expected one of {list(TOPOLOGIES)}")


class PresetTopology(FixedPolicy):
    """A fixed topology with a periodic append by the writer; learns nothing."""

    config_class = PresetConfig
    cfg: PresetConfig

    def __init__(self, spec, cfg: PresetConfig, *, seed: int = 0, device: str = "cpu"):
        super().__init__(spec, cfg, seed=seed, device=device)
        n = spec.n_agents
        self.table = ActionTable(n)
        if spec.n_actions != self.table.size:
            raise ValueError(
                f"preset topologies need the report env's 5+N action table ({self.table.size} actions "
                f"for {n} agents); this env has {spec.n_actions}"
            )
        if cfg.append_every < 1:
            raise ValueError(f"algo.append_every: expected >= 1, got {cfg.append_every}")
        self.base_actions = topology_actions(cfg.topology, n)
        if cfg.writer is not None:
            if cfg.writer not in spec.agents:
                raise ValueError(f"algo.writer: unknown agent {cfg.writer!r}; team: {spec.agents}")
            self.writer = cfg.writer
        else:
            self.writer = "DataAnalyst" if "DataAnalyst" in spec.agents else spec.agents[-1]
        self.append_action = self.table.append
        self.round = 0

    def begin_episode(self) -> None:
        self.round = 0

    def joint_action(self, round_index: int) -> dict[str, int]:
        """The unmasked joint action of round ``round_index`` (0-based)."""
        actions = dict(zip(self.spec.agents, self.base_actions))
        if round_index % self.cfg.append_every == self.cfg.append_every - 1:
            actions[self.writer] = self.append_action
        return actions

    def act(self, obs, masks, explore, *, state=None, graph=None):
        wanted = self.joint_action(self.round)
        self.round += 1
        out = {}
        for agent in obs:
            mask = np.asarray(masks[agent]).astype(bool)
            a = wanted[agent]
            if not mask[a]:  # e.g. broadcast in a one-agent team: fall back to solo, else the first allowed
                a = self.table.solo if mask[self.table.solo] else int(np.flatnonzero(mask)[0])
            out[agent] = int(a)
        return out
