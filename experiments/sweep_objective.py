"""What one sweep trial returns, and the sweep's results table.

A trial (one Hydra job of ``train.py -m hydra/sweeper=<algo>``) trains every seed in
``sweep.seeds``, each in ``<job dir>/seed_<s>/``, and returns :func:`trial_objective`
over one held-out greedy metric of each seed (the final evaluation on the env's
``eval_overrides``, e.g. the holdout split). ``sweep.metric`` picks the metric:

* ``auto`` (default): what the benchmark ranks by, ``report_score`` on an env that reports
  one (the report env), else ``return`` (the matrix games). A sweep that optimised the
  return on the report env ranked policies opposite to the benchmark's score table;
* any other name of the final evaluation's metrics (``return``, ``tokens``, ...).

``sweep.objective`` picks the statistic over seeds:

* ``iqm`` (default): the interquartile mean over seeds (25 % trimmed each side; rliable's
  IQM on one score per run), the benchmark protocol's statistic;
* ``mean``: the mean over seeds.

Each job also writes ``trial.json`` (objective, per-seed returns, its overrides), and
:class:`SweepResultsCallback` (set by the presets in ``conf/hydra/sweeper/``) gathers
them into ``<sweep dir>/trials.csv`` when the sweep ends.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

OBJECTIVES = ("mean", "iqm")


def trial_objective(returns: Sequence[float], kind: str = "mean") -> float:
    """One number per trial from the seeds' held-out greedy returns (NaN seeds are dropped;
    all NaN gives NaN, which Optuna records as a failed trial)."""
    if kind not in OBJECTIVES:
        raise ValueError(f"sweep.objective must be one of {', '.join(OBJECTIVES)}, got {kind!r}")
    values = np.asarray([r for r in returns if r is not None and not math.isnan(r)], dtype=np.float64)
    if values.size == 0:
        return float("nan")
    if kind == "iqm":
        from scipy.stats import trim_mean

        return float(trim_mean(values, 0.25))
    return float(values.mean())


def sweep_metric(name: str, result: dict) -> str:
    """The metric a trial is judged by: ``auto`` is the benchmark's (the report score where the
    env reports one, else the return); another name must be among the evaluation's metrics."""
    if name == "auto":
        return "report_score" if "report_score" in result else "return"
    if name not in result:
        raise ValueError(f"sweep.metric={name!r} is not among the final evaluation's metrics: {sorted(result)}")
    return name


def train_seeds(cfg: Any, train_fn: Callable[..., dict], job_dir: Path, overrides: Sequence[str] = ()) -> float:
    """Train ``cfg`` once per seed of ``cfg.sweep.seeds`` and return the trial's objective."""
    from omegaconf import OmegaConf

    wanted = cfg.sweep.algo
    if wanted and wanted != cfg.algo.name:
        raise ValueError(
            f"the sweep preset's search space is for algo={wanted}, but the run trains "
            f"algo={cfg.algo.name}: add algo={wanted} or pick the preset hydra/sweeper={cfg.algo.name}"
        )
    trial_objective([], cfg.sweep.objective)  # a wrong objective name fails before any training
    values, metric = [], None
    for seed in cfg.sweep.seeds:
        seed_cfg = OmegaConf.create(OmegaConf.to_container(cfg, resolve=True))
        seed_cfg.seed = int(seed)
        result = train_fn(seed_cfg, run_dir=job_dir / f"seed_{seed}")
        metric = metric or sweep_metric(cfg.sweep.metric, result)
        values.append(float(result.get(metric, float("nan"))))
    value = trial_objective(values, cfg.sweep.objective)
    record = {
        "objective": value,
        "statistic": cfg.sweep.objective,
        "metric": metric,
        "seeds": list(cfg.sweep.seeds),
        "values": values,
        "overrides": list(overrides),
    }
    tmp = job_dir / "trial.json.tmp"
    tmp.write_text(json.dumps(record, indent=2))
    tmp.replace(job_dir / "trial.json")
    return value


def write_trials_table(sweep_dir: Path) -> Path | None:
    """``trials.csv`` from every job's ``trial.json`` under ``sweep_dir`` (job order)."""
    rows = []
    for path in sweep_dir.glob("*/trial.json"):
        record = json.loads(path.read_text())
        job = path.parent.name.split("_", 1)[0]
        rows.append((int(job) if job.isdigit() else 1 << 30, path.parent.name, record))
    if not rows:
        return None
    rows.sort(key=lambda r: (r[0], r[1]))
    out = sweep_dir / "trials.csv"
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["job", "objective", "statistic", "metric", "seeds", "values", "overrides"])
        for _, name, rec in rows:
            writer.writerow(
                [
                    name,
                    rec["objective"],
                    rec["statistic"],
                    rec.get("metric", "return"),
                    " ".join(map(str, rec["seeds"])),
                    " ".join(f"{r:.6g}" for r in rec.get("values", rec.get("returns", []))),
                    " ".join(rec["overrides"]),
                ]
            )
    objectives = [rec["objective"] for _, _, rec in rows]
    if len(objectives) > 1 and np.ptp(np.asarray(objectives, dtype=np.float64)) <= 1e-9:
        print(
            f"sweep: all {len(objectives)} trials scored {objectives[0]:.6g} on "
            f"{rows[0][2].get('metric', 'return')}: the objective cannot tell them apart, so the 'best' trial "
            "is arbitrary (a harder env, more train.episodes, or another sweep.metric)",
            file=sys.stderr,
            flush=True,
        )
    return out


try:
    from hydra.experimental.callback import Callback
except ImportError:  # pragma: no cover - hydra is a core dependency
    Callback = object


class SweepResultsCallback(Callback):
    """Creates the sweep dir before the sweeper opens its study there (sqlite storage) and
    writes ``trials.csv`` beside ``optimization_results.yaml`` when the sweep ends."""

    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        Path(config.hydra.sweep.dir).mkdir(parents=True, exist_ok=True)

    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        write_trials_table(Path(config.hydra.sweep.dir))
