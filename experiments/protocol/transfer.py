#!/usr/bin/env python
"""Does a policy trained on one team transfer to another? A checkpoint and fixed policies
on the same held-out episodes of a target env (by default the LLM team with SmolLM2).

    python experiments/protocol/transfer.py transfer.checkpoint=checkpoints/qmix_report_writing_extractive/final.pt
    python experiments/protocol/transfer.py transfer.checkpoint=... transfer.tasks=1 'transfer.fixed=[preset:chain]'

The checkpoint's learner plays the target env built from `transfer.overrides` (train.py
overrides; its spaces must match the ones it was trained on), beside `transfer.fixed`
(evaluate.py's eval.compare entries) at the same round budget. Every policy plays the
first `transfer.tasks` held-out tasks once, greedily, with the same seeds. Writes
`transfer.json` and `transfer.md` into `transfer.out`.
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parents[2]

import hydra  # noqa: E402
import numpy as np  # noqa: E402
from hydra.core.config_store import ConfigStore  # noqa: E402
from omegaconf import DictConfig, OmegaConf  # noqa: E402


@dataclass
class TransferConfig:
    checkpoint: Optional[str] = None  # the trained policy (a final.pt or a run dir)
    label: str = "learned"  # its name in the table
    overrides: List[str] = field(default_factory=lambda: ["env=report_writing", "env.max_rounds=8"])  # the target env
    # Fixed policies at the same round budget (the handcrafted phases fitted to it: at 8 rounds planning 1,
    # research 2, drafting 4, review 1; algos/handcrafted_phases.py budget_rounds).
    fixed: List[str] = field(default_factory=lambda: ["handcrafted", "preset:chain"])
    tasks: int = 2  # how many held-out tasks (the first ones) every policy plays
    eval_seed: int = 1_000_000
    # Model processes, one policy each at a time (None: two on a 2-core machine when the target
    # env's LLM is the in-process llama.cpp on one thread, else one; each policy's tasks run in
    # order in its process, so the rows are the same for any number).
    workers: Optional[int] = None
    out: str = "outputs/transfer/${now:%Y-%m-%d_%H-%M-%S}"


@dataclass
class TransferRunConfig:
    transfer: TransferConfig = field(default_factory=TransferConfig)


def transfer(cfg: DictConfig) -> dict:
    from experiments.protocol.benchmark import evaluate_job, heldout_tasks
    from experiments.compare_policies import algo_config, parse_entry

    from algos.training.runners import model_process_count

    from algos.training import checkpoint as ckpt

    tcfg: TransferConfig = OmegaConf.to_object(cfg.transfer)
    if not tcfg.checkpoint:
        raise ValueError("transfer.checkpoint is required: the trained policy to transfer (final.pt or run dir)")
    path = ckpt.resolve_checkpoint(tcfg.checkpoint)
    trained = ckpt.load(path)["config"]
    base = hydra.compose(config_name="config", overrides=list(tcfg.overrides))
    env = OmegaConf.to_container(base.env, resolve=True)
    tasks = heldout_tasks(env)[: tcfg.tasks]
    jobs = [
        {
            "label": tcfg.label,
            "kind": "learner",
            "run": 0,
            "seed": tcfg.eval_seed,
            "tasks": tasks,
            "algo": trained["algo"],
            "env": env,
            "checkpoint": str(path),
        }
    ]
    for entry in tcfg.fixed:
        label, name, overrides = parse_entry(entry)
        composed = hydra.compose(config_name="config", overrides=[f"algo={name}", *tcfg.overrides])
        jobs.append(
            {
                "label": label,
                "kind": "fixed",
                "run": 0,
                "seed": tcfg.eval_seed,
                "tasks": tasks,
                "algo": OmegaConf.to_container(algo_config(name, overrides, composed.algo), resolve=True),
                "env": env,
                "checkpoint": None,
            }
        )
    t0 = time.perf_counter()
    out = Path(tcfg.out).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    workers = tcfg.workers if tcfg.workers is not None else model_process_count(env, len(jobs))
    played: dict[int, list[dict]] = {}
    result: dict = {}

    def store(index: int, job_rows: list[dict]) -> dict:
        played[index] = job_rows
        for row in job_rows:
            print(
                f"  {row['policy']:<24} {row['task']}: score {row['report_score']:.3f}, tokens {row['tokens']:.0f}, "
                f"rounds {row['rounds']}, {row['seconds']:.0f} s",
                flush=True,
            )
        rows = [row for i in sorted(played) for row in played[i]]  # in the jobs' order, whoever finished first
        return write(out, path, trained, tcfg, tasks, rows, time.perf_counter() - t0)  # partial results survive

    if workers <= 1:
        for i, job in enumerate(jobs):
            result = store(i, evaluate_job(job))
    else:
        print(f"{len(jobs)} policies on {workers} single-thread model processes (transfer.workers=1 keeps one)")
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            futures = {pool.submit(evaluate_job, job): i for i, job in enumerate(jobs)}
            for fut in as_completed(futures):
                result = store(futures[fut], fut.result())
    print((out / "transfer.md").read_text())
    return result


def write(
    out: Path, path: Path, trained: dict, tcfg: TransferConfig, tasks: list[str], rows: list[dict], wall_s: float
) -> dict:
    table = []
    for label in dict.fromkeys(r["policy"] for r in rows):
        mine = [r for r in rows if r["policy"] == label]
        table.append(
            {
                "policy": label,
                "episodes": len(mine),
                **{
                    k: float(np.mean([r[k] for r in mine]))
                    for k in ("report_score", "tokens", "rounds", "seconds", "chars")
                },
            }
        )
    result = {
        "checkpoint": str(path),
        "trained_env": trained["env"],
        "target_overrides": list(tcfg.overrides),
        "tasks": tasks,
        "table": table,
        "episodes": [{k: v for k, v in r.items() if k != "action_names"} for r in rows],
        "wall_s": wall_s,
    }
    (out / "transfer.json").write_text(json.dumps(result, indent=2, default=str))
    lines = [
        f"Transfer of `{path}` to `{' '.join(tcfg.overrides)}`; held-out tasks {', '.join(tasks)}, one "
        f"greedy episode each.",
        "",
        "| policy | episodes | report score | tokens/episode | rounds | s/episode |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['policy']} | {r['episodes']} | {r['report_score']:.3f} | {r['tokens']:.0f} | {r['rounds']:.1f} | "
        f"{r['seconds']:.0f} |"
        for r in table
    ]
    (out / "transfer.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return result


@hydra.main(version_base="1.3", config_path="../../conf", config_name="transfer")
def main(cfg: DictConfig) -> None:
    from algos.training.checkpoint import CheckpointError

    try:
        transfer(cfg)
    except (CheckpointError, FileNotFoundError) as e:  # a checkpoint missing, damaged or foreign
        print(f"transfer.py: {e}", file=sys.stderr, flush=True)
        sys.exit(2)


from experiments.run_config import register_configs  # noqa: E402

register_configs()
ConfigStore.instance().store(name="transfer_schema", node=TransferRunConfig)

if __name__ == "__main__":
    main()
