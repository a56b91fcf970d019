#!/usr/bin/env python
"""The benchmark protocol: learners over seeds against every fixed policy, on the same
held-out episodes, with rliable's statistics.

    python experiments/protocol/benchmark.py                                   # conf/benchmark.yaml
    python experiments/protocol/benchmark.py benchmark.seeds=[0,1] benchmark.train_episodes=20 benchmark.out=/tmp/b
    python experiments/protocol/benchmark.py benchmark.multirun=multirun/<day>/<id>   # aggregate an existing sweep

1. Train: one `experiments/train.py` Hydra multirun over `benchmark.learners` x
   `benchmark.seeds` (joblib launcher, `benchmark.workers` processes), with the shared
   `benchmark.overrides`. Or, with `benchmark.multirun`, take the runs of any train.py
   multirun; runs are grouped by their config without the seed (one group per config).
2. Evaluate: every learner checkpoint (one run per seed) and every fixed policy
   (`benchmark.fixed`, `benchmark.fixed_runs` evaluation repetitions each) play every
   held-out task once per run, greedily, with the same episode seeds, all at the env's
   round budget (`env.max_rounds`): the handcrafted pipeline fits its phases to it
   (`algo.schedule=budget`), so scores and tokens are compared at equal budgets.
3. Aggregate (`algos.evaluation`, rliable): per policy a (runs, tasks) matrix of final
   report scores; IQM with a 95 % stratified bootstrap interval; the probability of
   improvement over the best fixed policy; tokens per episode; learning curves (IQM
   over seeds with a 95 % band); the score-versus-tokens Pareto plot; per-agent action
   distributions of the learned policies.

Writes into `benchmark.out`: results.md, results.json, episodes.csv, curves.csv,
learning_curves.png, pareto.png, action_mix.png (+ the evaluation report it comes from,
eval_report.md), runs/ (the training sweep) and metrics/ (one evaluate.py-style JSON per
policy).
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parents[2]

import hydra  # noqa: E402
import numpy as np  # noqa: E402
from hydra.core.config_store import ConfigStore  # noqa: E402
from omegaconf import DictConfig, OmegaConf  # noqa: E402

from experiments.summarize import find_runs  # noqa: E402
from experiments.sweep_objective import sweep_metric  # noqa: E402

RESULT_FILES = (
    "results.md",
    "results.json",
    "episodes.csv",
    "curves.csv",
    "learning_curves.png",
    "pareto.png",
    "action_mix.png",
)


@dataclass
class BenchmarkConfig:
    learners: List[str] = field(default_factory=lambda: ["qmix", "vdn", "iql"])  # algorithms trained
    seeds: List[int] = field(default_factory=lambda: [0, 1, 2, 3, 4])  # one training run per learner and seed
    train_episodes: int = 300  # training budget per run (episodes)
    log_every: int = 10  # episodes per point of the learning curves
    # Fixed policies, as evaluate.py's eval.compare entries (name, name:topology, name:key=value;...)
    fixed: List[str] = field(
        default_factory=lambda: [
            "handcrafted",
            "preset:solo",
            "preset:star",
            "preset:chain",
            "preset:full",
            "preset:ring",
            "random",
        ]
    )
    fixed_runs: int = 5  # evaluation repetitions of each fixed policy (its runs; seeds 0..fixed_runs-1)
    # train.py overrides shared by every training run and by the fixed policies' env
    overrides: List[str] = field(default_factory=list)
    train_overrides: List[str] = field(default_factory=list)  # train.py overrides of the training runs only (algo.*)
    workers: int = 2  # processes for training (joblib launcher) and for evaluation
    multirun: Optional[str] = None  # an existing train.py multirun folder: aggregate its finished runs of `learners`
    out: str = "benchmark"  # the results folder (relative: to the current directory)
    eval_seed: int = 1_000_000  # base seed of the evaluation episodes (run r plays seed eval_seed + r)
    reps: int = 2000  # bootstrap resamples
    # The per-episode metric the statistics are computed on; auto: sweep.metric's rule (sweep_objective.sweep_metric),
    # the report score on the report env, the return on the matrix games.
    score: str = "auto"
    # Ship one learner's checkpoint with a card: the run whose held-out mean is the median of its seeds
    ship: Optional[str] = None  # folder to write (e.g. checkpoints/qmix_report_writing_extractive); null: none
    ship_learner: str = "qmix"  # which learner's runs to ship from


@dataclass
class BenchmarkRunConfig:
    benchmark: BenchmarkConfig = field(default_factory=BenchmarkConfig)


def register_configs() -> None:
    ConfigStore.instance().store(name="benchmark_schema", node=BenchmarkRunConfig)


# -- 1. training -----------------------------------------------------------------------
def prepare_store(env_cfg: dict) -> None:
    """Build the corpus store once, here, before any worker opens it. Two processes
    ingesting one store at once interleave their writes, and the store (so every score)
    then depends on timing: measured, a held-out episode replayed on a store built by two
    training workers scored 0.425, on a store built by one process 0.644."""
    import envs
    from algos.training.env_configs import make_env

    pool = envs.ResourcePool()
    for evaluation in (False, True):
        make_env(env_cfg, evaluation=evaluation, pool=pool).reset(seed=0)


def multirun_env(runs: list[dict], sweep: Path, learners: list[str]) -> dict:
    """The env config the runs of an existing multirun were trained on (one env per benchmark)."""
    names = sorted({str(r["config"]["env"]["name"]) for r in runs})
    if len(names) > 1:
        raise ValueError(
            f"{sweep}: its runs of {learners} were trained on several envs ({', '.join(names)}): a benchmark "
            "compares policies on one env; benchmark.learners picks runs, or summarize.py tables them all"
        )
    return runs[0]["config"]["env"] if runs else {}


def train_runs(cfg: BenchmarkConfig, out: Path) -> Path:
    sweep = out / "runs"
    cmd = [
        sys.executable,
        str(ROOT / "experiments" / "train.py"),
        "-m",
        f"algo={','.join(cfg.learners)}",
        f"seed={','.join(str(s) for s in cfg.seeds)}",
        f"train.episodes={cfg.train_episodes}",
        f"train.log_every={cfg.log_every}",
        "train.eval_every=0",
        "train.eval_episodes=1",
        "train.checkpoint_every=0",
        "logger.wandb=false",
        "logger.progress=quiet",
        f"hydra.sweep.dir={sweep}",
        *cfg.overrides,
        *cfg.train_overrides,
    ]
    if cfg.workers > 1:
        cmd += ["hydra/launcher=joblib", f"hydra.launcher.n_jobs={cfg.workers}"]
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
    )
    print("training:", " ".join(cmd[1:]), flush=True)
    subprocess.run(cmd, check=True, env=env, cwd=ROOT)
    return sweep


# -- 2. evaluation ---------------------------------------------------------------------
def evaluate_job(job: dict) -> list[dict]:
    """One policy, one run: every held-out task once. Returns one row per episode."""
    import torch

    import algos
    import envs
    from algos.training import checkpoint as ckpt
    from algos.training.rollout import run_episode
    from algos.training.env_configs import make_env
    from algos.training.loggers import env_action_names

    torch.set_num_threads(1)
    env_cfg = dict(job["env"])
    env_cfg.update(env_cfg.pop("eval_overrides", None) or {})
    rows = []
    algo = None
    pool = envs.ResourcePool()  # one backend, store and judge for every task of the job
    for task in job["tasks"]:
        env = make_env(env_cfg if task == NO_TASK else dict(env_cfg, task_id=task), pool=pool)
        spec = algos.EnvSpec.from_env(env)
        if algo is None:
            algo = algos.build(job["algo"]["name"], spec, OmegaConf.create(job["algo"]), seed=job["run"])
            if job.get("checkpoint"):
                algo.load_state_dict(ckpt.load(job["checkpoint"])["algo"])
        t0 = time.perf_counter()
        _, st = run_episode(env, algo, spec, explore=False, seed=job["seed"])
        rows.append(
            {
                "policy": job["label"],
                "kind": job["kind"],
                "run": job["run"],
                "task": task,
                "return": st.ret,
                "rounds": st.length,
                "seconds": time.perf_counter() - t0,
                "chars": float(getattr(getattr(env, "report", None), "chars", 0)),
                **{k: st.infos[k] for k in ("report_score",) if k in st.infos},  # absent: a matrix game
                "tokens": st.infos.get("tokens", 0.0),
                # LLM teams: the prompt tokens the model evaluated and those it reused from a cached prefix
                "prompt_tokens_evaluated": st.infos.get("prompt_tokens_evaluated", 0),
                "prompt_tokens_reused": st.infos.get("prompt_tokens_reused", 0),
                "action_counts": st.action_counts.tolist(),
                "agents": list(spec.agents),
                "action_names": env_action_names(env, spec.n_actions),
            }
        )
    return rows


NO_TASK = "-"  # the one "task" of an env without tasks (the matrix games): aggregate over runs only


def heldout_tasks(env_cfg: dict) -> list[str]:
    """The held-out task ids of the env, or [NO_TASK] for an env that has no tasks."""
    from algos.training.env_configs import make_env

    env = make_env(env_cfg, evaluation=True)
    tasks = getattr(getattr(env, "unwrapped", env), "tasks", None)
    return [t.id for t in tasks] if tasks else [NO_TASK]


def fixed_jobs(cfg: BenchmarkConfig, env: dict, tasks: list[str]) -> list[dict]:
    """Every fixed policy's evaluation runs on `env` (the learners' env, so every policy plays at the same
    round budget); a policy that does not fit the env (the handcrafted pipeline and the presets on a matrix
    game) is left out with a note."""
    import algos
    from algos.training.env_configs import make_env
    from experiments.compare_policies import algo_config, parse_entry

    spec = algos.EnvSpec.from_env(make_env(env, evaluation=True))
    jobs = []
    for entry in cfg.fixed:
        label, name, overrides = parse_entry(entry)
        composed = hydra.compose(config_name="config", overrides=[f"algo={name}", *cfg.overrides])
        acfg = algo_config(name, overrides, composed.algo)
        try:
            algos.build(name, spec, acfg, seed=0)
        except ValueError as e:
            print(f"fixed policy {label} left out: it does not fit env {env.get('name')}: {e}", flush=True)
            continue
        for r in range(cfg.fixed_runs):
            jobs.append(
                {
                    "label": label,
                    "kind": "fixed",
                    "run": r,
                    "seed": cfg.eval_seed + r,
                    "tasks": tasks,
                    "algo": OmegaConf.to_container(acfg, resolve=True),
                    "env": env,
                    "checkpoint": None,
                }
            )
    return jobs


def learner_jobs(runs: list[dict], tasks: list[str], eval_seed: int) -> list[dict]:
    return [
        {
            "label": r["label"],
            "kind": "learner",
            "run": r["seed"],
            "seed": eval_seed + i,
            "tasks": tasks,
            "algo": r["config"]["algo"],
            "env": r["config"]["env"],
            "checkpoint": r["checkpoint"],
        }
        for r in runs
        for i in [sorted({x["seed"] for x in runs}).index(r["seed"])]
    ]


def run_jobs(jobs: list[dict], workers: int) -> list[dict]:
    if workers <= 1:
        return [row for job in jobs for row in evaluate_job(job)]
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        return [row for rows in pool.map(evaluate_job, jobs) for row in rows]


# -- 3. aggregation --------------------------------------------------------------------
def learning_curves(runs: list[dict], score: str) -> dict[str, dict]:
    """Per learner: the training-episode axis and a (seeds, points) matrix of `score` from train.csv."""
    out: dict[str, dict] = {}
    for label in sorted({r["label"] for r in runs}):
        series = []
        for r in sorted((r for r in runs if r["label"] == label), key=lambda r: r["seed"]):
            with open(Path(r["folder"]) / "train.csv", newline="") as f:
                rows = [row for row in csv.DictReader(f) if row.get(score) not in (None, "")]
            series.append(([int(row["episode"]) for row in rows], [float(row[score]) for row in rows]))
        n = min(len(s[1]) for s in series)
        if n:
            out[label] = {"episodes": series[0][0][:n], "scores": np.array([s[1][:n] for s in series])}
    return out


def aggregate(rows: list[dict], curves: dict[str, dict], cfg: BenchmarkConfig, tasks: list[str]) -> dict:
    from algos.evaluation import interval_estimates, probability_of_improvement, score_matrix

    policies = list(dict.fromkeys(r["policy"] for r in rows))
    kinds = {r["policy"]: r["kind"] for r in rows}
    matrices = {
        p: score_matrix([r for r in rows if r["policy"] == p], run="run", task="task", value=cfg.score, tasks=tasks)[0]
        for p in policies
    }
    iqm = interval_estimates(matrices, reps=cfg.reps)
    fixed = [p for p in policies if kinds[p] == "fixed"]
    best_fixed = max(fixed, key=lambda p: iqm[p].point) if fixed else None
    table = []
    for p in policies:
        mine = [r for r in rows if r["policy"] == p]
        entry = {
            "policy": p,
            "kind": kinds[p],
            "runs": int(matrices[p].shape[0]),
            "tasks": len(tasks),
            "iqm": iqm[p].as_dict(),
            "mean": float(matrices[p].mean()),
            "per_task": matrices[p].mean(axis=0).tolist(),  # over runs, in `tasks` order
            "tokens": float(np.mean([r["tokens"] for r in mine])),
            "rounds": float(np.mean([r["rounds"] for r in mine])),
            "return": float(np.mean([r["return"] for r in mine])),
            "seconds": float(np.mean([r["seconds"] for r in mine])),
        }
        if best_fixed is not None and p != best_fixed:
            entry["p_improvement"] = probability_of_improvement(
                matrices[p], matrices[best_fixed], reps=cfg.reps
            ).as_dict()
        table.append(entry)
    return {
        "score": cfg.score,
        "tasks": tasks,
        "best_fixed": best_fixed,
        "table": table,
        "curves": curve_summary(curves, reps=cfg.reps),
    }


def curve_summary(curves: dict, *, reps: int) -> dict:
    """Per label, the IQM learning curve over runs with its 95 % band, as `plot_curves` reads it.

    `curves`: label -> {"episodes": [...], "scores": (runs, points) array}."""
    from algos.evaluation import curve_bands

    out = {}
    for label, c in curves.items():
        point, ci = curve_bands(c["scores"], reps=reps)
        out[label] = {
            "episodes": c["episodes"],
            "iqm": point.tolist(),
            "low": ci[0].tolist(),
            "high": ci[1].tolist(),
            "runs": int(c["scores"].shape[0]),
        }
    return out


def targets(result: dict) -> list[str]:
    """The protocol's questions about QMIX, answered from the table as it is."""
    rows = {r["policy"]: r for r in result["table"]}
    best = result["best_fixed"]
    lines = []
    for p in [r["policy"] for r in result["table"] if r["kind"] == "learner"]:
        r = rows[p]
        if best:
            above = r["iqm"]["point"] > rows[best]["iqm"]["high"]
            lines.append(
                f"{p}: IQM {r['iqm']['point']:.3f} {'above' if above else 'NOT above'} the best fixed "
                f"policy's ({best}) upper 95 % bound {rows[best]['iqm']['high']:.3f}"
            )
        hc = rows.get("handcrafted")
        if hc:
            ratio = r["tokens"] / hc["tokens"] if hc["tokens"] else math.nan
            same = r["iqm"]["point"] >= hc["iqm"]["point"]
            lines.append(
                f"{p}: {r['tokens']:.0f} tokens/episode = {ratio:.2f} x handcrafted's {hc['tokens']:.0f} "
                f"(same round budget), "
                f"at IQM {r['iqm']['point']:.3f} vs handcrafted {hc['iqm']['point']:.3f} "
                f"({'at least the same score' if same else 'a LOWER score'})"
            )
    return lines


