import dataclasses

import numpy as np
import pytest
import torch

from algos.buffer import Episode, collate
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


@pytest.mark.parametrize(
    "cfg, expected",
    [
        ({}, [0, 0, 0, 8]),  # default: off
        ({"reward_spreading": "none"}, [0, 0, 0, 8]),
        ({"reward_spreading": "nstep"}, [0, 0, 0, 8]),  # nstep changes the targets, not the rewards
        ({"reward_spreading": "even"}, [2, 2, 2, 2]),
        ({"spread_append_reward": True}, [2, 2, 2, 2]),  # the deprecated flag still selects even spreading
        ({"spread_append_reward": False}, [0, 0, 0, 8]),
    ],
)
def test_learner_config_switches_spreading(two_step, cfg, expected):
    _, spec = two_step
    learner = small_learner("qmix", spec, **cfg)
    ep = _episode_with_appends(spec)
    learner.observe(ep)
    assert learner.buffer.episodes[-1].rewards.tolist() == expected
    assert ep.rewards.tolist() == [0, 0, 0, 8]  # the caller's episode is not modified


def test_bad_or_contradictory_spreading_config_is_refused(two_step):
    _, spec = two_step
    with pytest.raises(ValueError, match="reward_spreading must be one of"):
        small_learner("qmix", spec, reward_spreading="uniform")
    with pytest.raises(ValueError, match="contradicts reward_spreading='nstep'"):
        small_learner("qmix", spec, reward_spreading="nstep", spread_append_reward=True)


def _nstep_batch(spec, actions, since, rewards):
    T = len(rewards)
    ep = Episode(
        obs=np.zeros((T + 1, spec.n_agents, spec.obs_dim), np.float32),
        avail=np.ones((T + 1, spec.n_agents, spec.n_actions), bool),
        state=np.zeros((T + 1, spec.state_dim), np.float32),
        actions=np.asarray(actions, np.int64),
        rewards=np.asarray(rewards, np.float32),
        terminated=True,
        adj=np.zeros((T + 1, spec.n_agents, spec.n_agents), bool),
        extras={"rounds_since_append": np.asarray(since, np.float32)},
    )
    return collate([ep])


def test_nstep_targets_reach_to_the_append_and_stop_at_exploratory_actions(two_step):
    _, spec = two_step
    gamma = 0.5
    learner = small_learner("qmix", spec, reward_spreading="nstep", gamma=gamma)
    # rounds 0-2 prepare the append at round 2; round 3 is a new block ending at round 4
    batch = _nstep_batch(spec, [[0, 0]] * 5, [0, 0, 3, 0, 2], [0, 0, 6, 0, 2])
    greedy = torch.zeros(1, 6, 2, 1, dtype=torch.long)  # every recorded action is greedy
    lam = learner._block_lambda(batch, greedy, per_agent=False)
    assert lam.tolist() == [[1, 1, 0, 1, 0]]
    next_v = torch.full((1, 5), 100.0)
    y = learner.td_targets(batch.rewards, batch.terminated, batch.filled, next_v, lam)
    # round 0: 0 + g*0 + g^2*6 + g^3*Q'(after the append) -- the append's reward itself, not a bootstrap
    assert y[0, 0].item() == pytest.approx(gamma**2 * 6 + gamma**3 * 100)
    assert y[0, 2].item() == pytest.approx(6 + gamma * 100)
    assert y[0, 3].item() == pytest.approx(gamma * 2)  # the last append is terminal
    # agent 1's action at round 1 was exploratory: round 0 bootstraps instead (Watkins's cut)
    explored = greedy.clone()
    explored[0, 1, 1, 0] = 1
    lam = learner._block_lambda(batch, explored, per_agent=False)
    assert lam.tolist() == [[0, 1, 0, 1, 0]]
    # independent learners cut per agent
    lam = learner._block_lambda(batch, explored, per_agent=True)
    assert lam[0, 0].tolist() == [1, 0] and lam[0, 1].tolist() == [1, 1]


def test_nstep_without_append_info_is_one_step_td(two_step):
    _, spec = two_step
    learner = small_learner("qmix", spec, reward_spreading="nstep")
    batch = _nstep_batch(spec, [[0, 0]] * 3, [0, 0, 0], [1, 2, 3])
    batch.block_end = collate([dataclasses.replace(_episode_with_appends(spec), extras={})]).block_end[:, :3]
    lam = learner._block_lambda(batch, torch.zeros(1, 4, 2, 1, dtype=torch.long), per_agent=False)
    assert lam.tolist() == [[0, 0, 0]]


def test_episodes_without_append_info_are_left_alone(two_step):
    _, spec = two_step
    learner = small_learner("qmix", spec, reward_spreading="even")
    ep = dataclasses.replace(_episode_with_appends(spec), extras={})
    learner.observe(ep)
    assert learner.buffer.episodes[-1].rewards.tolist() == [0, 0, 0, 8]
