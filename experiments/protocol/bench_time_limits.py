#!/usr/bin/env python
"""Does QMIX on the report env learn values the env can pay? Before/after the time-limit
and reward-spreading fixes, on the scripted TEST DOUBLE backend (fast, deterministic).

    python experiments/protocol/bench_time_limits.py --episodes 1000 --seeds 0 1 2
    python experiments/protocol/bench_time_limits.py --variant before --seeds 0   # only the landed defaults
    python experiments/protocol/bench_time_limits.py --override judge.embedding=hashing   # lexical judge embedding, no MiniLM
    python experiments/protocol/bench_time_limits.py --jobs 6 --progress-every 100   # the 6 runs side by side, one thread each

The run is the in-process equivalent of
``python experiments/train.py algo=qmix env=report_writing llm=scripted judge=reference
rag=hashing train.episodes=1000 seed=S`` (the same composed config, env and learner; no
evaluation or checkpoints). Variants:

* ``before``: the landed defaults -- even reward spreading, and the round budget
  bootstrapped through (``reward_spreading=even time_limit_observable=false``);
* ``after``: today's defaults (no spreading; the env declares its visible round budget,
  so reaching it is terminal).

For every run it prints the largest Q the learner produced (``q_taken_mean`` of its
updates, ``q_chosen`` of the actions it took) against the best achievable return, which
it bounds two ways: the largest return any episode of any run reached (many different
policies: uniform exploration to greedy), and the reward's telescoping bound -- the
returns are sums of score and length-score deltas, so no episode earns more than
``w_score + w_length`` times their ranges.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

import numpy as np  # noqa: E402
import torch  # noqa: E402

import algos  # noqa: E402
from algos.training.rollout import run_episode  # noqa: E402
from experiments.run_config import compose_run_config  # noqa: E402
from algos.training.env_configs import make_env  # noqa: E402

VARIANTS = {
    "before": ["algo.reward_spreading=even", "algo.time_limit_observable=false"],
    "after": [],
}


def compose_config(seed: int, extra: list[str]):
    overrides = [
        "algo=qmix",
        "env=report_writing",
        "llm=scripted",
        "judge=reference",
        "rag=hashing",
        f"seed={seed}",
        *extra,
    ]
    return compose_run_config(overrides)


def run(seed: int, episodes: int, variant: str, extra: list[str], progress_every: int = 0) -> dict[str, float]:
    torch.set_num_threads(1)  # also in a worker process: one thread per run
    cfg = compose_config(seed, VARIANTS[variant] + extra)
    env = make_env(cfg.env)
    spec = algos.EnvSpec.from_env(env)
    learner = algos.build(cfg.algo.name, spec, cfg.algo, seed=seed)
    q_taken, q_chosen, returns, cut = [], [], [], 0
    t0 = time.perf_counter()
    for ep in range(episodes):
        episode, stats = run_episode(env, learner, spec, explore=True, seed=seed * 1_000_003 + ep)
        learner.observe(episode)
        m = learner.update()
        if "q_taken_mean" in m:
            q_taken.append(m["q_taken_mean"])
        if stats.q_values:
            q_chosen.append(max(stats.q_values))
        returns.append(stats.ret)
        cut += int(episode.truncated)
        if progress_every and (ep + 1) % progress_every == 0:
            print(
                f"  [{variant} seed {seed}] {ep + 1}/{episodes} episodes, max q_taken_mean so far "
                f"{max(q_taken, default=float('nan')):.3f}, max return so far {max(returns):.3f}, "
                f"{time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    return {
        "max_q_taken": max(q_taken, default=float("nan")),
        "last_q_taken": float(np.mean(q_taken[-50:])) if q_taken else float("nan"),
        "max_q_chosen": max(q_chosen, default=float("nan")),
        "max_return": max(returns),
        "mean_return_last100": float(np.mean(returns[-100:])),
        "cut_share": cut / episodes,
        "seconds": time.perf_counter() - t0,
        "reward_bound": reward_bound(cfg),
    }


def reward_bound(cfg) -> float:
    """Sum of the reward weights: the return telescopes to w_score * final score +
    w_length * final length score (both in [0, 1]) minus their start values (0)."""
    judge = cfg.get("judge") or {}
    return float(judge.get("w_score", 1.0)) + float(judge.get("w_length", 1.0))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=1000)
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--variant", nargs="+", choices=sorted(VARIANTS), default=["before", "after"])
    p.add_argument("--override", nargs="*", default=[], dest="overrides", help="extra Hydra overrides for every run")
    p.add_argument("--jobs", type=int, default=1, help="runs side by side in worker processes (one thread each)")
    p.add_argument("--progress-every", type=int, default=0, help="print a progress line every N episodes (stderr)")
    args = p.parse_args()
    torch.set_num_threads(1)
    keys = [(variant, seed) for variant in args.variant for seed in args.seeds]
    results = {}
    with concurrent.futures.ProcessPoolExecutor(
        max(args.jobs, 1), mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        futures = {
            pool.submit(run, seed, args.episodes, variant, args.overrides, args.progress_every): (variant, seed)
            for variant, seed in keys
        }
        for fut in concurrent.futures.as_completed(futures):
            variant, seed = futures[fut]
            r = fut.result()
            results[(variant, seed)] = r
            print(
                f"{variant:6s} seed {seed}: max q_taken_mean {r['max_q_taken']:.3f} (last 50 updates {r['last_q_taken']:.3f}), "
                f"max q_chosen {r['max_q_chosen']:.3f}, max return {r['max_return']:.3f}, "
                f"mean return (last 100) {r['mean_return_last100']:.3f}, cut at the budget {100 * r['cut_share']:.0f} %, "
                f"{r['seconds']:.0f} s",
                flush=True,
            )
    best = max(r["max_return"] for r in results.values())
    bound = max(r["reward_bound"] for r in results.values())
    print(
        f"best achievable return: >= {best:.3f} (largest return of any episode above, {len(results)} runs), "
        f"<= {bound:.3f} (reward weights' telescoping bound)"
    )
    print(
        f"{'variant':8s}{'seed':>5s}{'max q_taken':>13s}{'max q_chosen':>14s}{'max return':>12s}"
        f"{'ret last100':>13s}{'cut at budget':>15s}"
    )
    for key in keys:
        r = results[key]
        print(
            f"{key[0]:8s}{key[1]:5d}{r['max_q_taken']:13.3f}{r['max_q_chosen']:14.3f}{r['max_return']:12.3f}"
            f"{r['mean_return_last100']:13.3f}{100 * r['cut_share']:14.0f}%"
        )
    for key in keys:
        variant, seed = key
        r = results[key]
        print(
            f"  {variant:6s} seed {seed}: max Q {max(r['max_q_taken'], r['max_q_chosen']):.3f}  vs best return {best:.3f}: "
            f"{'ABOVE' if max(r['max_q_taken'], r['max_q_chosen']) > best else 'within'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
