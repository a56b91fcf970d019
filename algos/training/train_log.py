"""The training log's rows: episodes since the last row, averaged into one.

Every ``train.log_every`` episodes the trainer writes one ``train`` row: the window's
mean return, length and env infos, the mean chosen Q, the time split between rollout
and learning, the pooled action distribution, the algorithm's ``metrics()`` and the
mean of its update metrics (counters such as ``updates``: the latest value).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .rollout import EpisodeStats, action_distribution

COUNTERS = ("updates", "target_updates")  # update metrics that count: the latest value, not the window mean


def mean_dicts(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Per key, the mean over the rows that have it (keys sorted)."""
    keys: set[str] = set().union(*rows) if rows else set()
    return {k: float(np.mean([r[k] for r in rows if k in r])) for k in sorted(keys)}


class TrainLogWindow:
    """The episodes finished since the last ``train`` row."""

    def __init__(self) -> None:
        self.stats: list[EpisodeStats] = []
        self.updates: list[dict[str, float]] = []
        self.times: list[tuple[float, float]] = []  # (episode wall time, of which learning)

    def __len__(self) -> int:
        return len(self.stats)

    def add(self, stats: EpisodeStats, update: Mapping[str, float], *, episode_s: float, update_s: float) -> None:
        self.times.append((episode_s, update_s))  # episode = rollout share + learning
        self.stats.append(stats)
        if update:
            self.updates.append(dict(update))

    def row(
        self,
        *,
        t_env: int,
        wall_s: float,
        agents: list[str],
        algo_metrics: Mapping[str, float],
        failed_episodes: int = 0,
        update_metric_names: Sequence[str] = (),
    ) -> dict[str, float]:
        """The window's row; ``failed_episodes``: episodes the concurrent runner dropped so far;
        ``update_metric_names``: columns the row has even when no update ran (NaN then)."""
        row = {"t_env": float(t_env), "wall_s": wall_s}
        row.update(
            mean_dicts(
                [
                    {
                        "return": s.ret,
                        "length": float(s.length),
                        **s.infos,
                        **({"q_chosen_mean": float(np.mean(s.q_values))} if s.q_values else {}),
                    }
                    for s in self.stats
                ]
            )
        )
        row["time/episode_s"] = float(np.mean([a for a, _ in self.times]))
        row["time/update_s"] = float(np.mean([b for _, b in self.times]))
        row.update(action_distribution(np.sum([s.action_counts for s in self.stats], axis=0), agents))
        row.update(algo_metrics)
        row.update({k: float("nan") for k in update_metric_names})
        row.update(mean_dicts(self.updates))
        if self.updates:
            row.update({k: v for k, v in self.updates[-1].items() if k in COUNTERS})
        if failed_episodes:
            row["rollout/failed_episodes"] = float(failed_episodes)
        return row

    def infos_row(self, *, t_env: int) -> dict[str, float]:
        """The window's mean env infos only (what a run stopped early still logs)."""
        return {"t_env": float(t_env), **mean_dicts([s.infos for s in self.stats])}

    def clear(self) -> None:
        self.stats, self.updates, self.times = [], [], []
