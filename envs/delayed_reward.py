"""``delayed_reward_v0``: a known-answer game with an early smaller and a later larger payoff.

A team of agents works for ``len(payoffs)`` rounds (default 4). Each round every agent
chooses ``0 = work`` or ``1 = append``; the team appends when every agent chooses
append. An append after k rounds (this one and the k - 1 since the previous append)
pays ``payoffs[k - 1]`` to every agent; any other round pays 0. The episode is cut at
the round budget -- a truncation, but one the agents see: the observation carries the
round and the rounds left, so the env declares ``time_limit_observable = True`` and the
round after the budget is worth 0.

The default payoffs ``(0.8, 1.7, 2.7, 4.0)`` are superadditive: appending every round
earns 4 x 0.8 = 3.2 (the early, smaller payoff), waiting and appending once in the last
round earns 4.0 (the later, larger one), every other schedule lies in between
(``DelayedRewardGame.optimal_return`` finds the best by dynamic programming).

Like the report env, an append round's infos carry ``rounds_since_append = k`` (0 on
other rounds), which is what the learners' reward spreading reads: spreading the
append's reward evenly over its k rounds makes a round's reward depend on when the next
append comes, which biases a max target towards the early payoff. The game exists to
show that.

Observation (every agent, float32): round one-hot [H], rounds since append one-hot [H],
round / H, rounds left / H. ``state()`` is the same vector. No communication graph.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

WORK, APPEND = 0, 1
DEFAULT_PAYOFFS = (0.8, 1.7, 2.7, 4.0)


class DelayedRewardGame(ParallelEnv):
    metadata = {"name": "delayed_reward_v0", "render_modes": [], "is_parallelizable": True}
    time_limit_observable = True  # the round budget is in the observation (envs/__init__.py contract)

    def __init__(self, payoffs: Sequence[float] = DEFAULT_PAYOFFS, n_agents: int = 2):
        payoffs = tuple(float(p) for p in payoffs)
        if len(payoffs) < 2:
            raise ValueError(f"payoffs needs one entry per round (at least 2), got {payoffs}")
        if int(n_agents) < 1:
            raise ValueError(f"n_agents must be >= 1, got {n_agents}")
        self.payoffs = payoffs
        self.horizon = len(payoffs)
        self.possible_agents = [f"agent_{i}" for i in range(int(n_agents))]
        self.agents: list[str] = []
        dim = 2 * self.horizon + 2
        obs_box = spaces.Box(0.0, 1.0, (dim,), dtype=np.float32)
        self._obs_space = spaces.Dict({"observation": obs_box, "action_mask": spaces.Box(0, 1, (2,), dtype=np.int8)})
        self._act_space = spaces.Discrete(2)
        self.state_space = spaces.Box(0.0, 1.0, (dim,), dtype=np.float32)
        self._t = 0
        self._since = 0  # rounds since the previous append (completed rounds)

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def state(self) -> np.ndarray:
        H = self.horizon
        s = np.zeros(2 * H + 2, dtype=np.float32)
        if self._t < H:
            s[self._t] = 1.0
            s[H + min(self._since, H - 1)] = 1.0
        s[2 * H] = self._t / H
        s[2 * H + 1] = (H - self._t) / H
        return s

    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        mask = np.ones(2, dtype=np.int8)
        return {a: {"observation": self.state(), "action_mask": mask.copy()} for a in self.agents}

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._act_space.seed(seed)
        self.agents = list(self.possible_agents)
        self._t, self._since = 0, 0
        return self._observe(), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise RuntimeError("step() called on a finished episode; call reset()")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise KeyError(f"missing actions for {missing}")
        for a in self.agents:
            if not self._act_space.contains(int(actions[a])):
                raise ValueError(f"invalid action {actions[a]!r} for {a}")
        k = self._since + 1
        append = all(int(actions[a]) == APPEND for a in self.agents)
        reward = self.payoffs[k - 1] if append else 0.0
        self._since = 0 if append else k
        self._t += 1
        agents = list(self.agents)
        truncated = self._t >= self.horizon
        info = {"rounds_since_append": k if append else 0, "appended": append, "round": self._t}
        obs = self._observe()
        out = (
            obs,
            {a: float(reward) for a in agents},
            {a: False for a in agents},
            {a: truncated for a in agents},
            {a: dict(info) for a in agents},
        )
        if truncated:
            self.agents = []
        return out

    @property
    def optimal_return(self) -> float:
        """The best return over all append schedules (dynamic programming over round, since)."""
        H, pay = self.horizon, self.payoffs

        @lru_cache(maxsize=None)
        def value(t: int, since: int) -> float:
            if t == H:
                return 0.0
            return max(value(t + 1, since + 1), pay[since] + value(t + 1, 0))

        return value(0, 0)

    def render(self) -> None:
        return None

    def close(self) -> None:
        return None


def delayed_reward_v0(**kwargs: Any) -> DelayedRewardGame:
    return DelayedRewardGame(**kwargs)