# -- outputs ---------------------------------------------------------------------------
def _ci(d: dict) -> str:
    return f"{d['point']:.3f} [{d['low']:.3f}, {d['high']:.3f}]"


def markdown(result: dict, meta: dict) -> str:
    taskless = result["tasks"] == [NO_TASK]
    lines = [
        f"# Benchmark: {meta['title']}",
        "",
        ("No tasks (a matrix game): one held-out episode per run. " if taskless else "")
        + ("" if taskless else f"Held-out tasks: {len(result['tasks'])} ({', '.join(result['tasks'])}). ")
        + f"Statistic: final `{result['score']}`, interquartile mean (IQM) over runs"
        + ("" if taskless else " x tasks")
        + " with 95 % stratified bootstrap "
        f"intervals ({meta['reps']} resamples, rliable); P(>best fixed) is the probability of improvement over "
        f"the best fixed policy ({result['best_fixed']}). Learner runs are training seeds; fixed policies' runs "
        f"are evaluation repetitions (a deterministic policy repeats itself, so its interval is a point).",
        "",
        "| policy | kind | runs | IQM [95 % CI] | mean | P(>best fixed) [95 % CI] | tokens/episode | rounds | s/episode |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(result["table"], key=lambda r: -r["iqm"]["point"]):
        pi = (
            _ci(r["p_improvement"])
            if "p_improvement" in r
            else "(best fixed)"
            if r["policy"] == result["best_fixed"]
            else "-"
        )
        lines.append(
            f"| {r['policy']} | {r['kind']} | {r['runs']} | {_ci(r['iqm'])} | {r['mean']:.3f} | {pi} | "
            f"{r['tokens']:.0f} | {r['rounds']:.1f} | {r['seconds']:.2f} |"
        )
    if not taskless:
        lines += ["", "## Per task", ""] + per_task_table(result)
    lines += ["", "## Against the targets", ""] + [f"- {t}" for t in targets(result)]
    lines += [
        "",
        "## Learning curves",
        "",
        "![learning curves](learning_curves.png)",
        "",
        "Training episodes (exploring), IQM over seeds with a 95 % band.",
        "",
        "## Score against tokens",
        "",
        "![pareto](pareto.png)",
        "",
        "## Action distributions on the held-out episodes",
        "",
        "![actions](action_mix.png)",
        "",
        "## Run",
        "",
        f"- command: `{meta['command']}`",
        f"- wall time: {meta['wall_s']:.0f} s "
        f"(training {meta['train_s']:.0f} s, evaluation {meta['eval_s']:.0f} s), {meta['workers']} worker(s)",
        f"- training sweep: `{meta['sweep']}`",
    ]
    return "\n".join(lines) + "\n"


def per_task_table(result: dict) -> list[str]:
    """Markdown rows: each policy's mean `score` per held-out task (over its runs)."""
    tasks = result["tasks"]
    lines = ["| policy | " + " | ".join(tasks) + " |", "|---|" + "---|" * len(tasks)]
    for r in sorted(result["table"], key=lambda r: -r["iqm"]["point"]):
        lines.append(f"| {r['policy']} | " + " | ".join(f"{v:.3f}" for v in r["per_task"]) + " |")
    return lines


def plot_curves(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), constrained_layout=True)
    for label, c in result["curves"].items():
        ax.plot(c["episodes"], c["iqm"], label=f"{label} ({c['runs']} seeds)")
        ax.fill_between(c["episodes"], c["low"], c["high"], alpha=0.25)
    rows = {r["policy"]: r for r in result["table"]}
    if result["best_fixed"]:
        ax.axhline(
            rows[result["best_fixed"]]["iqm"]["point"],
            color="k",
            ls="--",
            lw=1,
            label=f"best fixed on held-out ({result['best_fixed']})",
        )
    ax.set_xlabel("training episode")
    ax.set_ylabel(f"{result['score']} (training, exploring)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_pareto(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agents_llm.viz.eval_report import pareto_front

    table = result["table"]
    front = set(pareto_front([(r["tokens"], r["iqm"]["point"]) for r in table]))
    fig, ax = plt.subplots(figsize=(7.5, 5), constrained_layout=True)
    for i, r in enumerate(table):
        err = [[r["iqm"]["point"] - r["iqm"]["low"]], [r["iqm"]["high"] - r["iqm"]["point"]]]
        ax.errorbar(
            r["tokens"],
            r["iqm"]["point"],
            yerr=err,
            fmt="o" if r["kind"] == "learner" else "s",
            color="tab:red" if i in front else "tab:blue",
            capsize=3,
        )
        ax.annotate(
            r["policy"], (r["tokens"], r["iqm"]["point"]), fontsize=7, xytext=(4, 4), textcoords="offset points"
        )
    ax.set_xscale("log")
    ax.set_xlabel("tokens per episode (log)")
    ax.set_ylabel(f"IQM {result['score']} (held-out), 95 % CI")
    ax.set_title("Score against tokens (red: Pareto front)")
    ax.grid(alpha=0.3)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def policy_metrics(rows: list[dict], out: Path) -> list[Path]:
    """One evaluate.py-style metrics JSON per learned policy (pooled over runs) for the action-mix chart."""
    from algos.training.rollout import action_distribution

    paths = []
    for p in dict.fromkeys(r["policy"] for r in rows if r["kind"] == "learner"):
        mine = [r for r in rows if r["policy"] == p]
        counts = np.sum([np.array(r["action_counts"]) for r in mine], axis=0)
        metrics = {
            k: float(np.mean([r[k] for r in mine])) for k in ("return", "report_score", "tokens") if k in mine[0]
        }
        metrics["length"] = float(np.mean([r["rounds"] for r in mine]))
        metrics.update(action_distribution(counts, mine[0]["agents"]))
        path = out / "metrics" / f"{p.replace('/', '_')}_holdout.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                {
                    "algo": p,
                    "split": "holdout",
                    "episodes": len(mine),
                    "metrics": metrics,
                    "per_episode": [
                        {k: r[k] for k in ("task", "run", "return", "report_score") if k in r} for r in mine
                    ],
                },
                indent=2,
            )
        )
        paths.append(path)
    return paths


