#!/usr/bin/env python
"""Can the extractive proxy stand in for the LLM team? The same policies on the same
held-out tasks on both teams, and how alike the two rank them.

    python experiments/protocol/validate_proxy.py                            # run or continue the panel
    python experiments/protocol/validate_proxy.py validate.workers=1         # one model process
    python experiments/protocol/validate_proxy.py validate.run_episodes=false  # only the figures of what is stored
    python experiments/protocol/validate_proxy.py validate.out=docs/benchmark/validation  # the committed panel
    python experiments/protocol/validate_proxy.py validate.replay_proxy=true validate.run_episodes=false  # proxy changed

Every policy plays every task once, greedily, with the same seed, at the learners' round
budget, on the proxy (seconds) and then on the LLM team (minutes an episode with the default
model), cell by cell, ``workers`` cells at once. Each LLM-team episode is appended to ``panel.csv`` as it ends, beside the
proxy episode of the same policy, task and seed; a rerun skips the rows already there, so
the panel can be run in several sittings. The response cache is on: an episode cut off
mid-way replays its finished calls. Each LLM-team episode's report and trace are kept under
``episodes/<policy>/<task>/``. At the end (and with ``run_episodes=false``) it writes
``summary.json`` and ``summary.md``: the within-task Kendall tau between proxy and LLM
scores (mean over the tasks every policy has finished, bootstrap 95 % interval over tasks,
exact permutation p), the between-policy tau, and whether the proxy orders every policy
pair that the LLM team separates significantly the same way (algos/evaluation/agreement.py).

The excluded tasks are those whose LLM-team results were read while the proxy's rules were
chosen (docs/extractive_team.md): a proxy is not validated on the tasks that shaped it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]

import hydra  # noqa: E402
import numpy as np  # noqa: E402
from hydra.core.config_store import ConfigStore  # noqa: E402
from omegaconf import DictConfig, OmegaConf  # noqa: E402

PANEL_FIELDS = [
    "policy",
    "task",
    "seed",
    "policy_id",  # what exactly played: the algorithm config, or the checkpoint's digest
    "proxy_score",
    "llm_score",
    "proxy_tokens",
    "llm_tokens",
    "proxy_rounds",
    "llm_rounds",
    "llm_seconds",
    "llm_prompt_tokens_evaluated",
    "llm_prompt_tokens_reused",
    "commit",  # the code that played (git HEAD, "+dirty" with uncommitted changes)
]


def code_revision() -> str:
    """The git revision of the code playing the panel: rows of another revision were played by
    other prompts or rules, and the figures say so."""
    import subprocess

    try:
        rev = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return "unknown"
    if rev.returncode != 0:
        return "unknown"
    return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


@dataclass
class ValidateConfig:
    # The policies: evaluate.py's eval.compare entries (fixed policies at the same round budget; the
    # handcrafted pipeline fits its phases to it), and `learned`, the checkpoint below.
    policies: List[str] = field(
        default_factory=lambda: ["handcrafted", "preset:full", "preset:ring", "preset:chain", "random", "learned"]
    )
    checkpoint: str = "checkpoints/qmix_report_writing_extractive/final.pt"  # the learned policy
    # More learned policies by name: a policy entry that is a key here plays that checkpoint
    # (e.g. +validate.checkpoints.graph_pg=checkpoints/graph_pg_report_writing_extractive/final.pt).
    checkpoints: Dict[str, str] = field(default_factory=dict)
    # The two teams (train.py overrides). Both at the learners' budget of 8 rounds. The LLM team samples
    # (temperature 0.7, each episode's calls seeded from the episode's seed) so that a cell's episodes are
    # replicates: greedy decoding replays a cell exactly, and its per-task differences were measured as
    # noisy as one sampled episode's, which k replicates average and greedy never can
    # (experiments/protocol/decoding_noise.py, docs/results.md). "llm.temperature=0" replays greedy.
    llm_overrides: List[str] = field(
        default_factory=lambda: [
            "env=report_writing",
            "env.max_rounds=8",
            "llm.cache.enabled=true",
            "llm.temperature=0.7",
        ]
    )
    proxy_overrides: List[str] = field(default_factory=lambda: ["env=report_writing_extractive", "env.max_rounds=8"])
    # Held-out tasks whose LLM-team results were seen while the proxy v2 rules were chosen.
    exclude_tasks: List[str] = field(default_factory=lambda: ["dates-and-times", "random-numbers", "serialization"])
    tasks: Optional[int] = None  # the first N remaining held-out tasks (None: all of them)
    seed: int = 1_000_000  # the episodes' seed, the same for every policy and task
    # Episodes per cell, seeds seed, seed + 1, ...: replicates with sampled decoding (an llm.temperature
    # above 0; each episode's calls then sample with a seed drawn from its own), a replay when greedy.
    replicates: int = 2
    workers: int = 2  # LLM-team episodes at once, one single-thread model process each
    run_episodes: bool = True  # false: only recompute the figures from the stored panel
    # Play every cell's proxy episode again and refile the proxy columns of its panel row (the LLM
    # columns stay): for when the proxy's code or store changed after the cells were stored.
    replay_proxy: bool = False
    out: str = "outputs/validation"  # panel.csv, proxy.csv, summary.json, summary.md
    bootstrap: int = 5000  # resamples of the tasks for the tau interval
    alpha: float = 0.05  # a policy pair counts as separated by the LLM team below this p


@dataclass
class ValidateRunConfig:
    validate: ValidateConfig = field(default_factory=ValidateConfig)


def policy_jobs(vcfg: ValidateConfig, env: dict, tasks: list[str], overrides: list[str]) -> list[dict]:
    """One evaluate_job per (task, policy): tasks outermost, so a partial panel has whole tasks."""
    from experiments.compare_policies import algo_config, parse_entry

    from algos.training import checkpoint as ckpt

    jobs = []
    for entry in vcfg.policies:
        # "ablated:<policy>": the message-ablation diagnostic, <policy> with no delivery between agents.
        policy, ablated = (entry[len(ABLATED) :], True) if entry.startswith(ABLATED) else (entry, False)
        if policy == "learned" or policy in vcfg.checkpoints:
            # an absolute path stays itself
            path = ckpt.resolve_checkpoint(ROOT / vcfg.checkpoints.get(policy, vcfg.checkpoint))
            algo = ckpt.load(path)["config"]["algo"]
            # The file's own digest: the payload's is checked and dropped by load(), and rows of
            # another checkpoint under the same label must not count as this one's.
            digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            ident, checkpoint = f"{algo['name']} {path.name} sha256:{digest}", str(path)
        else:
            _, name, kw = parse_entry(policy)
            composed = hydra.compose(config_name="config", overrides=[f"algo={name}", *overrides])
            algo = OmegaConf.to_container(algo_config(name, kw, composed.algo), resolve=True)
            ident, checkpoint = json.dumps(algo, sort_keys=True), None
        cell_env = env
        if ablated:
            cell_env = dict(env, engine=dict(env.get("engine") or {}, deliver_messages=False))
            ident = f"{ABLATED} {ident}"
        for task, replicate in ((t, r) for t in tasks for r in range(vcfg.replicates)):
            jobs.append(
                {
                    "label": entry,
                    "kind": "learner" if checkpoint else "fixed",
                    "run": 0,
                    "seed": vcfg.seed + replicate,
                    "tasks": [task],
                    "algo": algo,
                    "env": cell_env,
                    "checkpoint": checkpoint,
                    "policy_id": ident,
                }
            )
    order = {t: i for i, t in enumerate(tasks)}
    return sorted(jobs, key=lambda j: order[j["tasks"][0]])  # stable: policies in their order within a task


def read_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def append_row(path: Path, fields: list[str], row: dict) -> None:
    new = not path.exists()
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow(row)
        f.flush()


def key(policy: str, task: str, seed, policy_id: str) -> tuple:
    return (policy, task, int(seed), policy_id)


ABLATED = "ablated:"  # a policy entry's prefix: that policy played with env.engine.deliver_messages=false

PROXY_FIELDS = ["policy", "task", "seed", "policy_id", "score", "tokens", "rounds"]


def play_cell(proxy_job: dict | None, llm_job: dict) -> tuple[dict | None, dict]:
    """One panel cell in a worker: the proxy episode (unless stored; seconds) and then the LLM
    team's episode of the same policy, task and seed (minutes)."""
    from experiments.protocol.benchmark import evaluate_job

    proxy = None
    if proxy_job is not None:
        (row,) = evaluate_job(proxy_job)
        proxy = {
            "policy": proxy_job["label"],
            "task": row["task"],
            "seed": proxy_job["seed"],
            "policy_id": proxy_job["policy_id"],
            "score": row["report_score"],
            "tokens": row["tokens"],
            "rounds": row["rounds"],
        }
    (llm,) = evaluate_job(llm_job)
    return proxy, llm


