#!/usr/bin/env python
"""Two LLM-team panels of the same cells under two settings (an engine option, a model, a code
change), paired cell by cell: what the setting changes in score and in model work.

    python experiments/protocol/compare_panels.py BASE OTHER [--out DIR] [--reps 5000]

BASE and OTHER are folders as ``experiments/protocol/validate_proxy.py validate.out=<folder>`` writes
them; their ``panel.csv`` rows are paired by (policy, task, seed), and only cells both hold are
compared (the others are named). Prints, and with ``--out`` writes as ``summary.md`` and
``summary.json``:

- per policy and over all paired cells, the two mean scores and the paired difference OTHER
  minus BASE: its mean over tasks (per task, the mean over the policies counted), the 95 %
  percentile bootstrap interval over tasks and the exact sign-flip p;
- per policy and over all cells, prompt tokens evaluated / sent (sent = evaluated + reused, as
  the backend counted them: a chat's ledger charge is its whole prompt, so ``llm_tokens`` does
  not compare across chat and stand-alone panels), and the model-process seconds.

A panel's wall time is in its run's log (several episodes run at once), not in ``panel.csv``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

import numpy as np  # noqa: E402
from experiments.protocol.llm_team_result import read_csv  # noqa: E402

from algos.evaluation.comm_sensitivity import paired_difference, power_words  # noqa: E402

ALL = "all cells"


def cells(folder: Path) -> dict[tuple[str, str, str], dict]:
    """A panel's rows by (policy, task, seed)."""
    path = folder / "panel.csv"
    if not path.is_file():
        raise SystemExit(f"{path}: no panel.csv (a validate_proxy.py output folder is expected)")
    return {(r["policy"], r["task"], r["seed"]): r for r in read_csv(path)}


def _cost(rows: list[dict]) -> dict:
    evaluated = sum(float(r["llm_prompt_tokens_evaluated"] or 0) for r in rows)
    reused = sum(float(r["llm_prompt_tokens_reused"] or 0) for r in rows)
    seconds = sum(float(r["llm_seconds"] or 0) for r in rows)
    sent = evaluated + reused
    return {"evaluated_per_sent": evaluated / sent if sent else float("nan"), "episode_seconds": seconds}


def compare(base: dict, other: dict, reps: int = 5000, seed: int = 0) -> dict:
    """Paired score differences (other - base) and both panels' costs, per policy and overall."""
    shared = [key for key in base if key in other]
    if not shared:
        raise SystemExit("the two panels share no (policy, task, seed) cell")
    unpaired = sorted(set(base) ^ set(other))
    policies = list(dict.fromkeys(p for p, _, _ in shared))
    tasks = list(dict.fromkeys(t for _, t, _ in shared))
    rows = {}
    for policy in [*policies, ALL]:
        keys = [k for k in shared if policy in (ALL, k[0])]
        by_task: dict[str, list[float]] = {}
        for k in keys:
            by_task.setdefault(k[1], []).append(float(other[k]["llm_score"]) - float(base[k]["llm_score"]))
        diff = np.array([np.mean(v) for v in by_task.values()])
        entry = {
            "cells": len(keys),
            "base_score": float(np.mean([float(base[k]["llm_score"]) for k in keys])),
            "other_score": float(np.mean([float(other[k]["llm_score"]) for k in keys])),
            "difference": paired_difference(diff, reps, seed) if len(diff) > 1 else {"mean": float(diff.mean())},
            "base_cost": _cost([base[k] for k in keys]),
            "other_cost": _cost([other[k] for k in keys]),
        }
        rows[policy] = entry
    return {"tasks": tasks, "unpaired": [list(k) for k in unpaired], "policies": rows}


def markdown(result: dict, base_name: str, other_name: str) -> str:
    lines = [
        f"Paired by cell over {len(result['tasks'])} tasks: {other_name} minus {base_name} "
        "(95 % bootstrap over tasks, exact sign-flip p).",
        "",
        f"| policy | cells | {base_name} | {other_name} | paired difference | p | min. detectable (80 %) "
        f"| evaluated/sent ({base_name} / {other_name}) | model-process s ({base_name} / {other_name}) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for policy, r in result["policies"].items():
        d = r["difference"]
        interval = f" [{d['low']:+.3f}, {d['high']:+.3f}]" if "low" in d else ""
        p = f"{d['p']:.3f}" if "p" in d else "n/a"
        mdd = f"{d['mdd']:.3f}" if "mdd" in d else "n/a"
        bc, oc = r["base_cost"], r["other_cost"]
        lines.append(
            f"| {policy} | {r['cells']} | {r['base_score']:.3f} | {r['other_score']:.3f} | {d['mean']:+.3f}{interval} "
            f"| {p} | {mdd} | {bc['evaluated_per_sent']:.2f} / {oc['evaluated_per_sent']:.2f} "
            f"| {bc['episode_seconds']:,.0f} / {oc['episode_seconds']:,.0f} |"
        )
    overall = result["policies"][ALL]["difference"]
    if "mdd" in overall:
        lines += ["", f"Overall: {power_words(overall)}."]
    if result["unpaired"]:
        lines += ["", "Cells in one panel only: " + "; ".join(" / ".join(k) for k in result["unpaired"])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", type=Path, help="the reference panel's folder")
    ap.add_argument("other", type=Path, help="the panel under the setting compared")
    ap.add_argument("--out", type=Path, help="write summary.md and summary.json here")
    ap.add_argument("--reps", type=int, default=5000, help="bootstrap resamples of the tasks")
    args = ap.parse_args(argv)
    result = compare(cells(args.base), cells(args.other), reps=args.reps)
    text = markdown(result, args.base.name, args.other.name)
    print(text, end="")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.md").write_text(text)
        (args.out / "summary.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
