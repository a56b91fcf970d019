"""Every multirun folder gets a summary table, and benchmark.py aggregates a multirun of any env."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRAIN = str(ROOT / "experiments" / "train.py")
BENCHMARK = str(ROOT / "experiments" / "protocol" / "benchmark.py")
SUMMARIZE = str(ROOT / "experiments" / "summarize.py")
# Two seeds of QMIX on the two-step game, enough episodes for gradient updates (seconds each).
TWO_STEP = [
    "env=two_step",
    "algo=qmix",
    "train.episodes=60",
    "algo.target_update=soft",
    "logger=csv",
    "logger.progress=quiet",
]


def run(script, args, cwd):
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, script, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow  # two train.py runs of the two-step game, then benchmark.py over them (~40 s)
def test_a_two_step_multirun_gets_a_summary_and_benchmark_aggregates_it(tmp_path):
    sweep = tmp_path / "sweep"
    done = run(TRAIN, ["-m", *TWO_STEP, "seed=0,1", f"hydra.sweep.dir={sweep}"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    # The multirun's own summary, written when it ended: one configuration, both seeds, the return.
    with open(sweep / "summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1
    row = rows[0]
    assert (row["group"], row["env"], row["metric"], row["runs"], row["seeds"]) == (
        "qmix",
        "two_step_v0",
        "return",
        "2",
        "0 1",
    )
    assert float(row["low"]) <= float(row["iqm"]) <= float(row["high"])
    assert "| qmix | two_step_v0 |" in (sweep / "summary.md").read_text()
    assert "multirun summary:" in done.stdout

    # Its training curves over the two seeds (mean and band).
    plots = run(str(ROOT / "experiments" / "visualize.py"), [f"logs={sweep}"], tmp_path)
    assert plots.returncode == 0, plots.stderr[-2000:]
    assert (sweep / "plots" / "training_curves_seeds.png").is_file()

    # The summary command gives the same table for a folder.
    again = run(SUMMARIZE, [str(sweep)], tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "| qmix | two_step_v0 |" in again.stdout

    # benchmark.py over it: the runs' env (not the report env), no tasks, the return, the fixed policies that fit.
    out = tmp_path / "bench"
    bench = run(
        BENCHMARK,
        [f"benchmark.multirun={sweep}", f"benchmark.out={out}", "benchmark.workers=1", "benchmark.reps=200"],
        tmp_path,
    )
    assert bench.returncode == 0, bench.stderr[-3000:]
    result = json.loads((out / "results.json").read_text())
    assert result["score"] == "return" and result["tasks"] == ["-"]
    table = {r["policy"]: r for r in result["table"]}
    assert set(table) == {"qmix", "random"}  # handcrafted and the presets need the report env
    assert table["qmix"]["runs"] == 2 and table["random"]["runs"] == 5
    assert "fixed policy handcrafted left out" in bench.stdout
    assert "No tasks (a matrix game)" in (out / "results.md").read_text()


def _rows(policy, kind, scores):
    """Benchmark episode rows: scores[run][task]."""
    return [
        {
            "policy": policy,
            "kind": kind,
            "run": run,
            "task": task,
            "report_score": score,
            "return": score,
            "tokens": 100.0,
            "rounds": 4,
            "seconds": 0.1,
        }
        for run, per_task in enumerate(scores)
        for task, score in zip(("sqlite", "json"), per_task)
    ]


def test_the_report_env_benchmark_has_a_per_task_table():
    from experiments.protocol.benchmark import BenchmarkConfig, aggregate, markdown

    rows = _rows("qmix", "learner", [[0.6, 0.2], [0.8, 0.4]]) + _rows("random", "fixed", [[0.1, 0.3], [0.3, 0.1]])
    result = aggregate(rows, {}, BenchmarkConfig(score="report_score", reps=100), ["sqlite", "json"])
    table = {r["policy"]: r for r in result["table"]}
    assert table["qmix"]["per_task"] == pytest.approx([0.7, 0.3])
    assert table["random"]["per_task"] == pytest.approx([0.2, 0.2])
    meta = dict(title="t", reps=100, command="c", wall_s=1, train_s=0, eval_s=1, workers=1, sweep="s")
    text = markdown(result, meta)
    assert "## Per task" in text
    assert "| policy | sqlite | json |" in text and "| qmix | 0.700 | 0.300 |" in text


def _finished_run(folder, seed, lr, score):
    """A report-env run as train.py leaves it: config, final checkpoint, final evaluation row."""
    from omegaconf import OmegaConf

    folder.mkdir(parents=True)
    config = {
        "seed": seed,
        "algo": {"name": "qmix", "lr": lr},
        "env": {"name": "report_writing_v0", "llm": {"backend": "extractive"}, "extractive": {"version": 2}},
        "sweep": {"metric": "auto"},
    }
    OmegaConf.save(OmegaConf.create(config), folder / "config.yaml")
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "final.pt").write_bytes(b"")
    (folder / "eval.csv").write_text(f"episode,t_env,return,report_score\n10,80,{score + 1.0},{score}\n")


def test_a_report_env_multirun_summary_groups_configs_on_the_report_score(tmp_path):
    from experiments.summarize import summarize

    for i, (seed, lr, score) in enumerate([(0, 0.001, 0.4), (1, 0.001, 0.6), (0, 0.01, 0.2), (1, 0.01, 0.3)]):
        _finished_run(tmp_path / f"{i}_job", seed, lr, score)
    summary = summarize(tmp_path, reps=200)
    rows = {r["settings"]: r for r in summary.rows}
    assert set(rows) == {"algo.lr=0.001", "algo.lr=0.01"}  # what tells the two configurations apart
    best = rows["algo.lr=0.001"]
    assert (
        best["metric"] == "report_score"
        and best["values"] == [0.4, 0.6]
        and best["env"] == ("report_writing_v0+extractive-v2")
    )
    assert best["low"] <= best["iqm"] <= best["high"] and best["iqm"] == pytest.approx(0.5)
    assert summary.rows[0] is best  # best first
    text = (tmp_path / "summary.md").read_text()
    assert "| qmix@" in text and "algo.lr=0.01 | report_score | 2 |" in text


def test_the_summary_callback_never_fails_a_sweep(tmp_path, capsys):
    from omegaconf import OmegaConf

    from experiments.summarize import MultirunSummaryCallback

    MultirunSummaryCallback().on_multirun_end(OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}}))
    assert "no finished train.py run" in capsys.readouterr().err