def write_rows(path: Path, fields: list[str], rows: list[dict]) -> None:
    """Rewrite a table whole, through a temporary file, so an interrupt leaves the old one."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    tmp.replace(path)


def replay_proxy(proxy_jobs: list[dict], llm_jobs: list[dict], out: Path, workers: int) -> int:
    """Every cell's proxy episode played again (seconds each); proxy.csv and the proxy columns of
    the panel rows of these cells are rewritten, everything else is kept. Returns the rows refiled."""
    from experiments.protocol.benchmark import run_jobs

    keys = [key(lj["label"], lj["tasks"][0], lj["seed"], lj["policy_id"]) for lj in llm_jobs]
    rows = run_jobs(proxy_jobs, workers)  # one task per job, so one row per cell, in the jobs' order
    fresh = {
        k: {
            "policy": k[0],
            "task": k[1],
            "seed": k[2],
            "policy_id": k[3],
            "score": row["report_score"],
            "tokens": row["tokens"],
            "rounds": row["rounds"],
        }
        for k, row in zip(keys, rows, strict=True)
    }
    proxy_path, panel_path = out / "proxy.csv", out / "panel.csv"
    kept = [r for r in read_rows(proxy_path) if key(r["policy"], r["task"], r["seed"], r["policy_id"]) not in fresh]
    write_rows(proxy_path, PROXY_FIELDS, kept + list(fresh.values()))
    panel, refiled = read_rows(panel_path), 0
    for r in panel:
        new = fresh.get(key(r["policy"], r["task"], r["seed"], r["policy_id"]))
        if new is not None:
            r.update(proxy_score=new["score"], proxy_tokens=new["tokens"], proxy_rounds=new["rounds"])
            refiled += 1
    if panel:
        write_rows(panel_path, PANEL_FIELDS, panel)
    print(f"proxy: {len(fresh)} episode(s) replayed, {refiled} panel row(s) refiled", flush=True)
    return refiled


def keep_reports(job: dict, out: Path) -> dict:
    """The LLM-team episode writes its report and trace under ``out/episodes/<policy>/<task>``:
    the panel's reports are read, and judged by other judges, after it ran."""
    cell = out / "episodes" / job["label"].replace(":", "_") / job["tasks"][0]
    return dict(job, env=dict(job["env"], save_episodes=True, output_dir=str(cell)))


