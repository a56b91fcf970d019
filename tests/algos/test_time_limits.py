"""Time limits: a cut the agents can see is terminal for the TD target, one they cannot
see is bootstrapped; the env declares which, the learner config can override it."""

import warnings

import numpy as np
import pytest

import algos
import envs
from algos.buffer import collate
from algos.training.rollout import run_episode

from .test_rollout import GraphEnv


class DeclaredGraphEnv(GraphEnv):
    """GraphEnv (truncated at its round budget) with a declaration, and optionally a
    per-episode override in the last round's infos."""

    def __init__(self, declared=None, info_override=None, **kw):
        super().__init__(**kw)
        if declared is not None:
            self.time_limit_observable = declared
        self.info_override = info_override

    def step(self, actions):
        obs, rew, term, trunc, infos = super().step(actions)
        if self.info_override is not None and any(trunc.values()):
            for info in infos.values():
                info["time_limit_observable"] = self.info_override
        return obs, rew, term, trunc, infos


def _learner(env, **cfg):
    spec = algos.EnvSpec.from_env(env)
    return algos.build("qmix", spec, {"batch_size": 1, "learning_starts": 1, "hidden_dim": 8, **cfg}, seed=0), spec


@pytest.mark.parametrize(
    "declared, info_override, cfg_override, terminal",
    [
        (True, None, None, True),  # visible budget: terminal
        (False, None, None, False),  # hidden limit: bootstrap
        (True, False, None, False),  # this episode's cut was a hidden one (infos override the attribute)
        (False, True, None, True),
        (True, None, False, False),  # the config overrides the env
        (False, None, True, True),
    ],
)
def test_a_cut_is_terminal_exactly_when_its_limit_is_observable(declared, info_override, cfg_override, terminal):
    env = DeclaredGraphEnv(declared=declared, info_override=info_override, rounds=3)
    learner, spec = _learner(env, time_limit_observable=cfg_override)
    ep, stats = run_episode(env, learner, spec, explore=True, seed=0)
    assert ep.truncated and not ep.terminated and not stats.terminated
    assert ep.time_limit_observable is (declared if info_override is None else info_override)
    learner.observe(ep)
    stored = learner.buffer.episodes[-1]
    assert stored.terminated is terminal
    batch = collate([stored])
    assert batch.terminated[0].tolist() == [0.0, 0.0, 1.0 if terminal else 0.0]
    # the TD target of the cut round: its reward alone when terminal, plus gamma * Q' otherwise
    metrics = learner.train_on_batch(batch)
    assert np.isfinite(metrics["loss"])
    assert ep.terminated is False  # the caller's episode is not modified


def test_undeclared_limit_bootstraps_with_a_warning_once():
    env = DeclaredGraphEnv(rounds=2)
    learner, spec = _learner(env)
    assert spec.time_limit_observable is None
    with pytest.warns(UserWarning, match="does not declare time_limit_observable"):
        learner.observe(run_episode(env, learner, spec, explore=True, seed=0)[0])
    assert learner.buffer.episodes[-1].terminated is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        learner.observe(run_episode(env, learner, spec, explore=True, seed=1)[0])


def test_a_terminated_episode_is_never_bootstrapped_whatever_the_override():
    env = DeclaredGraphEnv(declared=False, rounds=5, terminate_at=2)
    learner, spec = _learner(env, time_limit_observable=False)
    ep, _ = run_episode(env, learner, spec, explore=True, seed=0)
    assert ep.terminated and not ep.truncated
    learner.observe(ep)
    assert learner.buffer.episodes[-1].terminated


def test_a_runner_cut_is_not_a_declared_time_limit():
    """run_episode(max_rounds=...) stopping an episode the env had not ended is no env
    truncation: bootstrap, whatever the env declares."""
    env = DeclaredGraphEnv(declared=True, rounds=10)
    learner, spec = _learner(env)
    ep, _ = run_episode(env, learner, spec, explore=True, seed=0, max_rounds=3)
    assert len(ep) == 3 and not ep.truncated
    learner.observe(ep)
    assert learner.buffer.episodes[-1].terminated is False


def test_delayed_reward_game_cut_is_terminal_for_the_learner():
    env = envs.make("delayed_reward_v0")
    learner, spec = _learner(env)
    ep, _ = run_episode(env, learner, spec, explore=True, seed=0)
    assert len(ep) == env.horizon and ep.truncated and ep.time_limit_observable
    learner.observe(ep)
    assert learner.buffer.episodes[-1].terminated
