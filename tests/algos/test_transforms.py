import dataclasses

import numpy as np
import pytest

from algos.buffer import Episode
from algos.transforms import spread_append_rewards

from .conftest import small_learner


def test_each_append_reward_is_spread_over_its_rounds():
    rewards = np.array([0, 0, 3, 0, 0, 6, 0], np.float32)
    since = np.array([0, 0, 3, 0, 0, 3, 0])
    out = spread_append_rewards(rewards, since)
    assert out.tolist() == [1, 1, 1, 2, 2, 2, 0]  # the trailing round keeps its own 0
    assert out.sum() == pytest.approx(rewards.sum())
    assert rewards.tolist() == [0, 0, 3, 0, 0, 6, 0]  # input untouched


def test_spreading_is_clipped_at_the_episode_start_and_keeps_other_rewards():
    rewards = np.array([0.0, 4.0, -1.0, 2.0], np.float32)
    since = np.array([0, 5, 0, 1])  # claims 5 rounds at t=1: only 2 exist
    assert spread_append_rewards(rewards, since).tolist() == [2.0, 2.0, -1.0, 2.0]


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="shape"):
        spread_append_rewards(np.zeros(3), np.zeros(4))


def _episode_with_appends(spec):
    T, N = 4, spec.n_agents
    return Episode(
        obs=np.zeros((T + 1, N, spec.obs_dim), np.float32),
        avail=np.ones((T + 1, N, spec.n_actions), bool),
        state=np.zeros((T + 1, spec.state_dim), np.float32),
        actions=np.zeros((T, N), np.int64),
        rewards=np.array([0, 0, 0, 8], np.float32),
        terminated=False,
        adj=np.zeros((T + 1, N, N), bool),
        extras={"rounds_since_append": np.array([0, 0, 0, 4], np.float32)},
    )


@pytest.mark.parametrize("flag, expected", [(True, [2, 2, 2, 2]), (False, [0, 0, 0, 8])])
def test_learner_flag_switches_spreading(two_step, flag, expected):
    _, spec = two_step
    learner = small_learner("qmix", spec, spread_append_reward=flag)
    ep = _episode_with_appends(spec)
    learner.observe(ep)
    assert learner.buffer.episodes[-1].rewards.tolist() == expected
    assert ep.rewards.tolist() == [0, 0, 0, 8]  # the caller's episode is not modified


def test_episodes_without_append_info_are_left_alone(two_step):
    _, spec = two_step
    learner = small_learner("qmix", spec, spread_append_reward=True)
    ep = dataclasses.replace(_episode_with_appends(spec), extras={})
    learner.observe(ep)
    assert learner.buffer.episodes[-1].rewards.tolist() == [0, 0, 0, 8]