def run_panel(proxy_jobs: list[dict], llm_jobs: list[dict], out: Path, workers: int) -> None:
    """The cells not in the panel yet, ``workers`` at once; each row is written as its episode
    ends, so an interrupt loses only the episodes in flight."""
    panel_path, proxy_path = out / "panel.csv", out / "proxy.csv"
    revision = code_revision()
    proxy = {key(r["policy"], r["task"], r["seed"], r["policy_id"]): r for r in read_rows(proxy_path)}
    done = {key(r["policy"], r["task"], r["seed"], r["policy_id"]) for r in read_rows(panel_path)}
    cells = [
        (pj, lj)
        for pj, lj in zip(proxy_jobs, llm_jobs)
        if key(lj["label"], lj["tasks"][0], lj["seed"], lj["policy_id"]) not in done
    ]
    print(f"LLM team: {len(done)} episode(s) stored, {len(cells)} to run on {workers} worker(s)", flush=True)

    def store(pj: dict, lj: dict, proxy_row: dict | None, row: dict) -> None:
        k = key(lj["label"], lj["tasks"][0], lj["seed"], lj["policy_id"])
        if proxy_row is not None:  # filed under the cell's identity (the same algorithm on both teams)
            proxy_row = dict(proxy_row, policy_id=lj["policy_id"])
            append_row(proxy_path, PROXY_FIELDS, proxy_row)
            proxy[k] = proxy_row
        p = proxy[k]
        append_row(
            panel_path,
            PANEL_FIELDS,
            {
                "policy": lj["label"],
                "task": row["task"],
                "seed": lj["seed"],
                "policy_id": lj["policy_id"],
                "proxy_score": p["score"],
                "llm_score": row["report_score"],
                "proxy_tokens": p["tokens"],
                "llm_tokens": row["tokens"],
                "proxy_rounds": p["rounds"],
                "llm_rounds": row["rounds"],
                "llm_seconds": round(row["seconds"], 1),
                "llm_prompt_tokens_evaluated": row.get("prompt_tokens_evaluated", ""),
                "llm_prompt_tokens_reused": row.get("prompt_tokens_reused", ""),
                "commit": revision,
            },
        )
        print(
            f"  {lj['label']:<14} {row['task']:<20} LLM {row['report_score']:.3f} (proxy {float(p['score']):.3f}), "
            f"{row['tokens']:.0f} tokens, {row['seconds']:.0f} s",
            flush=True,
        )

    def proxy_job(pj: dict, lj: dict) -> dict | None:
        return None if key(lj["label"], lj["tasks"][0], lj["seed"], lj["policy_id"]) in proxy else pj

    if workers <= 1:
        for pj, lj in cells:
            store(pj, lj, *play_cell(proxy_job(pj, lj), lj))
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(play_cell, proxy_job(pj, lj), lj): (pj, lj) for pj, lj in cells}
        for fut in as_completed(futures):
            store(*futures[fut], *fut.result())


