"""EnvSpec.from_env refuses an env that breaks the contract, naming what is missing."""

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo import ParallelEnv

import algos
import envs
from algos import EnvContractError, EnvSpec


class TinyEnv(ParallelEnv):
    """Configurable two-agent env for contract checks (never stepped)."""

    metadata = {"name": "tiny_contract_env"}

    def __init__(self, obs_space=None, with_state_space=True, **attrs):
        self.possible_agents = ["a", "b"]
        self.agents = []
        self._obs = (
            obs_space
            if obs_space is not None
            else spaces.Dict(
                {"observation": spaces.Box(0, 1, (3,), np.float32), "action_mask": spaces.Box(0, 1, (2,), np.int8)}
            )
        )
        if with_state_space:
            self.state_space = spaces.Box(0, 1, (5,), np.float32)
        for k, v in attrs.items():
            setattr(self, k, v)

    def observation_space(self, agent):
        return self._obs

    def action_space(self, agent):
        return spaces.Discrete(2)

    def state(self):
        return np.zeros(5, np.float32)


class NoStateEnv(TinyEnv):
    state = ParallelEnv.state  # PettingZoo's default: raises NotImplementedError


def test_a_conforming_env_gives_its_sizes_and_declaration():
    spec = EnvSpec.from_env(TinyEnv(time_limit_observable=True))
    assert (spec.n_agents, spec.obs_dim, spec.n_actions, spec.state_dim) == (2, 3, 2, 5)
    assert spec.time_limit_observable is True
    assert EnvSpec.from_env(TinyEnv()).time_limit_observable is None


def test_state_without_state_space_fails_early_naming_the_attribute():
    with pytest.raises(EnvContractError, match=r"state\(\) but no state_space.*envs/__init__.py"):
        EnvSpec.from_env(TinyEnv(with_state_space=False))


def test_an_env_without_state_is_fine_for_vdn_and_refused_by_qmix():
    spec = EnvSpec.from_env(NoStateEnv(with_state_space=False))
    assert spec.state_dim == 0
    algos.build("vdn", spec, {"hidden_dim": 8})
    with pytest.raises(ValueError, match="QMixer needs a state"):
        algos.build("qmix", spec, {"hidden_dim": 8})


@pytest.mark.parametrize(
    "space, message",
    [
        (spaces.Box(0, 1, (3,), np.float32), r"must be Dict\(\{'observation'"),
        (spaces.Dict({"obs": spaces.Box(0, 1, (3,), np.float32)}), r"must be Dict\(\{'observation'"),
        (spaces.Dict({"observation": spaces.Box(0, 1, (3,), np.float32)}), r"no 'action_mask' entry"),
        (
            spaces.Dict(
                {"observation": spaces.Box(0, 1, (3,), np.float32), "action_mask": spaces.Box(0, 1, (3,), np.int8)}
            ),
            r"action_mask'\] must have shape \(2,\)",
        ),
        (
            spaces.Dict({"observation": spaces.Discrete(3), "action_mask": spaces.Box(0, 1, (2,), np.int8)}),
            r"\['observation'\] must be a Box",
        ),
    ],
)
def test_observations_not_in_the_documented_dict_are_refused(space, message):
    with pytest.raises(EnvContractError, match=message) as err:
        EnvSpec.from_env(TinyEnv(obs_space=space))
    assert "observation_space('a')" in str(err.value) and "envs/__init__.py" in str(err.value)


def test_a_bad_time_limit_declaration_is_refused():
    with pytest.raises(EnvContractError, match="time_limit_observable must be True, False or absent"):
        EnvSpec.from_env(TinyEnv(time_limit_observable="yes"))


@pytest.mark.parametrize("name", ["two_step_v0", "one_step_3x3_v0", "delayed_reward_v0", "teammate_signal_v0"])
def test_shipped_games_declare_an_observable_time_limit(name):
    assert EnvSpec.from_env(envs.make(name)).time_limit_observable is True
