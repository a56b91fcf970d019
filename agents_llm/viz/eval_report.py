"""An evaluation report (Markdown + PNG charts) across policies, from evaluate.py's metrics JSON.

Each input is what experiments/evaluate.py writes: `{"algo", "env", "source",
"episodes", "metrics": {return, return_std, length, report_score, length_score,
tokens, act/<agent>/<action>, act/<agent>/top, ...}, "per_episode": [...]}`. The
split is read from a `split` field when there is one, else from the file's path
(`train` or `holdout` in the file name or its two nearest folders), else taken as holdout, evaluate.py's
default; the report says which it assumed.
"""

from __future__ import annotations

import json
import math
from typing import Any
import re
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .metrics_columns import action_columns, action_labels  # noqa: E402

COLLAPSED_TOP_SHARE = 0.95  # an agent doing one action this often looks collapsed
_SPLIT_IN_PATH = re.compile(r"(?:^|[^a-z])(train|holdout)(?:[^a-z]|$)")


@dataclass
class PolicyEval:
    policy: str
    split: str
    metrics: dict
    per_episode: list
    path: Path


@dataclass
class EvalReport:
    report: Path | None = None
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    front: list[str] = field(default_factory=list)  # "policy (split)" on the score/tokens Pareto front


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of points no other point beats: lower or equal cost and higher or equal value, one strictly."""
    front = []
    for i, (cost, value) in enumerate(points):
        dominated = any(
            c <= cost and v >= value and (c < cost or v > value) for j, (c, v) in enumerate(points) if j != i
        )
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def _find_inputs(inputs: list[str]) -> list[Path]:
    files: list[Path] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            found = sorted(path.rglob("metrics.json")) or sorted(p for p in path.rglob("*.json"))
            if not found:
                raise FileNotFoundError(f"{path}: no metrics JSON (evaluate.py output) in this folder")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return files


def load_policy_evals(path: Path, notes: list[str]) -> list[PolicyEval]:
    """The evaluations in one file: an evaluate.py metrics JSON (one policy), or the
    comparison.json of ``eval.compare`` (one per row, on the split it names)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    rows = data.get("rows") if isinstance(data, dict) else None
    if (
        isinstance(rows, list)
        and rows
        and all(isinstance(r, dict) and isinstance(r.get("metrics"), dict) for r in rows)
    ):
        shared = {k: v for k, v in data.items() if k != "rows"}
        return [
            ev
            for r in rows
            if (ev := _policy_eval(path, {**shared, **r, "algo": r.get("policy") or r.get("algo")}, notes)) is not None
        ]
    ev = _policy_eval(path, data, notes)
    return [ev] if ev is not None else []


def load_policy_eval(path: Path, notes: list[str]) -> PolicyEval | None:
    evals = load_policy_evals(path, notes)
    return evals[0] if evals else None


def _policy_eval(path: Path, data: Any, notes: list[str]) -> PolicyEval | None:
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        notes.append(f"{path}: skipped, not an evaluate.py metrics file (no 'metrics' object)")
        return None
    split = data.get("split")
    if not split:
        # the nearest path components only: folders far up (a user's "tests/" dir) say nothing about the split
        hits = [
            m
            for part in (path.stem, path.parent.name, path.parent.parent.name)
            if (m := _SPLIT_IN_PATH.search(part.lower()))
        ]
        m = hits[0] if hits else None
        split = m.group(1) if m else "holdout"
        notes.append(
            f"{path}: no 'split' field; taken as {split} "
            + ("(from its path)" if m else "(evaluate.py evaluates on the holdout settings)")
        )
    policy = str(data.get("algo") or data.get("policy") or path.parent.name)
    metrics = dict(data["metrics"])
    if data.get("episodes") is not None:
        metrics.setdefault("episodes", data["episodes"])
    return PolicyEval(policy, str(split), metrics, data.get("per_episode") or [], path)


def _disambiguate(evals: list[PolicyEval]) -> None:
    """Two evaluations of the same policy on the same split (two checkpoints): name them by folder."""
    seen: dict[tuple, int] = {}
    for ev in evals:
        seen[(ev.policy, ev.split)] = seen.get((ev.policy, ev.split), 0) + 1
    for ev in evals:
        if seen[(ev.policy, ev.split)] > 1:
            ev.policy = f"{ev.policy} [{ev.path.parent.name}/{ev.path.stem}]"