def episode_cost(played: list[dict]) -> dict:
    """Mean wall seconds and prompt tokens of the LLM-team episodes the model played, and the share
    of the prompt tokens sent that it evaluated (the rest was reused from earlier prompts' state)."""
    if not played:
        return {"llm_episode_seconds": None, "llm_episodes_timed": 0}
    evaluated = sum(float(r["llm_prompt_tokens_evaluated"]) for r in played)
    reused = sum(float(r["llm_prompt_tokens_reused"] or 0) for r in played)
    return {
        "llm_episode_seconds": float(np.mean([float(r["llm_seconds"]) for r in played])),
        "llm_episodes_timed": len(played),
        "llm_prompt_tokens_evaluated_per_episode": evaluated / len(played),
        "llm_prompt_evaluated_share": evaluated / (evaluated + reused),
    }


def summarize(rows: list[dict], vcfg: ValidateConfig, tasks: list[str], wall_s: float) -> dict:
    """The agreement figures over the tasks every policy has finished on the LLM team."""
    from algos.evaluation.agreement import rank_agreement

    cell: dict[tuple[str, str], dict] = {}  # a cell's replicates: their mean scores
    for r in rows:
        cell.setdefault((r["policy"], r["task"]), {"n": 0, "proxy_score": 0.0, "llm_score": 0.0})
        c = cell[(r["policy"], r["task"])]
        c["n"] += 1
        for column in ("proxy_score", "llm_score"):
            c[column] += (float(r[column]) - c[column]) / c["n"]
    # The ablated policies are a diagnostic (experiments/protocol/comm_sensitivity.py), not policies to rank.
    policies = [p for p in vcfg.policies if not p.startswith(ABLATED)]
    complete = [t for t in tasks if all((p, t) in cell for p in policies)]
    result: dict = {
        "policies": policies,
        "tasks": complete,
        "tasks_planned": tasks,
        "episodes": len(rows),
        "commits": sorted({r.get("commit") or "unknown" for r in rows}),
        # Timing from episodes the model played (a row replayed from the response cache evaluated nothing).
        **episode_cost([r for r in rows if float(r.get("llm_prompt_tokens_evaluated") or 0) > 0]),
        "wall_s_this_sitting": wall_s,
    }
    if len(complete) < 2 or len(policies) < 3:  # rank agreement needs >= 3 policies and >= 2 tasks
        result["agreement"] = None
        return result
    proxy = np.array([[float(cell[(p, t)]["proxy_score"]) for t in complete] for p in policies])
    llm = np.array([[float(cell[(p, t)]["llm_score"]) for t in complete] for p in policies])
    a = rank_agreement(proxy, llm, policies, complete, alpha=vcfg.alpha, reps=vcfg.bootstrap)
    result["agreement"] = {
        "within_task_tau": a.within_task_tau,
        "within_task_ci": [a.within_task_low, a.within_task_high],
        "within_task_p": a.within_task_p,
        "per_task_tau": a.per_task_tau,
        "between_policy_tau": a.between_policy_tau,
        "between_policy_p": a.between_policy_p,
        "significant_pairs": [vars(p) for p in a.significant_pairs],
        "signs_agree": a.signs_agree,
        "target_met": a.within_task_tau >= 0.4 and a.within_task_low > 0,
    }
    # The LLM team's noise ceiling: replicates of every cell (sampled decoding, seeds seed, seed + 1, ...).
    seeds = sorted({int(r["seed"]) for r in rows if not r["policy"].startswith(ABLATED)})
    by_seed = {(r["policy"], r["task"], int(r["seed"])): float(r["llm_score"]) for r in rows}
    shared = [s for s in seeds if all((p, t, s) in by_seed for p in policies for t in complete)]
    if len(shared) >= 2:
        from algos.evaluation.agreement import noise_ceiling

        tables = [np.array([[by_seed[(p, t, s)] for t in complete] for p in policies]) for s in shared]
        c = noise_ceiling(proxy, tables, complete, reps=vcfg.bootstrap)
        result["noise_ceiling"] = {
            "within_task_tau": c.within_task_tau,
            "ci": [c.low, c.high],
            "per_task_tau": c.per_task_tau,
            "seeds": shared,
            "proxy_vs_one_replicate": c.proxy_vs_one_replicate,
            "proxy_share": c.proxy_share,
            # A share of a ceiling whose interval reaches 0 says nothing: a noise tau of 0.07 makes any
            # proxy tau look like "half" of it.
            "ceiling_resolved": c.low > 0,
            "half_met": c.low > 0 and c.proxy_share >= 0.5,
        }
    result["table"] = {
        p: {
            "proxy": float(proxy[i].mean()),
            "llm": float(llm[i].mean()),
            **{f"llm/{t}": float(llm[i, k]) for k, t in enumerate(complete)},
            **{f"proxy/{t}": float(proxy[i, k]) for k, t in enumerate(complete)},
        }
        for i, p in enumerate(policies)
    }
    return result


