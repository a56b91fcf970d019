#!/usr/bin/env python
"""The result where it counts: learned communication policies against the handcrafted pipeline
on the LLM team, with paired episodes.

    python experiments/protocol/llm_team_result.py docs/benchmark/llm_team

Reads, from the folder:

- ``panel.csv``: one greedy LLM-team episode per policy, held-out task and episode seed, as
  ``experiments/protocol/validate_proxy.py validate.out=<folder>`` writes it (every policy on the same
  tasks with the same seed, at the same round budget: the episodes are paired).
- ``runs/<label>/train.csv`` (optional): the training log of each learned policy, copied from
  its run folder, for the learning curves.

A learned policy's label is ``<policy>_s<train seed>`` (``qmix_llm_s0``, ``qmix_llm_s1``: two
training seeds of one learner); ``--rename label=new_label`` gives a stored label that form
(``--rename learned=qmix_proxy_s1``). A label that plays a checkpoint without that form is one
learned run with no seed; the fixed policies (their ``policy_id`` is an algorithm config) have
none.

Writes into the folder:

- ``episodes.csv``: one row per episode: ``policy, train_seed, task, seed, score, tokens``
  (fixed policies: empty train_seed), plus ``policy_id`` and the ``commit`` that played it.
- ``summary.json`` and ``summary.md``: per policy the IQM with its 95 % bootstrap interval
  (rliable, runs and tasks resampled: one episode per run and task), the mean, tokens per
  episode and their ratio to the pipeline's, and the paired difference to the handcrafted
  pipeline (per task: the mean over training seeds minus the pipeline's score; 95 % bootstrap
  interval over tasks, exact sign-flip p), and whether the policy meets the bar: a paired
  difference whose interval lies above 0, or one within ``--margin`` of the pipeline's score at
  no more than ``--token-ratio`` of its tokens.
- ``pareto.png`` (IQM against tokens) and ``curves.png`` (training curves, IQM over seeds).

Only tasks that every policy (every training seed) finished are counted; the others are named.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

import numpy as np  # noqa: E402

from algos.evaluation.comm_sensitivity import paired_difference, power_words  # noqa: E402

EPISODE_FIELDS = ["policy", "train_seed", "task", "seed", "score", "tokens", "policy_id", "commit"]
REFERENCE = "handcrafted"
SEEDED = re.compile(r"^(?P<policy>.+)_s(?P<seed>\d+)$")


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def episodes(panel: list[dict], rename: dict[str, str]) -> list[dict]:
    """panel.csv rows as (policy, train_seed) episodes; a learned label's seed comes from its name."""
    out = []
    for r in panel:
        label = rename.get(r["policy"], r["policy"])
        learned = not r["policy_id"].lstrip().startswith("{")  # fixed policies are stored as their config
        m = SEEDED.match(label) if learned else None
        out.append(
            {
                "policy": m["policy"] if m else label,
                "train_seed": int(m["seed"]) if m else "",
                "task": r["task"],
                "seed": int(r["seed"]),
                "score": float(r["llm_score"]),
                "tokens": float(r["llm_tokens"]),
                "policy_id": r["policy_id"],
                "commit": r.get("commit", ""),
                "kind": "learner" if learned else "fixed",
            }
        )
    return out


def complete_tasks(rows: list[dict]) -> tuple[list[str], dict[str, list[str]]]:
    """Tasks every (policy, train seed) run has an episode on, and what each other task lacks."""
    runs = sorted({(r["policy"], str(r["train_seed"])) for r in rows})
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    have = {(r["policy"], str(r["train_seed"]), r["task"]) for r in rows}
    missing = {t: [f"{p}{'_s' + s if s else ''}" for p, s in runs if (p, s, t) not in have] for t in tasks}
    return [t for t in tasks if not missing[t]], {t: m for t, m in missing.items() if m}


