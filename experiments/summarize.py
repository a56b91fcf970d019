#!/usr/bin/env python
"""The summary table of a multirun folder: summary.md and summary.csv, one row per configuration.

    python experiments/summarize.py multirun/2026-01-01/12-00-00_ab12     # any train.py -m folder

Every ``train.py -m`` writes them into its sweep folder when the sweep ends
(`MultirunSummaryCallback`, set in conf/config.yaml), on any registered env. Each finished
run (config.yaml + checkpoints/final.pt, found anywhere under the folder: sweep trials
keep theirs in ``<job>/seed_<s>/``) contributes its final held-out greedy evaluation, the
last row of its eval.csv (``train.eval_episodes`` episodes on the env's
``eval_overrides``). Runs are grouped by their config without the seed
(``algos.training.loggers.config_hash``); the ``settings`` column names what tells the
groups apart.

The metric is the one sweeps and the benchmark share: ``sweep.metric``
(``sweep_objective.sweep_metric``; ``auto`` is the report score on the report env, the
return on the matrix games). The statistic is the benchmark's: the interquartile mean
over seeds with its 95 % stratified bootstrap interval (``algos.evaluation``, rliable).
Per-task scores need every checkpoint played on every held-out task:
``python experiments/protocol/benchmark.py benchmark.multirun=<folder>`` does that.
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

SUMMARY_MD, SUMMARY_CSV = "summary.md", "summary.csv"
# Never what tells two configurations apart in the table (config_hash leaves them out too).
_PLUMBING = ("seed", "resume", "checkpoint", "logger", "plugins", "sweep", "rollout", "torch_threads", "device")


def find_runs(sweep: Path) -> list[dict]:
    """Every finished train.py run under `sweep`, grouped by its config without the seed."""
    from omegaconf import OmegaConf

    from algos.training.loggers import config_hash

    runs = []
    for cfg_path in sorted(sweep.rglob("config.yaml")):
        folder = cfg_path.parent
        final = folder / "checkpoints" / "final.pt"
        if folder.name == ".hydra" or not final.is_file():
            continue
        config = OmegaConf.to_container(OmegaConf.load(cfg_path), resolve=True)
        assert isinstance(config, dict), f"{cfg_path}: a run config is a mapping"
        runs.append(
            {
                "folder": str(folder),
                "checkpoint": str(final),
                "seed": int(config["seed"]),
                "algo": config["algo"]["name"],
                "group": config_hash(config),
                "config": config,
            }
        )
    if not runs:
        raise FileNotFoundError(f"{sweep}: no finished train.py run (config.yaml + checkpoints/final.pt) in it")
    labels: dict[str, str] = {}
    for algo in sorted({r["algo"] for r in runs}):
        groups = sorted({r["group"] for r in runs if r["algo"] == algo})
        for g in groups:
            labels[g] = algo if len(groups) == 1 else f"{algo}@{g[:6]}"
    for r in runs:
        r["label"] = labels[r["group"]]
    return runs


def final_evaluation(folder: Path) -> dict[str, float]:
    """The last row of a run's eval.csv (its final held-out greedy evaluation); {} when none."""
    path = folder / "eval.csv"
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out: dict[str, float] = {}
    for key, value in (rows[-1] if rows else {}).items():
        try:
            out[key] = float(value)
        except (TypeError, ValueError):
            continue
    return out


def differing_settings(configs: dict[str, dict]) -> dict[str, str]:
    """Per group, the settings whose values differ between the groups (`algo.lr=0.001 ...`)."""
    from algos.training.loggers import flat_hparams

    flat = {
        g: {k: v for k, v in flat_hparams(c).items() if k.split(".", 1)[0] not in _PLUMBING} for g, c in configs.items()
    }
    keys = sorted({k for f in flat.values() for k in f})
    varying = [k for k in keys if len({repr(f.get(k)) for f in flat.values()}) > 1]
    return {g: " ".join(f"{k}={f.get(k)}" for k in varying) for g, f in flat.items()}