_CEILING_UNRESOLVED = "not judged (the ceiling's interval reaches 0: the LLM team does not agree with itself)"


def markdown(result: dict) -> str:
    tasks = result["tasks"]
    lines = [
        f"Validation panel: {len(result['policies'])} policies x {len(tasks)} complete held-out tasks "
        f"(planned {len(result['tasks_planned'])}), each cell's episodes (one per seed) averaged on the proxy and on the LLM team; "
        f"{result['episodes']} LLM-team episodes stored, played by code revision(s) {', '.join(result['commits'])}"
        + (" (MORE THAN ONE: rows of different code are mixed)" if len(result["commits"]) > 1 else "")
        + ".",
        "",
    ]
    if result.get("llm_episodes_timed"):
        lines += [
            f"LLM-team episodes played by the model: {result['llm_episodes_timed']}, "
            f"{result['llm_episode_seconds']:.0f} s each on average, "
            f"{result['llm_prompt_tokens_evaluated_per_episode']:.0f} prompt tokens evaluated per episode "
            f"({result['llm_prompt_evaluated_share']:.2f} of those sent; the rest reused).",
            "",
        ]
    a = result.get("agreement")
    if a is None:
        return "\n".join(lines + ["Fewer than two complete tasks or three policies: no agreement figures.", ""])
    lo, hi = a["within_task_ci"]
    lines += [
        f"- within-task Kendall tau (proxy vs LLM): {a['within_task_tau']:.3f} [{lo:.3f}, {hi:.3f}], "
        f"exact permutation p {a['within_task_p']:.4f}; target >= 0.4 with the interval above 0: "
        f"{'met' if a['target_met'] else 'NOT met'}",
        f"- between-policy tau (mean scores): {a['between_policy_tau']:.3f}, exact p {a['between_policy_p']:.4f}",
        f"- policy pairs the LLM team separates (p < alpha): {len(a['significant_pairs'])}; the proxy orders "
        f"{'all of them' if a['signs_agree'] else 'NOT all of them'} the same way",
        "",
        "| policy | proxy mean | LLM mean | " + " | ".join(f"{t} (proxy / LLM)" for t in tasks) + " |",
        "|---|---|---|" + "---|" * len(tasks),
    ]
    for p, row in result["table"].items():
        cells = " | ".join(f"{row[f'proxy/{t}']:.3f} / {row[f'llm/{t}']:.3f}" for t in tasks)
        lines.append(f"| {p} | {row['proxy']:.3f} | {row['llm']:.3f} | {cells} |")
    lines += ["", "Per-task tau: " + ", ".join(f"{t} {v:.2f}" for t, v in a["per_task_tau"].items()), ""]
    c = result.get("noise_ceiling")
    if c is None:
        lines += ["- noise ceiling: not measured (it needs >= 2 sampled replicates of every cell:"
                  " llm.temperature > 0 and validate.replicates >= 2)", ""]  # fmt: skip
    else:
        lo, hi = c["ci"]
        lines += [
            f"- the LLM team's noise ceiling (within-task tau between replicates, seeds {c['seeds']}): "
            f"{c['within_task_tau']:.3f} [{lo:.3f}, {hi:.3f}]",
            f"- the proxy against one replicate: tau {c['proxy_vs_one_replicate']:.3f}, "
            f"{c['proxy_share']:.2f} of the ceiling; target at least half: "
            + ("met" if c["half_met"] else "NOT met" if c["ceiling_resolved"] else _CEILING_UNRESOLVED),
            "",
        ]
    for pair in a["significant_pairs"]:
        lines.append(
            f"- LLM: {pair['better']} > {pair['worse']} by {pair['reference_difference']:.3f} (p {pair['p_value']:.4f}); "
            f"proxy difference {pair['proxy_difference']:+.3f}"
        )
    return "\n".join(lines) + "\n"