def write_results(result: dict, rows: list[dict], meta: dict, out: Path) -> None:
    from agents_llm.viz.eval_report import write_eval_report

    out.mkdir(parents=True, exist_ok=True)
    fields = ["policy", "kind", "run", "task", "report_score", "return", "tokens", "rounds", "chars", "seconds"]
    with open(out / "episodes.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    with open(out / "curves.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["policy", "episode", "iqm", "low", "high"])
        for label, c in result["curves"].items():
            for row in zip(c["episodes"], c["iqm"], c["low"], c["high"]):
                w.writerow([label, *row])
    plot_curves(result, out / "learning_curves.png")
    plot_pareto(result, out / "pareto.png")
    metrics = policy_metrics(rows, out)
    if metrics:
        write_eval_report([str(p) for p in metrics], out)  # action_mix.png (and its own score chart)
    (out / "results.json").write_text(json.dumps({**result, "meta": meta}, indent=2, default=str))
    (out / "results.md").write_text(markdown(result, meta), encoding="utf-8")


def ship_policy(source: Path, target: Path) -> None:
    """Copy a run's checkpoint without its replay buffer: a shipped policy is loaded to act
    or to be evaluated, and the buffer is most of its size (the file is committed)."""
    from algos.training import checkpoint as ckpt

    state = ckpt.load(source)
    if isinstance(state.get("algo"), dict):
        state["algo"] = {k: v for k, v in state["algo"].items() if k != "buffer"}
    ckpt.save_atomic(state, target)