def _axis_metric(evals: list[PolicyEval], wanted: str, fallback: str, notes: list[str]) -> str:
    if any(wanted in ev.metrics for ev in evals):
        return wanted
    notes.append(f"no policy logged {wanted!r}: the chart uses {fallback!r} instead")
    return fallback


def _score_vs_tokens(evals: list[PolicyEval], out: Path, result: EvalReport) -> Path:
    x_key = _axis_metric(evals, "tokens", "length", result.notes)
    y_key = _axis_metric(evals, "report_score", "return", result.notes)
    shown = [ev for ev in evals if x_key in ev.metrics and y_key in ev.metrics]
    for ev in evals:
        if ev not in shown:
            result.notes.append(f"{ev.policy} ({ev.split}): no {x_key!r}/{y_key!r}; left out of the Pareto chart")
    fig, ax = plt.subplots(figsize=(9, 6), constrained_layout=True)
    cmap = plt.get_cmap("tab10")
    points = [(float(ev.metrics[x_key]), float(ev.metrics[y_key])) for ev in shown]
    for i, (ev, (x, y)) in enumerate(zip(shown, points)):
        color = cmap(i % 10)
        episodes = [(e[x_key], e[y_key]) for e in ev.per_episode if x_key in e and y_key in e]
        if episodes:
            xs, ys = zip(*episodes)
            ax.scatter(xs, ys, color=color, alpha=0.25, s=14)
        ax.scatter(
            [x],
            [y],
            color=color,
            s=70,
            marker="o" if ev.split != "train" else "s",
            label=f"{ev.policy} ({ev.split})",
            edgecolor="black",
            zorder=3,
        )
    # The front compares policies on held-out topics; train points are drawn for reference only.
    candidates = [i for i, ev in enumerate(shown) if ev.split == "holdout"] or list(range(len(shown)))
    front = [candidates[k] for k in pareto_front([points[i] for i in candidates])]
    if front:
        fx, fy = zip(*(points[i] for i in front))
        ax.step(fx, fy, where="post", color="#d62828", linestyle="--", label="Pareto front", zorder=2)
        ax.scatter(fx, fy, s=260, facecolors="none", edgecolors="#d62828", linewidths=2, zorder=4)
    result.front = [f"{shown[i].policy} ({shown[i].split})" for i in front]
    ax.set_xlabel(f"{x_key} (mean per episode; lower is cheaper)")
    ax.set_ylabel(f"{y_key} (mean; higher is better)")
    ax.set_title(
        f"{y_key} against {x_key}, Pareto front circled" + (" (holdout)" if len(candidates) < len(shown) else "")
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def _action_mix(evals: list[PolicyEval], out: Path, result: EvalReport) -> Path | None:
    with_actions = [ev for ev in evals if action_columns(ev.metrics)]
    for ev in evals:
        if ev not in with_actions:
            result.notes.append(f"{ev.policy} ({ev.split}): no act/<agent>/<action> metrics; no action mix")
    if not with_actions:
        return None
    fig, axes = plt.subplots(
        len(with_actions),
        1,
        figsize=(
            11,
            1.2 + 0.45 * sum(len(action_columns(ev.metrics)) for ev in with_actions) + 0.6 * len(with_actions),
        ),
        squeeze=False,
        constrained_layout=True,
    )
    for ax, ev in zip(axes[:, 0], with_actions):
        per_agent = action_columns(ev.metrics)
        agents = list(per_agent)
        n_actions = max(max(c) for c in per_agent.values()) + 1
        labels = action_labels(agents, n_actions)
        cmap = plt.get_cmap("tab10" if n_actions <= 10 else "tab20")
        left = [0.0] * len(agents)
        for a in range(n_actions):
            widths = [float(ev.metrics[per_agent[ag][a]]) if a in per_agent[ag] else 0.0 for ag in agents]
            ax.barh(agents, widths, left=left, color=cmap(a % cmap.N), label=labels[a])
            left = [lo + w for lo, w in zip(left, widths)]
        ax.set_xlim(0, 1)
        ax.set_title(f"{ev.policy} ({ev.split})", fontsize=10)
        ax.invert_yaxis()
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    axes[-1, 0].set_xlabel("share of rounds")
    fig.suptitle("Per-policy action mix (per agent)")
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def _holdout_vs_train(evals: list[PolicyEval], out: Path, result: EvalReport) -> Path | None:
    key = _axis_metric(evals, "report_score", "return", [])
    pairs: dict[str, dict[str, float]] = {}  # policy -> split -> score
    for ev in evals:
        if key in ev.metrics:
            pairs.setdefault(ev.policy, {})[ev.split] = float(ev.metrics[key])
    both = {p: s for p, s in pairs.items() if "train" in s and "holdout" in s}
    if not both:
        result.notes.append(
            "no policy was evaluated on both the train and the holdout split: no holdout-against-train chart"
        )
        return None
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(both) + 2), 5), constrained_layout=True)
    names = list(both)
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], [both[n]["train"] for n in names], width=0.4, label="train", color="#8ecae6")
    ax.bar([x + 0.2 for x in xs], [both[n]["holdout"] for n in names], width=0.4, label="holdout", color="#fb8500")
    ax.set_xticks(list(xs), names, rotation=20, ha="right")
    ax.set_ylabel(key)
    ax.set_title(f"{key}: holdout against train")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def _cell(value) -> str:
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.3f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _collapsed(ev: PolicyEval) -> str:
    tops = {k.split("/")[-2]: v for k, v in ev.metrics.items() if re.match(r"^act/.+/top$", k)}
    return ", ".join(a for a, share in tops.items() if share >= COLLAPSED_TOP_SHARE) or "none"


