"""``teammate_signal_v0``: a known-answer game where an agent's best action depends on
what only a teammate observes, so the communication graph (the GNN path of our agents)
is the only way to play it well.

Two agents, two rounds, two actions. At reset each agent i privately observes a random
bit ``b_i``; its teammate does not see it.

* Round 0: ``action 1 = query`` the teammate (receive its output next round),
  ``0 = stay silent``. Each query costs ``query_cost``.
* Round 1: the action is a guess of the teammate's bit; every correct guess pays 1. The
  episode then terminates.

The communication graph of round 0 -- edge ``j -> i`` for every agent i that queried
its teammate j -- is what graph-based agents see when they guess (``comm_graph()``, the
project contract). Optimal return: both query and guess right, ``2 - 2 * query_cost``
(1.8 by default). Without a message an agent's guess is independent of the teammate's
bit, so no policy earns more than 1.0 in expectation over the bits: that is the answer
for agents without the GNN. The payoff is a sum over agents, so VDN's additive value can
represent the optimum too.

Observation (float32): own bit one-hot [2], round one-hot [2]. ``state()``: both bits
one-hot [4] and the round one-hot [2]. The bits are drawn from the reset seed, or set
with ``reset(options={"bits": [b0, b1]})`` (evaluation over all four pairs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

SILENT, QUERY = 0, 1
N_AGENTS = 2


class TeammateSignalGame(ParallelEnv):
    metadata = {"name": "teammate_signal_v0", "render_modes": [], "is_parallelizable": True}
    time_limit_observable = True  # two rounds, the round is in the observation; it terminates, never truncates

    def __init__(self, query_cost: float = 0.1):
        if not 0.0 <= float(query_cost) < 0.5:
            raise ValueError(f"query_cost must be in [0, 0.5) so that querying pays off, got {query_cost}")
        self.query_cost = float(query_cost)
        self.possible_agents = [f"agent_{i}" for i in range(N_AGENTS)]
        self.agents: list[str] = []
        self._obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (4,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (2,), dtype=np.int8),
            }
        )
        self._act_space = spaces.Discrete(2)
        self.state_space = spaces.Box(0.0, 1.0, (6,), dtype=np.float32)
        self._rng = np.random.default_rng()
        self.bits = np.zeros(N_AGENTS, dtype=np.int64)
        self._t = 0
        self._graph = np.zeros((2, 0), dtype=np.int64)

    @property
    def optimal_return(self) -> float:
        return 2.0 - 2.0 * self.query_cost

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def comm_graph(self) -> np.ndarray:
        return self._graph.copy()

    def state(self) -> np.ndarray:
        s = np.zeros(6, dtype=np.float32)
        s[self.bits[0]] = 1.0
        s[2 + self.bits[1]] = 1.0
        s[4 + min(self._t, 1)] = 1.0
        return s

    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        out: dict[str, dict[str, np.ndarray]] = {}
        for i, a in enumerate(self.agents):
            o = np.zeros(4, dtype=np.float32)
            o[self.bits[i]] = 1.0
            o[2 + min(self._t, 1)] = 1.0
            out[a] = {"observation": o, "action_mask": np.ones(2, dtype=np.int8)}
        return out

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self._act_space.seed(seed)
        bits = (options or {}).get("bits")
        if bits is not None:
            bits = np.asarray(bits, dtype=np.int64)
            if bits.shape != (N_AGENTS,) or not np.isin(bits, (0, 1)).all():
                raise ValueError(f"options['bits'] must be two 0/1 values, got {bits.tolist()}")
            self.bits = bits.copy()
        else:
            self.bits = self._rng.integers(0, 2, N_AGENTS)
        self.agents = list(self.possible_agents)
        self._t = 0
        self._graph = np.zeros((2, 0), dtype=np.int64)
        return self._observe(), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise RuntimeError("step() called on a finished episode; call reset()")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise KeyError(f"missing actions for {missing}")
        joint = [int(actions[a]) for a in self.agents]
        for a, act in zip(self.agents, joint):
            if not self._act_space.contains(act):
                raise ValueError(f"invalid action {act!r} for {a}")
        if self._t == 0:
            queried = [i for i, act in enumerate(joint) if act == QUERY]
            reward = -self.query_cost * len(queried)
            edges = [(1 - i, i) for i in queried]  # teammate j = 1 - i sends to i
            self._graph = (
                np.asarray(edges, dtype=np.int64).T.reshape(2, -1) if edges else np.zeros((2, 0), dtype=np.int64)
            )
            done = False
        else:
            reward = float(sum(joint[i] == self.bits[1 - i] for i in range(N_AGENTS)))
            self._graph = np.zeros((2, 0), dtype=np.int64)
            done = True
        self._t += 1
        agents = list(self.agents)
        obs = self._observe()
        out = (
            obs,
            {a: float(reward) for a in agents},
            {a: done for a in agents},
            {a: False for a in agents},
            {a: {"round": self._t} for a in agents},
        )
        if done:
            self.agents = []
        return out

    def render(self) -> None:
        return None

    def close(self) -> None:
        return None


def teammate_signal_v0(**kwargs: Any) -> TeammateSignalGame:
    return TeammateSignalGame(**kwargs)
