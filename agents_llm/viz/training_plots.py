"""Training plots (PNG) from a run's CSV logs: train.csv and, when present, eval.csv.

Column names follow experiments/train.py (`CSVLogger` in algos.training.loggers): one
row per logging window, `episode` first, then `return`, `report_score`, `tokens`,
`epsilon`, `loss`, ... and `act/<agent>/<action>` frequencies. Missing columns are
tolerated: their panel says so and the returned notes name them.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never needs a display
import matplotlib.pyplot as plt  # noqa: E402

from .metrics_columns import action_columns, action_labels  # noqa: E402

TRAIN_CSV, EVAL_CSV = "train.csv", "eval.csv"
X_COLUMNS = ("episode", "t_env")  # the first one present is the x axis
CURVES = (
    ("return", "Return"),
    ("report_score", "Report score"),
    ("tokens", "Tokens per episode"),
    ("epsilon", "Epsilon (exploration)"),
    ("loss", "TD loss"),
    ("length", "Rounds per episode"),
)


@dataclass
class TrainingPlots:
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # missing columns and files, said plainly


def read_metrics_csv(path: Path) -> dict[str, list[float]]:
    """Columns of floats (NaN where a row has no value: the column appeared later)."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if not reader.fieldnames:
                raise ValueError(f"{path}: empty CSV (no header row)")
            columns: dict[str, list[float]] = {name: [] for name in reader.fieldnames}
            for line, row in enumerate(reader, start=2):
                for name in reader.fieldnames:
                    raw = row.get(name)
                    try:
                        columns[name].append(float(raw) if raw not in (None, "") else math.nan)
                    except ValueError:
                        raise ValueError(f"{path}: line {line}, column {name!r}: not a number: {raw!r}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 CSV file") from None
    return columns


def _x_axis(columns: dict[str, list[float]]) -> tuple[str, list[float]]:
    for name in X_COLUMNS:
        if name in columns:
            return name, columns[name]
    n = len(next(iter(columns.values()), []))
    return "row", [float(i) for i in range(n)]


def finite_count(values) -> int:
    return sum(1 for v in values if not math.isnan(v))


def empty_reason(column: str) -> str:
    """What an all-NaN column means, said on its panel."""
    if column in ("loss", "grad_norm", "td_error_abs"):
        return "no updates yet\n(learning starts after algo.learning_starts episodes)"
    return "no values logged yet"


def panel_text(ax, text: str, color: str = "#b00020") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color=color)
    ax.set_xticks([])
    ax.set_yticks([])


def curves_figure(train: dict, evals: dict | None, source: str, notes: list[str]):
    """The 2x3 panel figure of a run's curves. A panel never draws empty: a missing column or one
    without a value says so in the panel, and a series of a few points is drawn with markers (a line
    through a single point is invisible)."""
    fig, axes = plt.subplots(2, 3, figsize=(15, 8), constrained_layout=True)
    x_name, x = _x_axis(train)
    for ax, (column, title) in zip(axes.flat, CURVES):
        ax.set_title(title)
        ax.set_xlabel(x_name)
        series = [("train (window mean)", x, train.get(column), "-", "#264653")]
        if evals:
            series.append(("greedy eval", _x_axis(evals)[1], evals.get(column), "--", "#e76f51"))
        present = [s for s in series if s[2] is not None]
        drawn = [s for s in present if finite_count(s[2])]
        for label, xs, ys, style, color in drawn:
            few = finite_count(ys) <= 3 or style == "--"
            ax.plot(xs, ys, style, marker="o" if few else None, label=label, color=color)
        if not present:
            notes.append(f"column {column!r} is not in {source}: its plot is empty")
            panel_text(ax, f"not logged\n({column!r} missing from {source})")
        elif not drawn:
            notes.append(f"column {column!r} of {source} has no value yet: {empty_reason(column).splitlines()[0]}")
            panel_text(ax, empty_reason(column), color="#6c757d")
        else:
            ax.legend(fontsize=8)
            ax.grid(alpha=0.3)
    fig.suptitle(f"Training curves ({source})")
    return fig


def _plot_curves(train: dict, evals: dict | None, source: str, out: Path, notes: list[str]) -> Path:
    fig = curves_figure(train, evals, source, notes)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def _plot_actions(columns: dict, source: str, out: Path) -> Path:
    per_agent = action_columns(columns)
    agents = list(per_agent)
    n_actions = max(max(cols) for cols in per_agent.values()) + 1
    labels = action_labels(agents, n_actions)
    x_name, x = _x_axis(columns)
    cmap = plt.get_cmap("tab10" if n_actions <= 10 else "tab20")
    fig, axes = plt.subplots(
        len(agents), 1, figsize=(12, 2.6 * len(agents)), sharex=True, squeeze=False, constrained_layout=True
    )
    for ax, agent in zip(axes[:, 0], agents):
        series = [
            [0.0 if math.isnan(v) else v for v in columns[per_agent[agent][a]]]
            if a in per_agent[agent]
            else [0.0] * len(x)
            for a in range(n_actions)
        ]
        ax.stackplot(x, series, labels=labels, colors=[cmap(a % cmap.N) for a in range(n_actions)])
        ax.set_ylim(0, 1)
        ax.set_ylabel(agent, rotation=0, ha="right")
    axes[0, 0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    axes[-1, 0].set_xlabel(x_name)
    fig.suptitle(f"Per-agent action distribution over training ({source}; share of rounds)")
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def write_training_plots(run: str | Path, out_dir: str | Path | None = None) -> TrainingPlots:
    """Plots for a run dir (or a train.csv path); PNGs go to `out_dir` (default <run dir>/plots)."""
    run = Path(run)
    train_path = run if run.suffix == ".csv" else run / TRAIN_CSV
    eval_path = train_path.with_name(EVAL_CSV)
    if not train_path.is_file():
        raise FileNotFoundError(
            f"{train_path}: no training log here (expected {TRAIN_CSV} as written by experiments/train.py)"
        )
    result = TrainingPlots()
    train = read_metrics_csv(train_path)
    if not any(train.values()) or not len(next(iter(train.values()))):
        raise ValueError(f"{train_path}: the log has a header but no rows yet (nothing to plot)")
    evals = None
    if eval_path.is_file() and eval_path != train_path:
        evals = read_metrics_csv(eval_path)
    else:
        result.notes.append(f"{eval_path.name} not found next to {train_path.name}: no greedy-eval points")
    out = Path(out_dir) if out_dir else train_path.parent / "plots"
    out.mkdir(parents=True, exist_ok=True)
    result.files.append(_plot_curves(train, evals, train_path.name, out / "training_curves.png", result.notes))
    if action_columns(train):
        result.files.append(_plot_actions(train, train_path.name, out / "action_distribution.png"))
    elif evals and action_columns(evals):
        result.notes.append(f"no act/<agent>/<action> columns in {train_path.name}: action plot from {EVAL_CSV}")
        result.files.append(_plot_actions(evals, EVAL_CSV, out / "action_distribution.png"))
    else:
        result.notes.append(f"no act/<agent>/<action> columns in {train_path.name}: no action distribution plot")
    return result