def validate(cfg: DictConfig) -> dict:
    from experiments.protocol.benchmark import heldout_tasks

    vcfg: ValidateConfig = OmegaConf.to_object(cfg.validate)
    out = Path(vcfg.out).expanduser()
    out = (out if out.is_absolute() else ROOT / out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    llm_env = OmegaConf.to_container(
        hydra.compose(config_name="config", overrides=vcfg.llm_overrides).env, resolve=True
    )
    proxy_env = OmegaConf.to_container(
        hydra.compose(config_name="config", overrides=vcfg.proxy_overrides).env, resolve=True
    )
    unknown = set(vcfg.exclude_tasks) - set(heldout_tasks(llm_env))
    if unknown:
        raise ValueError(f"validate.exclude_tasks: {sorted(unknown)} are not held-out tasks of the LLM team")
    if isinstance(vcfg.replicates, bool) or not isinstance(vcfg.replicates, int) or vcfg.replicates < 1:
        raise ValueError(f"validate.replicates must be an integer >= 1, got {vcfg.replicates!r}")
    tasks = [t for t in heldout_tasks(llm_env) if t not in vcfg.exclude_tasks][: vcfg.tasks]
    t0 = time.perf_counter()
    llm_jobs = policy_jobs(vcfg, llm_env, tasks, vcfg.llm_overrides)
    if vcfg.replay_proxy:
        replay_proxy(policy_jobs(vcfg, proxy_env, tasks, vcfg.proxy_overrides), llm_jobs, out, vcfg.workers)
    if vcfg.run_episodes:  # the same (task, policy) order on both teams: cell k is proxy_jobs[k], llm_jobs[k]
        proxy_jobs = policy_jobs(vcfg, proxy_env, tasks, vcfg.proxy_overrides)
        run_panel(proxy_jobs, [keep_reports(j, out) for j in llm_jobs], out, vcfg.workers)
    # Rows of another checkpoint or algorithm config under the same label are not this panel's.
    wanted = {key(j["label"], j["tasks"][0], j["seed"], j["policy_id"]) for j in llm_jobs}
    rows = [r for r in read_rows(out / "panel.csv") if key(r["policy"], r["task"], r["seed"], r["policy_id"]) in wanted]
    result = summarize(rows, vcfg, tasks, time.perf_counter() - t0)
    from experiments.protocol.comm_sensitivity import diagnose
    from experiments.protocol.comm_sensitivity import markdown as sensitivity_markdown

    result["comm_sensitivity"] = diagnose(rows, out, reps=vcfg.bootstrap)
    text = markdown(result) + "\n" + sensitivity_markdown(result["comm_sensitivity"])
    (out / "summary.json").write_text(json.dumps(result, indent=2))
    (out / "summary.md").write_text(text, encoding="utf-8")
    print(text, flush=True)
    return result


@hydra.main(version_base="1.3", config_path="../../conf", config_name="validate_proxy")
def main(cfg: DictConfig) -> None:
    from algos.training.checkpoint import CheckpointError

    try:
        validate(cfg)
    except (CheckpointError, FileNotFoundError, ValueError) as e:
        print(f"validate_proxy.py: {e}", file=sys.stderr, flush=True)
        sys.exit(2)


from experiments.run_config import register_configs  # noqa: E402

register_configs()
ConfigStore.instance().store(name="validate_proxy_schema", node=ValidateRunConfig)

if __name__ == "__main__":
    main()