def write_eval_report(inputs: list[str], out_dir: str | Path | None = None) -> EvalReport:
    """`inputs`: metrics JSON files and/or folders holding them. Writes eval_report.md and its PNGs."""
    result = EvalReport()
    files = _find_inputs(inputs)
    evals = [ev for p in files for ev in load_policy_evals(p, result.notes)]
    if not evals:
        raise ValueError(f"no evaluate.py metrics among {', '.join(map(str, files))}")
    _disambiguate(evals)
    out = Path(out_dir) if out_dir else (Path(inputs[0]) if Path(inputs[0]).is_dir() else Path(inputs[0]).parent)
    out.mkdir(parents=True, exist_ok=True)
    charts = [
        ("Report score against tokens", _score_vs_tokens(evals, out / "score_vs_tokens.png", result)),
        ("Action mix per policy", _action_mix(evals, out / "action_mix.png", result)),
        ("Holdout against train", _holdout_vs_train(evals, out / "holdout_vs_train.png", result)),
    ]
    result.files = [path for _, path in charts if path is not None]
    front = set(result.front)
    columns = ("policy", "split", "report_score", "return", "return_std", "tokens", "length", "episodes")
    lines = [
        "# Evaluation report",
        "",
        f"{len(evals)} evaluation(s) of {len({e.policy for e in evals})} "
        f"policy(ies). Pareto front (report score against tokens): "
        f"{', '.join(result.front) or 'none'}.",
        "",
        "| " + " | ".join(columns) + f" | Pareto | collapsed agents (top action >= {COLLAPSED_TOP_SHARE:.0%}) |",
        "|" + "---|" * (len(columns) + 2),
    ]
    for ev in evals:
        values = [ev.policy, ev.split] + [ev.metrics.get(c, math.nan) for c in columns[2:7]]
        values.append(ev.metrics.get("episodes") or len(ev.per_episode) or math.nan)
        lines.append(
            "| "
            + " | ".join(_cell(v) for v in values)
            + " | "
            + ("yes" if f"{ev.policy} ({ev.split})" in front else "")
            + f" | {_cell(_collapsed(ev))} |"
        )
    for title, path in charts:
        if path is not None:
            lines += ["", f"## {title}", "", f"![{title}]({path.name})"]
    lines += ["", "## Inputs", ""] + [f"- `{ev.path}`: {ev.policy} ({ev.split})" for ev in evals]
    if result.notes:
        lines += ["", "## Notes", ""] + [f"- {_cell(n)}" for n in result.notes]
    result.report = out / "eval_report.md"
    result.report.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return result
