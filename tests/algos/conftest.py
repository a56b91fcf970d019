"""Shared fixtures for the algos tests: one torch thread (a busy 2-core machine), small helpers
to build learners on the matrix games."""

import numpy as np
import pytest
import torch


torch.set_num_threads(1)

import algos  # noqa: E402
import envs  # noqa: E402
from algos.buffer import Episode  # noqa: E402


@pytest.fixture
def two_step():
    env = envs.make("two_step_v0")
    return env, algos.EnvSpec.from_env(env)


@pytest.fixture
def one_step():
    env = envs.make("one_step_3x3_v0")
    return env, algos.EnvSpec.from_env(env)


def one_step_episode(joint, reward, n_actions=3) -> Episode:
    """A finished episode of the one-step game: one terminal round."""
    return Episode(
        obs=np.ones((2, 2, 1), np.float32),
        avail=np.ones((2, 2, n_actions), bool),
        state=np.ones((2, 1), np.float32),
        actions=np.array([joint], np.int64),
        rewards=np.array([reward], np.float32),
        terminated=True,
        adj=np.zeros((2, 2, 2), bool),
    )


def small_learner(name, spec, seed=0, **overrides):
    cfg = {
        "batch_size": 4,
        "learning_starts": 4,
        "hidden_dim": 16,
        "mixing_embed_dim": 8,
        "hypernet_embed": 16,
        "target_update_interval": 5,
    }
    cfg.update(overrides)
    return algos.build(name, spec, cfg, seed=seed)
