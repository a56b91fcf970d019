"""Many episodes in flight in one process (algos.training.vector_rollout): the same
episodes and the same learnt parameters whatever the number of envs, on the matrix
games and the report env (scripted TEST DOUBLE backend), for learners and fixed
policies, the handcrafted pipeline's plans included; faults and bad settings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import algos
import envs
from agents_llm.backends import LLMConfigError
from agents_llm.backends.scripted import ScriptedBackend
from algos.training.rollout import run_episode
from algos.training.vector_rollout import VectorRollout, check_positive, evaluate_vectorized
from tests.report_doubles import HASHING_JUDGE, HASHING_RAG, isolated_cache  # noqa: F401 (fixture)

LEARNER = {"batch_size": 4, "learning_starts": 4, "target_update": "soft", "epsilon_anneal_steps": 40, "hidden_dim": 16}


def train_in_blocks(make_env, algo, spec, *, num_envs: int, block: int, total: int, seed: int = 0):
    """What experiments/train.py does with rollout.sync_every=block: collect a block with the
    policy as it is, then observe + update episode by episode, in episode order."""
    episodes = []
    with VectorRollout(make_env, algo, spec, num_envs=num_envs) as runner:
        for first in range(0, total, block):
            done = runner.run_episodes(
                [(i, seed * 1_000_003 + i) for i in range(first, min(first + block, total))], explore=True
            )
            assert not done.failures
            for r in done.results:
                algo.observe(r.episode)
                algo.update()
                episodes.append(r)
    return episodes


def assert_same_episodes(a, b):
    assert [r.index for r in a] == [r.index for r in b]
    for x, y in zip(a, b):
        for key in ("obs", "avail", "state", "actions", "rewards", "adj"):
            np.testing.assert_array_equal(
                getattr(x.episode, key), getattr(y.episode, key), err_msg=f"episode {x.index} {key}"
            )
        assert x.episode.terminated == y.episode.terminated
        assert x.stats.infos == y.stats.infos


def assert_same_parameters(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    for net in ("agent", "mixer"):
        if net in sa:
            for k in sa[net]:
                assert torch.equal(sa[net][k], sb[net][k]), f"{net}.{k} differs"
    assert a.t_env == b.t_env and a.n_updates == b.n_updates


@pytest.mark.parametrize("algo_name", ["qmix"])
def test_matrix_game_learner_is_the_same_for_one_and_eight_envs(algo_name):
    spec = algos.EnvSpec.from_env(envs.make("two_step_v0"))
    runs = []
    for n in (1, 8):
        algo = algos.build(algo_name, spec, LEARNER, seed=5)
        runs.append(
            (train_in_blocks(lambda: envs.make("two_step_v0"), algo, spec, num_envs=n, block=8, total=32), algo)
        )
    assert_same_episodes(runs[0][0], runs[1][0])
    assert_same_parameters(runs[0][1], runs[1][1])
    assert runs[0][1].n_updates == 29  # it really learnt along the way
    # exploration really differed between episodes (each has its own stream)
    assert len({tuple(r.episode.actions.ravel()) for r in runs[0][0]}) > 1


def report_env_factory(backend):
    def make():
        from envs.report.writing import ReportWritingEnv

        return ReportWritingEnv(
            llm={"backend": "scripted"},
            rag=HASHING_RAG,
            judge=HASHING_JUDGE,
            max_rounds=3,
            min_rounds_before_terminate=1,
            backend=backend,
        )

    return make


@pytest.mark.slow
def test_report_env_learner_is_the_same_for_one_and_eight_envs():
    backend = ScriptedBackend()
    make = report_env_factory(backend)
    spec = algos.EnvSpec.from_env(make())
    runs = []
    for n in (1, 8):
        algo = algos.build("qmix", spec, LEARNER, seed=2)
        runs.append((train_in_blocks(make, algo, spec, num_envs=n, block=12, total=12, seed=1), algo))
    assert_same_episodes(runs[0][0], runs[1][0])
    assert_same_parameters(runs[0][1], runs[1][1])
    assert runs[1][1].n_updates == 9  # learning starts at 4 episodes: it learnt from every later one
    # and eight really were in flight together: more calls at once than one round of one episode makes
    assert backend.max_in_flight > 4


@pytest.mark.slow
def test_fixed_policies_match_the_sequential_loop_on_the_report_env():
    make = report_env_factory(ScriptedBackend())
    env = make()
    spec = algos.EnvSpec.from_env(env)
    for name, cfg in (
        ("handcrafted", {"rounds": {"planning": 1, "research": 1, "drafting": 2, "review": 0, "revision": 0}}),
        ("preset", {"topology": "ring"}),
    ):
        policy = algos.build(name, spec, cfg, seed=0)
        sequential = [run_episode(env, policy, spec, explore=False, seed=100 + i) for i in range(3)]
        with VectorRollout(make, algos.build(name, spec, cfg, seed=0), spec, num_envs=3) as runner:
            done = runner.run_episodes([(i, 100 + i) for i in range(3)], explore=False)
        assert len(done.results) == 3
        for (ep, st), r in zip(sequential, done.results):
            np.testing.assert_array_equal(ep.actions, r.episode.actions, err_msg=name)
            np.testing.assert_array_equal(ep.obs, r.episode.obs, err_msg=name)
            np.testing.assert_array_equal(ep.rewards, r.episode.rewards, err_msg=name)
            assert st.infos == r.stats.infos and st.action_counts.tolist() == r.stats.action_counts.tolist()
            # the time-limit record the learners' TD target reads (envs/__init__.py) is the same too
            assert (ep.terminated, ep.truncated, ep.time_limit_observable) == (
                r.episode.terminated,
                r.episode.truncated,
                r.episode.time_limit_observable,
            ), name


def test_greedy_evaluation_matches_the_sequential_evaluate():
    from algos.training.rollout import evaluate

    spec = algos.EnvSpec.from_env(envs.make("two_step_v0"))
    algo = algos.build("qmix", spec, LEARNER, seed=1)
    want = evaluate(envs.make("two_step_v0"), algo, spec, 6, seed=40)
    with VectorRollout(lambda: envs.make("two_step_v0"), algo, spec, num_envs=4) as runner:
        got = evaluate_vectorized(runner, spec, 6, seed=40)
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == pytest.approx(want[k], abs=1e-6), k


@pytest.mark.slow
def test_request_limit_holds_and_changes_nothing():
    results = []
    for limit in (None, 2):
        backend = ScriptedBackend(latency_s=0.01, max_concurrent_requests=limit)
        make = report_env_factory(backend)
        spec = algos.EnvSpec.from_env(make())
        with VectorRollout(make, algos.build("preset", spec, {"topology": "full"}), spec, num_envs=4) as runner:
            done = runner.run_episodes([(i, i) for i in range(4)], explore=False)
        results.append((done, backend.max_in_flight))
    assert results[0][1] > 2 and results[1][1] == 2
    assert_same_episodes(results[0][0].results, results[1][0].results)


class FailingEnv:
    """Wraps the two-step game; the episode reset with seed `bad` raises in its first step."""

    def __init__(self, bad):
        self.env, self.bad, self.seed = envs.make("two_step_v0"), bad, None

    def __getattr__(self, name):
        return getattr(self.env, name)

    def reset(self, seed=None, options=None):
        self.seed = seed
        return self.env.reset(seed=seed)

    async def astep(self, actions):
        if self.seed == self.bad:
            self.env.agents = []
            raise ConnectionError("server refused the connection")
        return self.env.step(actions)


def test_an_episode_that_raises_is_dropped_with_its_reason_and_the_rest_go_on(caplog):
    spec = algos.EnvSpec.from_env(envs.make("two_step_v0"))
    with VectorRollout(lambda: FailingEnv(bad=12), algos.build("random", spec), spec, num_envs=3) as runner:
        done = runner.run_episodes([(i, 10 + i) for i in range(6)], explore=True)
    assert [r.index for r in done.results] == [0, 1, 3, 4, 5]
    assert [(f.index, f.seed) for f in done.failures] == [(2, 12)]
    assert "ConnectionError: server refused the connection" in done.failures[0].reason
    assert "episode 2 (seed 12) dropped" in caplog.text


def test_bad_settings_name_themselves():
    spec = algos.EnvSpec.from_env(envs.make("two_step_v0"))
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="rollout.num_envs must be an integer >= 1"):
            VectorRollout(lambda: envs.make("two_step_v0"), algos.build("random", spec), spec, num_envs=bad)
    with pytest.raises(ValueError, match="rollout.workers"):
        check_positive("rollout.workers", 0)
    with pytest.raises(LLMConfigError, match="llm.max_concurrent_requests must be an integer >= 1"):
        ScriptedBackend(max_concurrent_requests=0)
    with pytest.warns(UserWarning, match="llm.max_concurrent_requests=8 is above llm.server_slots=4"):
        ScriptedBackend(max_concurrent_requests=8, server_slots=4)


def test_more_requests_in_flight_than_server_slots_is_warned_once():
    backend = ScriptedBackend(latency_s=0.01, server_slots=2)
    make = report_env_factory(backend)
    spec = algos.EnvSpec.from_env(make())
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with VectorRollout(make, algos.build("preset", spec, {"topology": "full"}), spec, num_envs=3) as runner:
            runner.run_episodes([(i, i) for i in range(3)], explore=False)
    slot_warnings = [w for w in seen if "llm.server_slots=2" in str(w.message)]
    assert len(slot_warnings) == 1 and "llm.max_concurrent_requests" in str(slot_warnings[0].message)


def test_missing_ray_is_a_clear_message(monkeypatch):
    import builtins

    from algos.training import ray_rollout

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(
        ImportError, match=r"rollout.backend=ray needs Ray, an optional extra: pip install -e '.\[ray\]'"
    ):
        ray_rollout.import_ray()
