"""Cooperative matrix games with known answers, as PettingZoo parallel envs with ``state()``.

* ``TwoStepGame`` (``two_step_v0``): the two-step game of the QMIX paper (Rashid et al.,
  2018, section 6.1). Two agents, two actions. In the first step agent 0's action picks
  the game of the second step (0 -> state 2A, 1 -> state 2B); agent 1's first action has
  no effect and the first step pays 0. State 2A pays ``[[7, 7], [7, 7]]``, state 2B pays
  ``[[0, 1], [1, 8]]`` (row = agent 0's action, column = agent 1's). The optimal joint
  return is 8; VDN's additive value cannot represent 2B and settles for 7.
  Options that a lucky labelling cannot pass: ``action_permutation_seed`` relabels the
  actions of every agent in every state by a seeded permutation (so the good action
  need not have the same index for both agents, nor in both steps), and
  ``payoff_scale`` multiplies every payoff (optimum ``8 * payoff_scale``).
* ``OneStep3x3Game`` (``one_step_3x3_v0``): pymarl2's one-step non-monotonic game,
  ``[[8, -12, -12], [-12, 0, 0], [-12, 0, 0]]``, one step, three actions.

Both have a fixed horizon the agents see (the state one-hot tells the step), so they
declare ``time_limit_observable = True``; they end by termination, never truncation.

Observations follow the project contract (see ``envs/__init__.py``): a dict with a
float32 ``observation`` (here the one-hot of the game state, which every agent sees) and
an all-ones int8 ``action_mask``. Rewards are shared: every agent gets the payoff.
There is no communication graph.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv


class _MatrixGame(ParallelEnv):
    metadata = {"name": "matrix_game", "render_modes": [], "is_parallelizable": True}

    n_states: int
    n_actions: int
    time_limit_observable = True  # the step is in the observation (envs/__init__.py contract)

    def __init__(self, n_agents: int = 2):
        self.possible_agents = [f"agent_{i}" for i in range(n_agents)]
        self.agents: list[str] = []
        obs_box = spaces.Box(0.0, 1.0, (self.n_states,), dtype=np.float32)
        mask_box = spaces.Box(0, 1, (self.n_actions,), dtype=np.int8)
        self._obs_space = spaces.Dict({"observation": obs_box, "action_mask": mask_box})
        self._act_space = spaces.Discrete(self.n_actions)
        self.state_space = spaces.Box(0.0, 1.0, (self.n_states,), dtype=np.float32)
        self._state = 0
        self._t = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def state(self) -> np.ndarray:
        s = np.zeros(self.n_states, dtype=np.float32)
        s[self._state] = 1.0
        return s

    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        mask = np.ones(self.n_actions, dtype=np.int8)
        return {a: {"observation": self.state(), "action_mask": mask.copy()} for a in self.agents}

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._act_space.seed(seed)
        self.agents = list(self.possible_agents)
        self._state, self._t = 0, 0
        return self._observe(), {a: {} for a in self.agents}

    def _transition(self, joint: Sequence[int]) -> tuple[float, bool]:
        raise NotImplementedError

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise RuntimeError("step() called on a finished episode; call reset()")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise KeyError(f"missing actions for {missing}")
        joint = [int(actions[a]) for a in self.agents]
        for a, act in zip(self.agents, joint):
            if not self._act_space.contains(act):
                raise ValueError(f"invalid action {act} for {a}")
        reward, done = self._transition(joint)
        self._t += 1
        agents = list(self.agents)
        obs = self._observe()
        rewards = {a: float(reward) for a in agents}
        terminations = {a: done for a in agents}
        truncations = {a: False for a in agents}
        infos: dict[str, dict] = {a: {} for a in agents}
        if done:
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def render(self) -> None:
        return None

    def close(self) -> None:
        return None


class TwoStepGame(_MatrixGame):
    """States: 0 = first step, 1 = 2A, 2 = 2B.

    ``action_permutation_seed``: None keeps the paper's labels; an int draws, per state
    and agent, a permutation ``perm[state, agent]`` mapping the action an agent sends to
    the paper's action (``canonical_action``). ``payoff_scale`` (> 0) scales every payoff.
    """

    metadata = {"name": "two_step_v0", "render_modes": [], "is_parallelizable": True}
    n_states = 3
    n_actions = 2
    PAYOFF_2A = np.array([[7.0, 7.0], [7.0, 7.0]], dtype=np.float32)
    PAYOFF_2B = np.array([[0.0, 1.0], [1.0, 8.0]], dtype=np.float32)

    def __init__(self, action_permutation_seed: int | None = None, payoff_scale: float = 1.0):
        super().__init__(n_agents=2)
        if not float(payoff_scale) > 0.0:
            raise ValueError(f"payoff_scale must be > 0, got {payoff_scale}")
        self.payoff_scale = float(payoff_scale)
        self.action_permutation_seed = action_permutation_seed
        identity = np.tile(np.arange(self.n_actions), (self.n_states, 2, 1))
        if action_permutation_seed is None:
            self.permutation = identity
        else:
            rng = np.random.default_rng(action_permutation_seed)
            self.permutation = np.stack(
                [[rng.permutation(self.n_actions) for _ in range(2)] for _ in range(self.n_states)]
            )

    @property
    def optimal_return(self) -> float:
        return 8.0 * self.payoff_scale

    def canonical_action(self, state: int, agent: int, action: int) -> int:
        """The paper's action that ``action`` of agent index ``agent`` means in ``state``."""
        return int(self.permutation[state, agent, action])

    def labelled_action(self, state: int, agent: int, canonical: int) -> int:
        """The action agent ``agent`` must send in ``state`` to play the paper's ``canonical``."""
        return int(np.flatnonzero(self.permutation[state, agent] == canonical)[0])

    def _transition(self, joint: Sequence[int]) -> tuple[float, bool]:
        a0, a1 = (self.canonical_action(self._state, i, a) for i, a in enumerate(joint))
        if self._state == 0:
            self._state = 1 if a0 == 0 else 2
            return 0.0, False
        payoff = self.PAYOFF_2A if self._state == 1 else self.PAYOFF_2B
        return float(payoff[a0, a1]) * self.payoff_scale, True


class OneStep3x3Game(_MatrixGame):
    metadata = {"name": "one_step_3x3_v0", "render_modes": [], "is_parallelizable": True}
    n_states = 1
    n_actions = 3
    PAYOFF = np.array([[8.0, -12.0, -12.0], [-12.0, 0.0, 0.0], [-12.0, 0.0, 0.0]], dtype=np.float32)

    def __init__(self, payoff: Sequence[Sequence[float]] | None = None):
        if payoff is not None:
            table = np.asarray(payoff, dtype=np.float32)
            if table.shape != (3, 3):
                raise ValueError(f"payoff must be 3x3, got shape {table.shape}")
            self.PAYOFF = table
        super().__init__(n_agents=2)

    def _transition(self, joint: Sequence[int]) -> tuple[float, bool]:
        return float(self.PAYOFF[joint[0], joint[1]]), True


def two_step_v0(**kwargs: Any) -> TwoStepGame:
    return TwoStepGame(**kwargs)


def one_step_3x3_v0(**kwargs: Any) -> OneStep3x3Game:
    return OneStep3x3Game(**kwargs)
