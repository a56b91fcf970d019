"""Greedy or sampled decoding for a benchmark: what sampling adds, and what k episodes average away.

A policy comparison on the LLM team is a mean over tasks of per-task paired differences
(policy a minus policy b on the same task). Its spread across tasks decides how many tasks a
difference needs. Under greedy decoding a cell replays exactly, so a second episode adds
nothing: the per-task difference carries the task's effect and the one decoding path greedy
happens to take, and neither averages out. Under seeded sampling a cell's episodes are
replicates: the per-task difference of k-episode means is the task's effect plus the
episodes' noise, whose share shrinks as 1/k.

From a sampled panel with >= 2 episodes per cell (`scores[policy][task]` = the episodes'
scores) this estimates

* `episode_sd`: one episode's sd within a cell (pooled over cells);
* `task_sd`: the sd across tasks of a paired difference with the episodes' noise removed
  (var of the k-episode mean differences minus 2 episode_var / k, floored at 0), pooled over
  policy pairs;

and from a greedy panel (one episode per cell) `greedy_sd`, the sd across tasks of a paired
difference. `tasks_for(sd, delta)` is the tasks a two-sided paired test at alpha 0.05 needs for
80 % power to resolve `delta` (normal approximation).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

Z_ALPHA, Z_POWER = 1.959964, 0.841621  # two-sided 5 %, 80 % power


def tasks_for(sd: float, delta: float) -> int:
    """Tasks a paired comparison needs for 80 % power at alpha 0.05 to resolve `delta`."""
    if delta <= 0:
        raise ValueError(f"delta must be > 0, got {delta}")
    return max(2, int(np.ceil(((Z_ALPHA + Z_POWER) * sd / delta) ** 2)))


@dataclass(frozen=True)
class SampledNoise:
    episode_sd: float  # one episode's sd within a cell
    task_sd: float  # sd across tasks of a paired difference, the episodes' noise removed
    episodes_per_cell: int
    tasks: int
    pairs: int

    def difference_sd(self, k: int) -> float:
        """sd across tasks of a paired difference of k-episode cell means."""
        return float(np.sqrt(self.task_sd**2 + 2 * self.episode_sd**2 / k))


def _common(scores: Mapping[str, Mapping[str, Sequence[float]]]) -> tuple[list[str], list[str]]:
    policies = sorted(scores)
    tasks = sorted(set.intersection(*(set(scores[p]) for p in policies))) if policies else []
    return policies, tasks


def sampled_noise(scores: Mapping[str, Mapping[str, Sequence[float]]]) -> SampledNoise:
    """Episode and task noise of a sampled panel: `scores[policy][task]` holds >= 2 episodes."""
    policies, tasks = _common(scores)
    if len(policies) < 2 or len(tasks) < 2:
        raise ValueError(f"need >= 2 policies and >= 2 tasks played by all of them, got {policies} x {tasks}")
    k = min(len(scores[p][t]) for p in policies for t in tasks)
    if k < 2:
        raise ValueError("a sampled panel needs >= 2 episodes in every cell (validate.replicates=2)")
    cells = np.array([[list(scores[p][t])[:k] for t in tasks] for p in policies], dtype=float)  # (P, T, k)
    episode_var = float(cells.var(axis=2, ddof=1).mean())
    means = cells.mean(axis=2)  # (P, T)
    task_vars = [
        max(0.0, float(np.var(means[a] - means[b], ddof=1)) - 2 * episode_var / k)
        for a, b in itertools.combinations(range(len(policies)), 2)
    ]
    return SampledNoise(
        episode_sd=float(np.sqrt(episode_var)),
        task_sd=float(np.sqrt(np.mean(task_vars))),
        episodes_per_cell=k,
        tasks=len(tasks),
        pairs=len(task_vars),
    )


def greedy_sd(scores: Mapping[str, Mapping[str, float]], tasks: Sequence[str] | None = None) -> float:
    """sd across tasks of a paired difference on a greedy panel (one score per cell), pooled over pairs."""
    policies = sorted(scores)
    chosen = sorted(set.intersection(*(set(scores[p]) for p in policies)))
    if tasks is not None:
        chosen = [t for t in chosen if t in set(tasks)]
    if len(policies) < 2 or len(chosen) < 2:
        raise ValueError(f"need >= 2 policies and >= 2 common tasks, got {policies} x {chosen}")
    table = np.array([[scores[p][t] for t in chosen] for p in policies], dtype=float)
    pair_vars = [float(np.var(table[a] - table[b], ddof=1)) for a, b in itertools.combinations(range(len(policies)), 2)]
    return float(np.sqrt(np.mean(pair_vars)))
