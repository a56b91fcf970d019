#!/usr/bin/env python
"""Does communication decide the report? The three diagnostics of a panel, on the LLM team and
on the proxy (algos/evaluation/comm_sensitivity.py says what each figure means).

    python experiments/protocol/comm_sensitivity.py PANEL [--out FILE.md] [--reports DIR] [--panel panel_rescored.csv]

PANEL is a folder as ``experiments/protocol/validate_proxy.py validate.out=<folder>`` writes it: its
``panel.csv`` (LLM-team and proxy scores per policy and task) and the LLM team's reports, under
``episodes/<policy>/<task>/report.md`` (or ``--reports DIR`` holding ``<policy>/<task>.md``).

- Message ablation: each ``ablated:<policy>`` row (the panel plays it with
  ``env.engine.deliver_messages=false``: no delivery between agents) paired with ``<policy>`` on
  the same tasks: intact minus ablated.
- Policy identity: over the policies other than the pipeline (``handcrafted``) and the ablated
  ones, the share of within-task variance the policy explains and its permutation p.
- Report overlap: mean sentence Jaccard between two different policies' reports on a task
  (the pipeline and the ablated policies left out, as above).
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

import numpy as np  # noqa: E402

from algos.evaluation.comm_sensitivity import (  # noqa: E402
    paired_difference,
    policy_identity,
    power_words,
    report_overlap,
)

ABLATED = "ablated:"
PIPELINE = "handcrafted"
TEAMS = {"LLM team": "llm_score", "proxy": "proxy_score"}


def read_panel(folder: Path, name: str = "panel.csv") -> list[dict]:
    path = folder / name
    if not path.is_file():
        raise SystemExit(f"{path}: no panel.csv (a validate_proxy.py output folder is expected)")
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def report_sentences(path: Path) -> set[str]:
    """A report's body sentences, normalised (headings and the references list left out)."""
    from rag.sentences import split_sentences

    text = path.read_text(encoding="utf-8")
    body = re.split(r"^#+\s*References\s*$", text, flags=re.MULTILINE)[0]
    lines = [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return {" ".join(s.lower().split()) for s in split_sentences(" ".join(lines)) if s.strip()}


def find_reports(folder: Path, reports: Path | None, policies: list[str], tasks: list[str]) -> dict:
    """policy -> task -> sentence set, for every report found."""
    found: dict[str, dict[str, set[str]]] = {}
    for p in policies:
        slug = p.replace(":", "_")
        for t in tasks:
            # validate_proxy keeps each episode under episodes/<policy>/<task>/<episode folder>/
            candidates = sorted((folder / "episodes" / slug / t).glob("*/report.md"))
            candidates.insert(0, folder / "episodes" / slug / t / "report.md")
            if reports is not None:
                candidates.insert(0, reports / slug / f"{t}.md")
            path = next((c for c in candidates if c.is_file()), None)
            if path is not None:
                found.setdefault(p, {})[t] = report_sentences(path)
    return found


def table(rows: list[dict], policies: list[str], column: str) -> tuple[np.ndarray, list[str]]:
    """(policies, tasks) scores over the tasks every one of `policies` has (one row per cell: the mean)."""
    cells: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r.get(column) not in (None, ""):
            cells.setdefault((r["policy"], r["task"]), []).append(float(r[column]))
    tasks = sorted({t for _, t in cells}, key=lambda t: next(i for i, r in enumerate(rows) if r["task"] == t))
    tasks = [t for t in tasks if all((p, t) in cells for p in policies)]
    return np.array([[np.mean(cells[(p, t)]) for t in tasks] for p in policies]), tasks


def diagnose(rows: list[dict], folder: Path, reports: Path | None = None, reps: int = 5000) -> dict:
    labels = list(dict.fromkeys(r["policy"] for r in rows))
    compared = [p for p in labels if p != PIPELINE and not p.startswith(ABLATED)]
    result: dict = {"policies": compared, "ablation": {}, "identity": {}, "overlap": None}
    for team, column in TEAMS.items():
        for ablated in (p for p in labels if p.startswith(ABLATED)):
            intact = ablated[len(ABLATED) :]
            if intact not in labels:
                continue
            scores, tasks = table(rows, [intact, ablated], column)
            if len(tasks) >= 2:
                result["ablation"].setdefault(team, {})[intact] = {
                    "intact": float(scores[0].mean()),
                    "ablated": float(scores[1].mean()),
                    **paired_difference(scores[0] - scores[1], reps=reps),
                }
        if len(compared) >= 2:
            scores, tasks = table(rows, compared, column)
            if len(tasks) >= 2:
                pi = policy_identity(scores, compared)
                result["identity"][team] = {"share": pi.share, "p": pi.p, "tasks": pi.tasks}
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    found = find_reports(folder, reports, compared, tasks)
    if len(found) >= 2:
        try:
            ov = report_overlap(found)
            result["overlap"] = {"mean": ov.mean, "per_pair": ov.per_pair, "cells": ov.pairs}
        except ValueError:
            pass
    return result


def markdown(result: dict) -> str:
    lines = [f"Communication sensitivity (policies compared: {', '.join(result['policies'])})", ""]
    for team, by_policy in result["ablation"].items():
        for policy, a in by_policy.items():
            lines.append(
                f"- {team}, message ablation of {policy}: intact {a['intact']:.3f}, ablated {a['ablated']:.3f}, "
                f"difference {a['mean']:+.3f} [{a['low']:+.3f}, {a['high']:+.3f}], sign-flip p {a['p']:.4f} "
                f"({a['tasks']} tasks); {power_words(a)}"
            )
    if not result["ablation"]:
        lines.append("- message ablation: no `ablated:<policy>` rows in the panel")
    for team, pi in result["identity"].items():
        lines.append(
            f"- {team}, policy identity: the policy explains {pi['share']:.1%} of the within-task variance, "
            f"permutation p {pi['p']:.4f} ({pi['tasks']} tasks)"
        )
    ov = result["overlap"]
    if ov is None:
        lines.append("- report overlap: fewer than two policies' reports found")
    else:
        lines.append(
            f"- report overlap: mean sentence Jaccard between two policies' reports on a task {ov['mean']:.3f} "
            f"({ov['cells']} pairs)"
        )
        lines += [f"  - {pair}: {value:.3f}" for pair, value in sorted(ov["per_pair"].items())]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("panel", type=Path)
    ap.add_argument("--reports", type=Path, default=None, help="<policy>/<task>.md reports, if not under episodes/")
    ap.add_argument("--out", type=Path, default=None, help="also write the figures as Markdown here")
    ap.add_argument("--reps", type=int, default=5000)
    ap.add_argument(
        "--panel",
        dest="panel_csv",
        default="panel.csv",
        help="the rows' file in PANEL (panel_rescored.csv: rescore_panel.py's)",
    )
    args = ap.parse_args()
    text = markdown(diagnose(read_panel(args.panel, args.panel_csv), args.panel, args.reports, args.reps))
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
