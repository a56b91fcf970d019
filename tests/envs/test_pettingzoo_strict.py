"""The strict PettingZoo checks (tests/pettingzoo_api.py) fail where PettingZoo only warns."""

import functools
import warnings

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.test import parallel_api_test

from tests.pettingzoo_api import strict_parallel_api_test


class RewardsTheFinished(ParallelEnv):
    """Agent "b" finishes after one step but keeps receiving rewards: PettingZoo's API
    test warns ("Agent was given reward but was dead last turn") and passes."""

    metadata = {"name": "rewards_the_finished_v0"}

    def __init__(self):
        self.possible_agents = ["a", "b"]
        self.agents = []

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent):
        return spaces.Box(0.0, 1.0, (1,), np.float32)

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent):
        return spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        self.agents, self.t = list(self.possible_agents), 0
        return {a: np.zeros(1, np.float32) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        self.t += 1
        ended = {a: a == "b" or self.t >= 3 for a in self.agents}
        obs = {a: np.zeros(1, np.float32) for a in self.agents}
        rewards = dict.fromkeys(self.possible_agents, 0.0)  # "b" keeps being rewarded after it ended
        self.agents = [a for a in self.agents if not ended[a]]
        return obs, rewards, ended, dict.fromkeys(ended, False), {a: {} for a in obs}


def test_pettingzoo_only_warns_where_the_strict_check_fails():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        parallel_api_test(RewardsTheFinished(), num_cycles=3)
    assert any("dead last turn" in str(w.message) for w in seen)
    with pytest.raises(UserWarning, match="dead last turn"):
        strict_parallel_api_test(RewardsTheFinished(), num_cycles=3)
