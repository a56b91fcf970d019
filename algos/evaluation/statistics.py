"""Aggregate scores over runs and tasks the way rliable recommends, through rliable itself.

A score matrix is `(runs, tasks)`: one row per independent run (a training seed, or an
evaluation repetition of a fixed policy), one column per task (a held-out topic).

* Interquartile mean (IQM): the mean of the middle 50 % of all run-task scores.
* 95 % stratified bootstrap confidence intervals: runs are resampled with replacement
  within each task (the tasks stay fixed), the percentile interval of the statistic.
* Probability of improvement P(X > Y): per task, the probability that a random run of X
  scores above a random run of Y (ties count half), averaged over tasks; its interval
  resamples the runs of X and of Y independently within each task.

rliable 1.2.0 imports `arch`, which needs `pandas<3`. It is imported on first use so
that `algos` stays light for everything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

DEFAULT_REPS = 2000  # bootstrap resamples; rliable's default is 50000, which adds little at these sizes
CONFIDENCE = 0.95


@dataclass(frozen=True)
class IntervalEstimate:
    point: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        return {"point": self.point, "low": self.low, "high": self.high}


def _rliable():
    try:
        from rliable import library, metrics
    except ImportError as e:  # pandas 3 breaks arch's import with a TypeError, absence with ImportError
        raise ImportError(f"rliable statistics need `pip install rliable==1.2.0 'pandas<3'` ({e})") from e
    return library, metrics


def _check(scores: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name}: a score matrix must be 2-D (runs, tasks) and non-empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: score matrix has non-finite entries at {np.argwhere(~np.isfinite(arr)).tolist()}")
    return arr


def aggregate_iqm(scores: np.ndarray) -> float:
    """IQM of a (runs, tasks) matrix (rliable.metrics.aggregate_iqm)."""
    _, metrics = _rliable()
    return float(metrics.aggregate_iqm(_check(scores, "scores")))


def _estimate(
    library, scores: Mapping[str, object], func: Callable, reps: int, seed: int, task_bootstrap: bool = False
) -> dict:
    rng = np.random.RandomState(seed)
    points, intervals = library.get_interval_estimates(
        dict(scores),
        func,
        reps=reps,
        confidence_interval_size=CONFIDENCE,
        random_state=rng,
        task_bootstrap=task_bootstrap,
    )
    return {k: (points[k], intervals[k]) for k in scores}


def interval_estimates(
    score_dict: Mapping[str, np.ndarray], *, reps: int = DEFAULT_REPS, seed: int = 0, task_bootstrap: bool = False
) -> dict[str, IntervalEstimate]:
    """IQM with its 95 % stratified bootstrap interval for each named score matrix.

    ``task_bootstrap``: resample the tasks too (rliable's option). Needed when a policy has one
    run per task (one greedy LLM-team episode): resampling runs alone gives a zero-width interval.
    """
    library, metrics = _rliable()
    checked = {k: _check(v, k) for k, v in score_dict.items()}
    out = {}
    for k, v in checked.items():  # one generator per entry: adding a policy leaves the others' intervals alone
        point, ci = _estimate(
            library, {k: v}, lambda s: np.array([metrics.aggregate_iqm(s)]), reps, seed, task_bootstrap
        )[k]
        out[k] = IntervalEstimate(
            float(np.asarray(point).reshape(-1)[0]),
            float(np.asarray(ci)[0].reshape(-1)[0]),
            float(np.asarray(ci)[1].reshape(-1)[0]),
        )
    return out


def probability_of_improvement(
    x: np.ndarray, y: np.ndarray, *, reps: int = DEFAULT_REPS, seed: int = 0
) -> IntervalEstimate:
    """P(X > Y) with its 95 % interval (rliable.metrics.probability_of_improvement); same tasks, any runs."""
    library, metrics = _rliable()
    x, y = _check(x, "x"), _check(y, "y")
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"probability of improvement needs the same tasks: x has {x.shape[1]}, y {y.shape[1]}")
    point, ci = _estimate(
        library, {"pair": (x, y)}, lambda a, b: np.array([metrics.probability_of_improvement(a, b)]), reps, seed
    )["pair"]
    return IntervalEstimate(
        float(np.asarray(point).reshape(-1)[0]),
        float(np.asarray(ci)[0].reshape(-1)[0]),
        float(np.asarray(ci)[1].reshape(-1)[0]),
    )


def curve_bands(curves: np.ndarray, *, reps: int = DEFAULT_REPS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """IQM across runs at each point of (runs, points) learning curves, and its (2, points) 95 % band."""
    library, metrics = _rliable()
    arr = _check(curves, "curves")
    func = lambda s: np.array([metrics.aggregate_iqm(s[:, j : j + 1]) for j in range(s.shape[1])])  # noqa: E731
    point, ci = _estimate(library, {"curve": arr}, func, reps, seed)["curve"]
    return np.asarray(point, dtype=np.float64), np.asarray(ci, dtype=np.float64)


def score_matrix(
    rows: Sequence[Mapping], *, run: str, task: str, value: str, tasks: Sequence[str] | None = None
) -> tuple[np.ndarray, list[str], list]:
    """A (runs, tasks) matrix from flat rows; a (run, task) cell with several rows is their mean.

    Every run must have every task, or the matrix would compare unlike things.
    """
    task_ids = list(tasks) if tasks is not None else sorted({r[task] for r in rows})
    run_ids = sorted({r[run] for r in rows}, key=str)
    cells: dict[tuple, list[float]] = {}
    for r in rows:
        cells.setdefault((r[run], r[task]), []).append(float(r[value]))
    missing = [(a, t) for a in run_ids for t in task_ids if (a, t) not in cells]
    if missing:
        raise ValueError(
            f"score matrix for {value!r}: runs lack tasks {missing[:5]}{' ...' if len(missing) > 5 else ''}"
        )
    mat = np.array([[np.mean(cells[(a, t)]) for t in task_ids] for a in run_ids], dtype=np.float64)
    return mat, task_ids, run_ids
