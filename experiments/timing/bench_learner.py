#!/usr/bin/env python
"""How long a learner update takes, and what share of a training episode that is.

    python experiments/timing/bench_learner.py                  # QMIX on the extractive report team
    python experiments/timing/bench_learner.py --episodes 8 --updates 50 algo=vdn
    python experiments/timing/bench_learner.py env=two_step     # any env and value learner train.py runs

Plays ``--episodes`` training episodes of the env as ``experiments/train.py`` composes it
(Hydra overrides after the options; default ``algo=qmix env=report_writing_extractive
rag=hashing judge.embedding=hashing``), fills the replay buffer with them up to the
algorithm's ``learning_starts``, times ``--updates`` calls of ``algo.update()`` (the
gradient steps one observed episode triggers: ``updates_per_episode`` of them on a batch of
``batch_size`` episodes) and prints both times and the update's share of an episode.

On the report env the update is a negligible share of an episode (docs/benchmark/learner/):
the episode's retrieval, judge and team work is where a training run's time goes, which is
why the learner is written the plain way (``algos/networks.py``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

import torch  # noqa: E402

DEFAULTS = ["algo=qmix", "env=report_writing_extractive", "rag=hashing", "judge.embedding=hashing"]


def measure(overrides: list[str], episodes: int, updates: int) -> dict[str, float]:
    """-> seconds per episode (median), seconds per ``algo.update()`` (median) and the share."""
    import tempfile

    import algos
    import envs
    from algos.training.env_configs import make_env
    from algos.training.rollout import run_episode
    from experiments.run_config import compose_run_config

    cfg = compose_run_config([*DEFAULTS, *overrides])
    torch.set_num_threads(cfg.torch_threads)
    with tempfile.TemporaryDirectory() as out:
        env = make_env(cfg.env, output_dir=Path(out) / "episodes", pool=envs.ResourcePool())
        spec = algos.EnvSpec.from_env(env)
        algo = algos.build(cfg.algo.name, spec, cfg.algo, seed=cfg.seed, device=cfg.device)
        if not hasattr(algo, "buffer"):
            raise SystemExit(f"{cfg.algo.name} keeps no replay buffer: nothing to time")
        played, episode_s = [], []
        for i in range(episodes):
            t0 = time.perf_counter()
            episode, _ = run_episode(env, algo, spec, explore=True, seed=cfg.seed + i, max_rounds=cfg.train.max_rounds)
            episode_s.append(time.perf_counter() - t0)
            played.append(episode)
        while len(algo.buffer) < max(algo.cfg.learning_starts, algo.cfg.batch_size):
            algo.observe(played[len(algo.buffer) % len(played)])
        algo.update()  # warm-up
        update_s = []
        for _ in range(updates):
            t0 = time.perf_counter()
            algo.update()
            update_s.append(time.perf_counter() - t0)
        env.close()
    episode = statistics.median(episode_s)
    update = statistics.median(update_s)
    return {"episode_s": episode, "update_s": update, "share": update / episode}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=4, help="training episodes played and timed")
    parser.add_argument("--updates", type=int, default=20, help="algo.update() calls timed")
    args, overrides = parser.parse_known_args(argv)
    figures = measure(overrides, args.episodes, args.updates)
    print(f"config: {' '.join([*DEFAULTS, *overrides])}")
    print(f"  episode (median of {args.episodes}):  {figures['episode_s'] * 1e3:10.1f} ms")
    print(f"  update  (median of {args.updates}):  {figures['update_s'] * 1e3:10.2f} ms")
    print(f"  update / episode:          {figures['share'] * 100:10.3f} %")


if __name__ == "__main__":
    main()
