#!/usr/bin/env python
"""QMIX ablations through the benchmark protocol's own training and evaluation code.

    python experiments/protocol/ablations.py                              # every ablation, 3 seeds, 2 at once
    python experiments/protocol/ablations.py --only base updates4 --seeds 0 1 --parallel 1
    python experiments/protocol/ablations.py --table-only                 # re-print the table from finished folders

Each ablation is one `experiments/protocol/benchmark.py` run with `benchmark.learners=[qmix]` and
its own `benchmark.train_overrides` (learner settings) or `benchmark.train_episodes`,
writing its own results folder `<out>/<name>/` (never docs/benchmark itself), with no
checkpoint shipped. The evaluation is the protocol's, untouched: the same 12 held-out
tasks, greedy, the same episode seeds, the reference judge. Fixed policies do not depend
on learner settings, so only `base` evaluates one (random, the protocol's best fixed
policy) and ships its median seed; the others are read against it.

Prints (and writes `<out>/ablations.md`) one table: ablation, what it changes, held-out
IQM [95 % CI], mean, tokens per episode, rounds, training seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# name -> (what it tests, train.py overrides of the training runs, benchmark overrides)
ABLATIONS: dict[str, tuple[str, list[str], list[str]]] = {
    # base: beside the protocol's best fixed policy (the shipped checkpoint is benchmark.py's, explicitly)
    "base": ("the protocol's QMIX as it is", [], ["benchmark.fixed=[random]"]),
    "updates4": ("4 gradient steps per episode (80 episodes give 48 updates at 1)", ["algo.updates_per_episode=4"], []),
    "budget200": ("training budget 200 episodes instead of 80", [], ["benchmark.train_episodes=200"]),
    "eps150": (
        "exploration annealed over 150 rounds (~19 episodes) instead of 300",
        ["algo.epsilon_anneal_steps=150"],
        [],
    ),
    "eps600": (
        "exploration annealed over 600 rounds (~75 episodes) instead of 300",
        ["algo.epsilon_anneal_steps=600"],
        [],
    ),
    "no_gnn": ("no message passing over the comm graph (gnn_layer=none)", ["algo.gnn_layer=none"], []),
    "small_mixer": (
        "mixing width 8, one-layer hypernetworks (32 / 2 layers)",
        ["algo.mixing_embed_dim=8", "algo.hypernet_layers=1"],
        [],
    ),
    "nstep": ("reward_spreading=nstep (credit to the rounds before an append)", ["algo.reward_spreading=nstep"], []),
    "lr1e-3": ("learning rate 1e-3 instead of 5e-4", ["algo.lr=0.001"], []),
    "hard_target": (
        "hard target copy every 10 updates instead of soft tau=0.01",
        ["algo.target_update=hard", "algo.target_update_interval=10"],
        [],
    ),
}


def hydra_list(items: list[str]) -> str:
    return "[" + ",".join(f"'{i}'" for i in items) + "]"


def _shown(path: Path) -> str:
    """A path under the repository as a relative one (commands and cards are read on other machines)."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def command(name: str, seeds: list[int], out: Path, episodes: int | None) -> list[str]:
    _, train_overrides, bench_overrides = ABLATIONS[name]
    cmd = [
        sys.executable,
        str(ROOT / "experiments" / "protocol" / "benchmark.py"),
        "benchmark.learners=[qmix]",
        "benchmark.workers=1",
        f"benchmark.out={_shown(out / name)}",
        f"benchmark.train_overrides={hydra_list(train_overrides)}",
    ]
    defaults = {"benchmark.seeds": f"[{','.join(map(str, seeds))}]", "benchmark.ship": "null", "benchmark.fixed": "[]"}
    if episodes is not None:
        defaults["benchmark.train_episodes"] = str(episodes)
    mine = {o.split("=", 1)[0] for o in bench_overrides}
    return cmd + [f"{k}={v}" for k, v in defaults.items() if k not in mine] + bench_overrides


def prepare_store() -> None:
    """Build the corpus store once before ablations run side by side (see benchmark.prepare_store)."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.argv=['b'];"
            "from experiments.protocol import benchmark;"
            "from hydra import compose, initialize_config_dir;"
            f"initialize_config_dir(config_dir='{ROOT / 'conf'}', version_base='1.3');"
            "cfg = compose(config_name='benchmark');"
            "benchmark.prepare_store(compose(config_name='config', overrides=list(cfg.benchmark.overrides)))",
        ],
        check=True,
        cwd=ROOT,
    )


def run_all(names: list[str], seeds: list[int], out: Path, parallel: int, episodes: int | None) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    pending, running = list(names), {}
    while pending or running:
        while pending and len(running) < parallel:
            name = pending.pop(0)
            (out / name).mkdir(parents=True, exist_ok=True)
            cmd = command(name, seeds, out, episodes)
            print(f"[{time.strftime('%H:%M:%S')}] start {name}: {' '.join(cmd[1:])}", flush=True)
            log = open(out / name / "ablation.log", "w")
            running[name] = (
                subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT),
                log,
                time.perf_counter(),
            )
        time.sleep(5)
        for name, (proc, log, t0) in list(running.items()):
            if proc.poll() is not None:
                log.close()
                print(
                    f"[{time.strftime('%H:%M:%S')}] {name}: exit {proc.returncode} after "
                    f"{time.perf_counter() - t0:.0f} s (log: {out / name / 'ablation.log'})",
                    flush=True,
                )
                del running[name]


def table(names: list[str], out: Path) -> str:
    lines = [
        "| ablation | changes | runs | held-out IQM [95 % CI] | mean | tokens/episode | rounds | train s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        path = out / name / "results.json"
        if not path.is_file():
            lines.append(f"| {name} | {ABLATIONS[name][0]} | - | (not finished) | | | | |")
            continue
        res = json.loads(path.read_text())
        rows = {r["policy"]: r for r in res["table"]}
        for policy, r in rows.items():
            label = name if policy == "qmix" else f"{name} ({policy})"
            i = r["iqm"]
            lines.append(
                f"| {label} | {ABLATIONS[name][0] if policy == 'qmix' else 'fixed policy'} | {r['runs']} | "
                f"{i['point']:.3f} [{i['low']:.3f}, {i['high']:.3f}] | {r['mean']:.3f} | {r['tokens']:.0f} | "
                f"{r['rounds']:.1f} | {res['meta']['train_s']:.0f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="+", choices=sorted(ABLATIONS), help="ablations to run (default: all, in order)")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--episodes", type=int, default=None, help="training budget (default: the protocol's)")
    p.add_argument("--parallel", type=int, default=2, help="ablations run side by side (one process each)")
    p.add_argument(
        "--out",
        default=str(ROOT / "outputs" / "ablations"),
        help="results folder (default: %(default)s; docs/benchmark/ablations regenerates the committed ones)",
    )
    p.add_argument("--table-only", action="store_true", help="only print the table of finished ablations")
    args = p.parse_args()
    names = args.only or list(ABLATIONS)
    out = Path(args.out).resolve()
    if not args.table_only:
        prepare_store()
        run_all(names, args.seeds, out, args.parallel, args.episodes)
    text = table(names, out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ablations.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