def ship_checkpoint(cfg: BenchmarkConfig, runs: list[dict], rows: list[dict], result: dict, meta: dict) -> Path:
    """Copy the median-seed run of `cfg.ship_learner` to `cfg.ship` with CARD.md and heldout.json."""
    import shutil

    from algos.training.rollout import action_distribution

    mine = [r for r in runs if r["label"] == cfg.ship_learner]
    if not mine:
        raise ValueError(
            f"benchmark.ship_learner={cfg.ship_learner!r}: no such learner among {sorted({r['label'] for r in runs})}"
        )
    means = {
        r["seed"]: float(
            np.mean([x[cfg.score] for x in rows if x["policy"] == cfg.ship_learner and x["run"] == r["seed"]])
        )
        for r in mine
    }
    order = sorted(means, key=lambda s: (means[s], s))
    seed = order[(len(order) - 1) // 2]
    run = next(r for r in mine if r["seed"] == seed)
    folder = Path(cfg.ship).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    ship_policy(Path(run["checkpoint"]), folder / "final.pt")
    shutil.copyfile(Path(run["folder"]) / "config.yaml", folder / "config.yaml")
    episodes = [x for x in rows if x["policy"] == cfg.ship_learner and x["run"] == seed]
    counts = np.sum([np.array(x["action_counts"]) for x in episodes], axis=0)
    agents, names = episodes[0]["agents"], episodes[0]["action_names"]
    dist = action_distribution(counts, agents)
    (folder / "heldout.json").write_text(
        json.dumps(
            {
                "seed": seed,
                "eval_seed": cfg.eval_seed + sorted(means).index(seed),
                "episodes": [
                    {k: x[k] for k in ("task", "report_score", "tokens", "rounds", "return")} for x in episodes
                ],
                "action_distribution": dist,
            },
            indent=2,
        )
    )
    table = {r["policy"]: r for r in result["table"]}
    me, best = table[cfg.ship_learner], result["best_fixed"]
    lines = [
        f"# {folder.name}",
        "",
        f"{cfg.ship_learner.upper()} trained on the extractive team "
        f"(`{' '.join(cfg.overrides)}`): the report env's roles as fixed rules, no language model "
        "(docs/extractive_team.md). A policy of the proxy: its transfer to the LLM team is in docs/results.md.",
        "",
        f"- Trained by the benchmark protocol: `{meta['command']}` (training seed {seed}, the median of seeds "
        f"{sorted(means)} by held-out mean score; {cfg.train_episodes} episodes). Config: `config.yaml`.",
        f"- Held-out ({len(result['tasks'])} tasks, greedy): this seed's mean report score "
        f"{means[seed]:.3f}, {np.mean([x['tokens'] for x in episodes]):.0f} tokens per episode "
        "(per task: `heldout.json`).",
        f"- All {me['runs']} seeds of {cfg.ship_learner}: IQM {_ci(me['iqm'])} (95 % stratified bootstrap); "
        f"best fixed policy {best}: IQM {_ci(table[best]['iqm'])}"
        + (f"; probability of improvement over it {_ci(me['p_improvement'])}." if "p_improvement" in me else "."),
        "- `final.pt` holds the networks and optimiser without the replay buffer (resuming training from it "
        "starts with an empty buffer).",
        "",
        "Greedy action distribution on the held-out episodes (share of rounds):",
        "",
        "| agent | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for agent in agents:
        lines.append(f"| {agent} | " + " | ".join(f"{dist[f'act/{agent}/{a}']:.2f}" for a in range(len(names))) + " |")
    lines += [
        "",
        "Reproduce: `python experiments/protocol/benchmark.py` (conf/benchmark.yaml) retrains every learner and rewrites "
        "this folder; "
        "`python experiments/evaluate.py checkpoint=" + str(Path(cfg.ship)) + "/final.pt` evaluates it.",
    ]
    (folder / "CARD.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"shipped: {folder} (seed {seed})")
    return folder


def benchmark(cfg: DictConfig) -> dict:
    bcfg: BenchmarkConfig = OmegaConf.to_object(cfg.benchmark)
    out = Path(bcfg.out).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if bcfg.multirun:  # the runs' own env (any registered env), not benchmark.overrides'
        sweep = Path(bcfg.multirun).expanduser().resolve()
        runs = [r for r in find_runs(sweep) if r["algo"] in bcfg.learners]
        env_cfg = multirun_env(runs, sweep, bcfg.learners)
        prepare_store(env_cfg)
    else:
        env_cfg = OmegaConf.to_container(
            hydra.compose(config_name="config", overrides=list(bcfg.overrides)).env, resolve=True
        )
        prepare_store(env_cfg)
        sweep = train_runs(bcfg, out)
        runs = [r for r in find_runs(sweep) if r["algo"] in bcfg.learners]
    t_train = time.perf_counter() - t0
    if not runs:
        raise ValueError(f"{sweep}: no finished run of benchmark.learners={bcfg.learners}")
    tasks = heldout_tasks(env_cfg)
    jobs = learner_jobs(runs, tasks, bcfg.eval_seed) + fixed_jobs(bcfg, env_cfg, tasks)
    where = "no tasks (aggregated over runs only)" if tasks == [NO_TASK] else f"{len(tasks)} held-out tasks"
    print(f"evaluating {len(jobs)} policy runs on {where}", flush=True)
    rows = run_jobs(jobs, bcfg.workers)
    t_eval = time.perf_counter() - t0 - t_train
    bcfg.score = sweep_metric(bcfg.score, rows[0])  # auto: the report score on the report env, else the return
    result = aggregate(rows, learning_curves(runs, bcfg.score), bcfg, tasks)
    meta = {
        "title": f"{', '.join(sorted({r['label'] for r in runs}))} vs fixed policies",
        "command": " ".join(["python experiments/protocol/benchmark.py", *sys.argv[1:]]),
        "wall_s": time.perf_counter() - t0,
        "train_s": t_train,
        "eval_s": t_eval,
        "workers": bcfg.workers,
        "sweep": str(sweep),
        "reps": bcfg.reps,
        "overrides": list(bcfg.overrides),
        "seeds": sorted({r["seed"] for r in runs}),
        "train_episodes": bcfg.train_episodes,
    }
    write_results(result, rows, meta, out)
    if bcfg.ship:
        ship_checkpoint(bcfg, runs, rows, result, meta)
    print((out / "results.md").read_text())
    print(f"results: {out}")
    return result


@hydra.main(version_base="1.3", config_path="../../conf", config_name="benchmark")
def main(cfg: DictConfig) -> None:
    benchmark(cfg)


from experiments.run_config import register_configs as register_run_configs  # noqa: E402

register_run_configs()
register_configs()

if __name__ == "__main__":
    main()
