"""Training curves over the seeds of a multirun: per configuration, the mean over seeds and
its 95 % bootstrap confidence band, one panel per logged metric.

The caller groups the runs (experiments/visualize.py uses summarize.find_runs: one group per
configuration without the seed) and passes ``{label: [run folders]}``. Each run's train.csv
(and eval.csv, the greedy evaluations) is read; the seeds of a group are aligned on their
first ``n`` logged rows (the seeds of one configuration log at the same episodes). The band
is a percentile bootstrap of the mean over seeds, resampling seeds with replacement at each
point (`bootstrap_band`); one seed has no band, and the legend says so. A metric no group
has a value of gets no panel (a note names it), so no panel draws empty.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from .training_plots import CURVES, EVAL_CSV, TRAIN_CSV, TrainingPlots, _x_axis, plt, read_metrics_csv

EVAL_CURVES = (("return", "Greedy eval return"), ("report_score", "Greedy eval report score"))
BAND_REPS = 2000
CONFIDENCE = 0.95


def bootstrap_band(curves: np.ndarray, reps: int = BAND_REPS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(2, points) percentile bootstrap interval of the mean over seeds of (seeds, points) curves
    (NaN entries ignored); rows are resampled with replacement."""
    arr = np.asarray(curves, dtype=np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.shape[0], size=(reps, arr.shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN resample at a point: NaN there
        means = np.nanmean(arr[idx], axis=1)
        alpha = (1 - CONFIDENCE) / 2
        low, high = np.nanpercentile(means, [100 * alpha, 100 * (1 - alpha)], axis=0)
    return low, high


def _seed_matrix(logs: list[dict], column: str) -> tuple[list[float], np.ndarray] | None:
    """The group's x axis and (seeds, points) values of `column` over the rows every seed logged."""
    have = [log for log in logs if column in log]
    if not have:
        return None
    n = min(len(next(iter(log.values()))) for log in have)
    if n == 0:
        return None
    x = _x_axis(have[0])[1][:n]
    return x, np.array([log[column][:n] for log in have], dtype=np.float64)


def _draw(ax, label: str, color, x: list[float], values: np.ndarray) -> bool:
    """Mean over seeds and its band; False when there is no finite value to draw."""
    finite = np.isfinite(values)
    if not finite.any():
        return False
    keep = finite.any(axis=0)
    xs = np.asarray(x)[keep]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(values[:, keep], axis=0)
    seeds = values.shape[0]
    few = len(xs) <= 3
    ax.plot(xs, mean, marker="o" if few else None, color=color, label=f"{label} (mean of {seeds} seed(s))")
    if seeds > 1:
        low, high = bootstrap_band(values[:, keep])
        ax.fill_between(xs, low, high, color=color, alpha=0.25, label=f"{label} {CONFIDENCE:.0%} CI")
    return True


def write_multirun_plots(groups: dict[str, list[Path]], out_dir: str | Path) -> TrainingPlots:
    """training_curves_seeds.png in `out_dir`: a panel per metric, a line and band per group."""
    result = TrainingPlots()
    train_logs: dict[str, list[dict]] = {}
    eval_logs: dict[str, list[dict]] = {}
    for label, folders in groups.items():
        for folder in folders:
            path = Path(folder) / TRAIN_CSV
            if not path.is_file():
                result.notes.append(f"{folder}: no {TRAIN_CSV}: left out of {label}")
                continue
            train_logs.setdefault(label, []).append(read_metrics_csv(path))
            if (Path(folder) / EVAL_CSV).is_file():
                eval_logs.setdefault(label, []).append(read_metrics_csv(Path(folder) / EVAL_CSV))
    if not train_logs:
        raise FileNotFoundError(f"no {TRAIN_CSV} in any run of {sorted(groups)}")
    panels = [(train_logs, c, t) for c, t in CURVES] + [(eval_logs, c, t) for c, t in EVAL_CURVES]
    cmap = plt.get_cmap("tab10")
    colors = {label: cmap(i % cmap.N) for i, label in enumerate(groups)}
    drawable: list[tuple[str, dict[str, tuple[list[float], np.ndarray]]]] = []
    for logs, column, title in panels:
        found = {label: _seed_matrix(ls, column) for label, ls in logs.items()}
        series = {k: v for k, v in found.items() if v is not None and np.isfinite(v[1]).any()}
        if series:
            drawable.append((title, series))
        else:
            result.notes.append(f"{title}: no run logged a value of {column!r}: no panel")
    if not drawable:
        raise ValueError(f"no run of {sorted(groups)} logged a value to plot yet")
    ncols = min(3, len(drawable))
    nrows = math.ceil(len(drawable) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 4 * nrows), squeeze=False, constrained_layout=True)
    for ax, (title, series) in zip(axes.flat, drawable):
        for label, (x, values) in series.items():
            _draw(ax, label, colors[label], x, values)
        ax.set_title(title)
        ax.set_xlabel("episode")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(drawable) :]:
        ax.remove()  # the grid's spare cells: no empty axes
    sizes = ", ".join(f"{label}: {len(train_logs.get(label, []))} seed(s)" for label in groups)
    fig.suptitle(f"Training curves over seeds (mean, {CONFIDENCE:.0%} bootstrap band; {sizes})")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "training_curves_seeds.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    result.files.append(path)
    return result