def summarize(rows: list[dict], *, margin: float, token_ratio: float, reps: int, seed: int = 0) -> dict:
    from algos.evaluation import interval_estimates, score_matrix

    tasks, missing = complete_tasks(rows)
    if len(tasks) < 2:
        raise ValueError(f"fewer than two tasks have an episode of every policy (missing: {missing})")
    rows = [r for r in rows if r["task"] in tasks]
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    if REFERENCE not in policies:
        raise ValueError(f"the panel has no {REFERENCE!r} episodes to pair the others with (policies: {policies})")
    matrices = {
        p: score_matrix(
            [r for r in rows if r["policy"] == p], run="train_seed", task="task", value="score", tasks=tasks
        )
        for p in policies
    }
    iqm = interval_estimates({p: m[0] for p, m in matrices.items()}, reps=reps, seed=seed, task_bootstrap=True)
    tokens = {p: float(np.mean([r["tokens"] for r in rows if r["policy"] == p])) for p in policies}
    reference = matrices[REFERENCE][0].mean(axis=0)
    # The bar a learner of communication must clear: the best fixed policy (by mean), not only the pipeline.
    fixed = [p for p in policies if next(r["kind"] for r in rows if r["policy"] == p) == "fixed"]
    best_fixed = max(fixed, key=lambda p: float(matrices[p][0].mean()))
    best = matrices[best_fixed][0].mean(axis=0)
    table = []
    for p in policies:
        mat, _, runs = matrices[p]
        entry = {
            "policy": p,
            "kind": next(r["kind"] for r in rows if r["policy"] == p),
            "train_seeds": [s for s in runs if s != ""],
            "runs": int(mat.shape[0]),
            "iqm": iqm[p].as_dict(),
            "mean": float(mat.mean()),
            "per_task": dict(zip(tasks, mat.mean(axis=0).tolist())),
            "tokens": tokens[p],
            "token_ratio": tokens[p] / tokens[REFERENCE],
        }
        if p != REFERENCE:
            d = paired_difference(mat.mean(axis=0) - reference, reps, seed)
            entry["paired_difference"] = d
            entry["beats_pipeline"] = d["low"] > 0
            entry["matches_pipeline_cheaper"] = d["mean"] >= -margin and entry["token_ratio"] <= token_ratio
        if p != best_fixed:
            entry["to_best_fixed"] = paired_difference(mat.mean(axis=0) - best, reps, seed)
        table.append(entry)
    winners = [
        e["policy"]
        for e in table
        if e["kind"] == "learner" and (e.get("beats_pipeline") or e.get("matches_pipeline_cheaper"))
    ]
    return {
        "tasks": tasks,
        "missing": missing,
        "episodes": len(rows),
        "commits": sorted({r["commit"] or "unknown" for r in rows}),
        "margin": margin,
        "token_ratio": token_ratio,
        "table": table,
        "best_fixed": best_fixed,
        "learned_policies_meeting_the_bar": winners,
    }


def _ci(d: dict) -> str:
    return f"[{d['low']:.3f}, {d['high']:.3f}]"