@dataclass
class Summary:
    folder: Path
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def summarize(folder: str | Path, *, reps: int = 2000) -> Summary:
    """Summarise the finished runs under `folder` and write summary.md and summary.csv there."""
    from algos.evaluation import interval_estimates
    from algos.training.loggers import env_label
    from experiments.sweep_objective import sweep_metric

    folder = Path(folder)
    summary = Summary(folder)
    runs = find_runs(folder)
    groups: dict[str, list[dict]] = {}
    for r in runs:
        groups.setdefault(r["group"], []).append(r)
    settings = differing_settings({g: rs[0]["config"] for g, rs in groups.items()})
    for g, members in groups.items():
        config = members[0]["config"]
        values, seeds, metric = [], [], None
        for r in sorted(members, key=lambda r: r["seed"]):
            result = final_evaluation(Path(r["folder"]))
            if not result:
                summary.notes.append(f"{r['folder']}: no eval.csv row (no final evaluation): left out")
                continue
            metric = metric or sweep_metric(str((config.get("sweep") or {}).get("metric") or "auto"), result)
            values.append(result.get(metric, float("nan")))
            seeds.append(r["seed"])
        if not values:
            continue
        row: dict[str, Any] = {
            "group": members[0]["label"],
            "algo": members[0]["algo"],
            "env": env_label(str(config["env"]["name"]), config),
            "settings": settings[g],
            "metric": metric,
            "runs": len(values),
            "seeds": seeds,
            "values": values,
            "mean": sum(values) / len(values),
            "config_hash": g,
        }
        finite = [v for v in values if v == v]
        if finite:
            import numpy as np

            est = interval_estimates({g: np.asarray(finite, dtype=np.float64)[:, None]}, reps=reps)[g]
            row.update(iqm=est.point, low=est.low, high=est.high)
        summary.rows.append(row)
    summary.rows.sort(key=lambda r: (r["env"], -r.get("iqm", float("-inf"))))
    summary.files = [write_csv(summary.rows, folder / SUMMARY_CSV), write_markdown(summary, folder / SUMMARY_MD)]
    return summary


def write_csv(rows: list[dict], path: Path) -> Path:
    fields = ["group", "algo", "env", "settings", "metric", "runs", "iqm", "low", "high", "mean", "seeds", "values"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields + ["config_hash"], extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(
                {
                    **r,
                    "seeds": " ".join(map(str, r["seeds"])),
                    "values": " ".join(f"{v:.6g}" for v in r["values"]),
                }
            )
    return path


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else "-"


def write_markdown(summary: Summary, path: Path) -> Path:
    lines = [
        f"# Multirun summary: {summary.folder}",
        "",
        "Final held-out greedy evaluation of each run (the last row of its eval.csv), grouped by "
        "configuration without the seed. Statistic: interquartile mean (IQM) over seeds with a 95 % "
        "stratified bootstrap interval (rliable), on the metric `sweep.metric` names (auto: the report "
        "score on the report env, the return on the matrix games). Per-task scores: "
        f"`python experiments/protocol/benchmark.py benchmark.multirun={summary.folder}`.",
        "",
        "| group | env | settings | metric | runs | IQM [95 % CI] | mean | per seed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in summary.rows:
        ci = f"{_fmt(r.get('iqm'))} [{_fmt(r.get('low'))}, {_fmt(r.get('high'))}]"
        per_seed = ", ".join(f"{s}: {v:.3f}" for s, v in zip(r["seeds"], r["values"]))
        lines.append(
            f"| {r['group']} | {r['env']} | {r['settings'] or '-'} | {r['metric']} | {r['runs']} | {ci} | "
            f"{_fmt(r['mean'])} | {per_seed} |"
        )
    lines += [""] + [f"- note: {n}" for n in summary.notes]
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path


try:
    from hydra.experimental.callback import Callback
except ImportError:  # pragma: no cover - hydra is a core dependency
    Callback = object  # type: ignore[assignment,misc]


class MultirunSummaryCallback(Callback):
    """Writes summary.md and summary.csv into the sweep folder when a multirun ends."""

    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        folder = Path(config.hydra.sweep.dir)
        try:
            summary = summarize(folder)
        except FileNotFoundError as e:  # every job failed or was stopped: nothing finished to summarise
            print(f"multirun summary: {e}", file=sys.stderr, flush=True)
            return
        except Exception as e:  # the runs are done and kept: a summary that fails must not fail the sweep
            print(
                f"multirun summary failed ({type(e).__name__}: {e}); the runs are kept: "
                f"python experiments/summarize.py {folder}",
                file=sys.stderr,
                flush=True,
            )
            return
        print(f"multirun summary: {summary.files[1]} ({len(summary.rows)} configuration(s))", flush=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print("usage: python experiments/summarize.py <multirun folder>", file=sys.stderr)
        return 2
    try:
        summary = summarize(argv[0])
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(summary.files[1].read_text(encoding="utf-8"), end="")
    print(f"summary: {summary.files[1]}, {summary.files[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
