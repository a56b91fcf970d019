"""Rollouts on Ray actors (rollout.backend=ray): a local cluster with 2 workers gives
the episodes and the learner the in-process runner gives; a worker that dies
mid-episode has its episodes re-run (or dropped, logged) and training goes on."""

import logging

import pytest
import torch

import algos
import envs
from algos.training.vector_rollout import VectorRollout

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")

PLUGIN = "tests.algos.training.crashing_env"
LEARNER = {"batch_size": 4, "learning_starts": 4, "target_update": "soft", "epsilon_anneal_steps": 40, "hidden_dim": 16}


def blocks(runner, algo, *, block=8, total=24, between=None):
    """train.py's loop with sync_every=block: collect, then observe + update in order."""
    learnt, dropped = [], []
    for b, first in enumerate(range(0, total, block)):
        if between is not None:
            between(b)
        done = runner.run_episodes([(i, 500 + i) for i in range(first, first + block)], explore=True)
        dropped += done.failures
        for r in done.results:
            algo.observe(r.episode)
            algo.update()
            learnt.append(r)
    return learnt, dropped


def test_two_ray_workers_match_the_in_process_runner_through_a_crash_and_a_kill(tmp_path, caplog):
    import importlib

    importlib.import_module(PLUGIN)
    spec = algos.EnvSpec.from_env(envs.make("two_step_v0"))
    # seed 503 (block 0) kills its worker once; 513 (block 1) every time; before block 2 an actor is killed
    env_kwargs = {"crash_once": [503], "crash_always": [513], "marker_dir": str(tmp_path)}
    ray_algo = algos.build("qmix", spec, LEARNER, seed=4)
    from algos.training.ray_rollout import RayRollout

    runner = RayRollout(
        "crashing_two_step_v0",
        env_kwargs,
        ray_algo,
        spec,
        algo_name="qmix",
        algo_cfg=LEARNER,
        num_envs=2,
        workers=2,
        episode_retries=1,
        plugins=[PLUGIN],
    )
    try:
        pids = runner.worker_pids()
        assert len(set(pids)) == 2

        def kill_before_last(b):
            if b == 2:
                ray.kill(runner.actors[0])

        with caplog.at_level(logging.WARNING):
            learnt, dropped = blocks(runner, ray_algo, between=kill_before_last)
        assert runner.lost_workers >= 2  # the crash at 503 and the kill (and 513's tries)
    finally:
        runner.close()
    assert "re-running its 2 episode(s)" in caplog.text
    # 513 crashes on every try: its chunk (513 and its chunk-mate) is dropped with the reason
    assert {f.seed for f in dropped} >= {513} and all("died" in f.reason for f in dropped)
    assert "dropping episode(s)" in caplog.text
    dropped_idx = {f.index for f in dropped}
    assert len(learnt) == 24 - len(dropped_idx) and 3 in {r.index for r in learnt}  # 503 was re-run

    # The same learning in-process, skipping the dropped episodes: identical results.
    ref_algo = algos.build("qmix", spec, LEARNER, seed=4)
    ref = []
    with VectorRollout(lambda: envs.make("two_step_v0"), ref_algo, spec, num_envs=3) as local:
        for first in range(0, 24, 8):
            done = local.run_episodes([(i, 500 + i) for i in range(first, first + 8)], explore=True)
            for r in done.results:
                if r.index in dropped_idx:
                    continue
                ref_algo.observe(r.episode)
                ref_algo.update()
                ref.append(r)
    assert [r.index for r in ref] == [r.index for r in learnt]
    for a, b in zip(ref, learnt):
        assert a.episode.actions.tolist() == b.episode.actions.tolist()
        assert a.episode.rewards.tolist() == b.episode.rewards.tolist()
    sa, sb = ref_algo.state_dict(), ray_algo.state_dict()
    for net in ("agent", "mixer"):
        assert all(torch.equal(sa[net][k], sb[net][k]) for k in sa[net]), net