def markdown(result: dict) -> str:
    t = result["tasks"]
    lines = [
        f"LLM-team result: {len(result['table'])} policies x {len(t)} held-out tasks, one greedy episode per "
        f"policy (per training seed), task and episode seed; {result['episodes']} episodes, played by code "
        f"revision(s) {', '.join(result['commits'])}.",
        "",
        f"| policy | runs | IQM [95 % CI] | mean | paired diff to {result['best_fixed']} (best fixed) [95 % CI], p "
        "| paired diff to handcrafted [95 % CI] | sign-flip p | min. detectable diff (80 %) | tokens / episode "
        "| x handcrafted |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(d: dict | None) -> str:
        return f"{d['mean']:+.3f} {_ci(d)}" if d else ""

    for e in sorted(result["table"], key=lambda e: -e["iqm"]["point"]):
        d, b = e.get("paired_difference"), e.get("to_best_fixed")
        named = ", ".join(map(str, e["train_seeds"]))
        seeds = f"{e['runs']} (seed{'s' if len(e['train_seeds']) > 1 else ''} {named})" if named else str(e["runs"])
        to_best = f"{cell(b)}, p {b['p']:.3f}" if b else ""
        p_pipeline = f"{d['p']:.3f}" if d else ""
        mdd = f"{(b or d)['mdd']:.3f}" if (b or d) else ""
        lines.append(
            f"| {e['policy']} | {seeds} | {e['iqm']['point']:.3f} {_ci(e['iqm'])} | {e['mean']:.3f} "
            f"| {to_best} | {cell(d)} | {p_pipeline} | {mdd} | {e['tokens']:,.0f} | {e['token_ratio']:.2f} |"
        )
    lines += ["", "Power (from this panel's own per-task spread):"]
    for e in result["table"]:
        b = e.get("to_best_fixed")
        if b is not None and e["kind"] == "learner":
            lines.append(f"- {e['policy']} against {result['best_fixed']}: {power_words(b)}")
    winners = result["learned_policies_meeting_the_bar"]
    bar = (
        f"a paired difference to the handcrafted pipeline with its interval above 0, or one within "
        f"{result['margin']:.2f} of it at no more than {result['token_ratio']:.1f}x its tokens"
    )
    lines += [
        "",
        f"The bar: {bar}. " + (f"Met by: {', '.join(winners)}." if winners else "No learned policy meets it."),
    ]
    if result["missing"]:
        lines += ["", "Tasks left out (not every policy finished them): "]
        lines += [f"- {task}: no episode of {', '.join(m)}" for task, m in result["missing"].items()]
    if result.get("late_actions"):
        lines += ["", "What each training run was doing in its last 4 episodes (top two actions per agent, share):", ""]
        for label, agents in result["late_actions"].items():
            doing = "; ".join(f"{a}: " + ", ".join(f"{n} {x:.2f}" for n, x in acts) for a, acts in agents.items())
            lines.append(f"- {label}: {doing}")
    for label, g in (result.get("graphs") or {}).items():
        changed = g["changed_from_init"]
        lines += [
            "",
            f"{label}: the most likely graph"
            + (
                f" ({changed} of {len(g['rounds']) * len(g['team'])} cells differ from its initial checkpoint's)"
                if changed is not None
                else ""
            ),
            "",
            "| round | " + " | ".join(g["team"]) + " |",
            "|---|" + "---|" * len(g["team"]),
        ]
        lines += [f"| {i} | " + " | ".join(row) + " |" for i, row in enumerate(g["rounds"], 1)]
    per_task = " | ".join(t)
    lines += ["", f"| policy | {per_task} |", "|---|" + "---|" * len(t)]
    for e in result["table"]:
        lines.append(f"| {e['policy']} | " + " | ".join(f"{e['per_task'][k]:.3f}" for k in t) + " |")
    return "\n".join(lines) + "\n"


def training_curves(folder: Path, score: str = "report_score") -> dict[str, dict]:
    """Per learner: (seeds, episodes) matrices of `score` from runs/<policy>_s<seed>/train.csv."""
    from experiments.protocol.benchmark import learning_curves

    runs = []
    for csv_path in sorted(folder.glob("runs/*/train.csv")):
        m = SEEDED.match(csv_path.parent.name)
        label, seed = (m["policy"], int(m["seed"])) if m else (csv_path.parent.name, 0)
        runs.append({"label": label, "seed": seed, "folder": str(csv_path.parent)})
    return learning_curves(runs, score) if runs else {}


def action_names(team: list[str]) -> list[str]:
    """Short action names for tables: solo, broadcast, q_<agent> (a selective query), aggregate,
    append, terminate."""
    from report_protocol import ActionTable

    table = ActionTable(len(team))
    short = {"solo": "solo", "broadcast": "broadcast", "aggregate": "aggregate", "append": "append"}
    names = []
    for a in range(table.size):
        kind, j = table.decode(a)
        names.append(f"q_{team[j]}" if kind == "query" and j is not None else short.get(kind, kind))
    return names


def late_actions(train_csv: Path, last: int = 4) -> dict[str, list[tuple[str, float]]]:
    """Per agent, its two most taken actions and their shares over the last ``last`` training
    episodes (train.csv's act/<agent>/<k> columns): what the learner was doing when it stopped."""
    rows = read_csv(train_csv)[-last:]
    agents = list(dict.fromkeys(k.split("/")[1] for k in rows[0] if k.startswith("act/") and not k.endswith("/top")))
    if not agents:  # a log without per-agent action shares (an env or logger that records none)
        return {}
    names = action_names(agents)
    out = {}
    for agent in agents:
        shares = [float(np.mean([float(r[f"act/{agent}/{k}"] or 0) for r in rows])) for k in range(len(names))]
        top = sorted(range(len(names)), key=lambda k: -shares[k])[:2]
        out[agent] = [(names[k], shares[k]) for k in top]
    return out


def greedy_graph(checkpoint: Path) -> dict:
    """A graph_pg checkpoint's most likely graph (each round's argmax per agent), and how many of
    its (round, agent) cells differ from the graph of the checkpoint it was initialised from."""
    from algos.training import checkpoint as ckpt

    state = ckpt.load(checkpoint)
    team = list(state["config"]["env"]["team"])
    names = action_names(team)
    table = state["algo"]["logits"].argmax(-1).tolist()
    result = {"team": team, "rounds": [[names[a] for a in row] for row in table], "changed_from_init": None}
    init = state["config"].get("init")
    if init:
        start = ckpt.load(ckpt.resolve_checkpoint(ROOT / init))["algo"]["logits"].argmax(-1).tolist()
        result["changed_from_init"] = sum(a != b for r, q in zip(table, start) for a, b in zip(r, q))
    return result


def write_result(folder: Path, rename: dict[str, str], margin: float, token_ratio: float, reps: int) -> dict:
    from experiments.protocol.benchmark import curve_summary, plot_curves, plot_pareto

    rows = episodes(read_csv(folder / "panel.csv"), rename)
    with open(folder / "episodes.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=EPISODE_FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    result = summarize(rows, margin=margin, token_ratio=token_ratio, reps=reps)
    result["score"] = "report score"
    result["curves"] = curve_summary(training_curves(folder), reps=reps)
    late = {p.parent.name: late_actions(p) for p in sorted(folder.glob("runs/*/train.csv"))}
    result["late_actions"] = {label: acts for label, acts in late.items() if acts}
    result["graphs"] = {p.parent.name: greedy_graph(p) for p in sorted(folder.glob("runs/*/final.pt"))}
    (folder / "summary.json").write_text(json.dumps(result, indent=2))
    (folder / "summary.md").write_text(markdown(result), encoding="utf-8")
    plot_pareto(result, folder / "pareto.png")
    if result["curves"]:
        plot_curves(result, folder / "curves.png")
    return result


def copy_run(run_dir: Path, folder: Path, label: str) -> None:
    """Keep a training run's log (train.csv) beside the panel, under the label its episodes carry,
    and a graph_pg run's final checkpoint (a few kB: its logits), whose most likely graph is drawn."""
    target = folder / "runs" / label
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(run_dir / "train.csv", target / "train.csv")
    final = run_dir / "checkpoints" / "final.pt"
    if final.exists() and final.stat().st_size < 200_000:
        shutil.copy2(final, target / "final.pt")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path, help="holds panel.csv (validate_proxy.py validate.out=...)")
    ap.add_argument("--rename", action="append", default=[], metavar="LABEL=NEW", help="e.g. learned=qmix_proxy_s1")
    ap.add_argument(
        "--run", action="append", default=[], metavar="LABEL=RUN_DIR", help="copy RUN_DIR/train.csv to runs/LABEL/"
    )
    ap.add_argument("--margin", type=float, default=0.03, help="within this of the pipeline's score counts as equal")
    ap.add_argument("--token-ratio", type=float, default=0.8, help="... at no more than this share of its tokens")
    ap.add_argument("--reps", type=int, default=5000, help="bootstrap resamples")
    args = ap.parse_args(argv)
    bad = [a for a in args.rename + args.run if "=" not in a]
    if bad:
        ap.error(f"--rename and --run take LABEL=VALUE, got {bad}")
    rename = dict(a.split("=", 1) for a in args.rename)
    if not (args.folder / "panel.csv").exists():
        ap.error(
            f"{args.folder / 'panel.csv'} does not exist: run experiments/protocol/validate_proxy.py validate.out=..."
        )
    for a in args.run:
        label, run_dir = a.split("=", 1)
        if not (Path(run_dir) / "train.csv").exists():
            ap.error(f"--run {a}: {run_dir}/train.csv does not exist")
        copy_run(Path(run_dir), args.folder, label)
    try:
        result = write_result(args.folder, rename, args.margin, args.token_ratio, args.reps)
    except ValueError as e:
        print(f"llm_team_result.py: {e}", file=sys.stderr)
        return 2
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
