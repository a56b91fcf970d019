#!/usr/bin/env python
"""Greedy or sampled decoding for the LLM-team benchmark, decided by measurement.

    python experiments/protocol/decoding_noise.py SAMPLED_PANEL GREEDY_PANEL [--delta 0.05 0.03]

SAMPLED_PANEL: a validate_proxy output folder played with `llm.temperature` > 0 and
`validate.replicates` >= 2 (its panel.csv holds one row per episode, seeds 1,000,000 + r);
GREEDY_PANEL: one played greedy (one episode per cell). Policies and tasks are those both
panels played; the pipeline (handcrafted) and ablated policies are left out, as in the
policy-identity diagnostic. Printed (`algos.evaluation.decoding_noise`): one sampled
episode's sd within a cell, the sd across tasks of a paired policy difference (sampled, with
the episodes' noise removed; greedy, as played), and for each decoding and k episodes per cell
the tasks and episodes a paired test needs to resolve each delta at 80 % power, alpha 0.05.
The cheapest row in episodes is the default the measurement argues for.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from algos.evaluation.decoding_noise import greedy_sd, sampled_noise, tasks_for
from experiments.protocol.comm_sensitivity import read_panel

LEFT_OUT = ("handcrafted", "ablated:")


def read_scores(folder: Path) -> dict[str, dict[str, list[float]]]:
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in read_panel(folder):
        if not row["policy"].startswith(LEFT_OUT) and row.get("llm_score") not in (None, ""):
            scores[row["policy"]][row["task"]].append(float(row["llm_score"]))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sampled", type=Path, help="a validate_proxy folder played sampled with >= 2 replicates")
    parser.add_argument("greedy", type=Path, help="a validate_proxy folder played greedy")
    parser.add_argument("--delta", type=float, nargs="+", default=[0.05, 0.03], help="differences to resolve")
    parser.add_argument("--bootstrap", type=int, default=2000, help="resamples of the tasks for the intervals")
    args = parser.parse_args()
    sampled, greedy = read_scores(args.sampled), read_scores(args.greedy)
    policies = sorted(set(sampled) & set(greedy))
    # a task counts once every policy has >= 2 sampled episodes of it and a greedy one
    tasks = sorted(
        t
        for t in set.intersection(*(set(sampled[p]) for p in policies))
        if all(len(sampled[p][t]) >= 2 and t in greedy[p] for p in policies)
    )
    sampled = {p: {t: sampled[p][t] for t in tasks if t in sampled[p]} for p in policies}
    noise = sampled_noise(sampled)
    played = {p: {t: greedy[p][t][0] for t in greedy[p]} for p in policies}
    g_same, g_all = greedy_sd(played, tasks), greedy_sd(played)
    print(f"policies: {', '.join(policies)}; tasks both panels played: {', '.join(tasks)}")
    print(
        f"sampled: one episode's sd within a cell {noise.episode_sd:.3f}; task sd of a paired difference, "
        f"episode noise removed, {noise.task_sd:.3f} ({noise.tasks} tasks, {noise.pairs} pairs, "
        f"{noise.episodes_per_cell} episodes per cell)"
    )
    n_greedy = len(next(iter(played.values())))
    print(f"greedy: task sd of a paired difference {g_same:.3f} on these tasks, {g_all:.3f} on all {n_greedy}")
    # How sure: the same figures over the tasks resampled with replacement
    rng = np.random.default_rng(0)
    boot = []
    for _ in range(args.bootstrap):
        pick = [(f"{tasks[i]}#{j}", tasks[i]) for j, i in enumerate(rng.integers(0, len(tasks), len(tasks)))]
        s = sampled_noise({p: {new: sampled[p][old] for new, old in pick} for p in policies})
        g = greedy_sd({p: {new: played[p][old] for new, old in pick} for p in policies})
        boot.append((s.episode_sd, s.task_sd, s.difference_sd(1), g))
    low, high = np.percentile(np.array(boot), [2.5, 97.5], axis=0)
    print(
        f"95 % bootstrap over these tasks: episode sd [{low[0]:.3f}, {high[0]:.3f}], sampled task sd "
        f"[{low[1]:.3f}, {high[1]:.3f}], sampled one-episode difference sd [{low[2]:.3f}, {high[2]:.3f}], "
        f"greedy [{low[3]:.3f}, {high[3]:.3f}]; greedy above sampled one-episode in "
        f"{np.mean([b[3] > b[2] for b in boot]):.0%} of resamples"
    )
    print()
    print(
        "| decoding | episodes per cell | sd of a paired difference | "
        + " | ".join(f"tasks (episodes per policy) for {d}" for d in args.delta)
        + " |"
    )
    print("|---|---|---|" + "---|" * len(args.delta))
    rows = [("greedy", 1, g_same)] + [("sampled", k, noise.difference_sd(k)) for k in (1, 2, 4)]
    for name, k, sd in rows:
        cells = " | ".join(f"{tasks_for(sd, d)} ({tasks_for(sd, d) * k})" for d in args.delta)
        print(f"| {name} | {k} | {sd:.3f} | {cells} |")


if __name__ == "__main__":
    main()
