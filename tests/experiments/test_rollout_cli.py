"""train.py / evaluate.py with episodes in flight (rollout.*), as a user runs them."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)

ROOT = Path(__file__).resolve().parents[2]
TRAIN = str(ROOT / "experiments" / "train.py")
EVALUATE = str(ROOT / "experiments" / "evaluate.py")
SMALL = [
    "logger=csv",
    "env=two_step",
    "algo.batch_size=8",
    "algo.learning_starts=8",
    "algo.target_update_interval=5",
    "algo.hidden_dim=16",
    "train.episodes=24",
    "train.log_every=4",
    "train.eval_every=12",
    "train.eval_episodes=3",
    "train.checkpoint_every=0",
    "logger.progress=quiet",
]


def run(args, cwd, script=TRAIN, timeout=600):
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    return subprocess.run(
        [sys.executable, script, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def train(tmp_path, name, *overrides):
    out = tmp_path / name
    proc = run([*SMALL, f"hydra.run.dir={out}", *overrides], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def final_agent(run_dir):
    return torch.load(run_dir / "checkpoints" / "final.pt", weights_only=False)["algo"]["agent"]


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def same_curves(a, b):
    keys = ("return", "length", "epsilon", "loss", "t_env")
    for ra, rb in zip(csv_rows(a), csv_rows(b), strict=True):
        assert {k: ra.get(k) for k in keys} == {k: rb.get(k) for k in keys}


@pytest.mark.slow
def test_train_gives_the_same_learner_for_one_and_four_envs(tmp_path):
    one = train(tmp_path, "one", "rollout.num_envs=1", "rollout.sync_every=4")
    four = train(tmp_path, "four", "rollout.num_envs=4")  # sync_every defaults to num_envs
    a, b = final_agent(one), final_agent(four)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    same_curves(one / "train.csv", four / "train.csv")
    same_curves(one / "eval.csv", four / "eval.csv")


@pytest.mark.slow
def test_bad_rollout_settings_fail_at_start_naming_the_setting(tmp_path):
    for override, message in (
        ("rollout.num_envs=0", "rollout.num_envs must be an integer >= 1, got 0"),
        ("rollout.sync_every=-1", "rollout.sync_every must be an integer >= 1"),
        ("rollout.workers=2", "rollout.workers=2 needs rollout.backend=ray"),
        ("rollout.backend=spark", "rollout.backend must be 'local' or 'ray'"),
    ):
        proc = run([*SMALL, f"hydra.run.dir={tmp_path / 'bad'}", override], tmp_path)
        assert proc.returncode != 0 and message in proc.stderr, (override, proc.stderr[-1500:])


@pytest.mark.slow
def test_evaluate_a_checkpoint_with_envs_in_flight_matches_the_sequential_loop(tmp_path):
    run_dir = train(tmp_path, "trained")
    metrics = []
    for n in (1, 3):
        out = tmp_path / f"eval{n}.json"
        proc = run(
            [f"checkpoint={run_dir}", "eval.episodes=5", f"eval.out={out}", f"rollout.num_envs={n}", "logger=csv"],
            tmp_path,
            script=EVALUATE,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        import json

        metrics.append(json.loads(out.read_text()))
    assert metrics[0]["metrics"] == metrics[1]["metrics"]  # greedy: no random stream involved
    assert [e["actions"] for e in metrics[0]["per_episode"]] == [e["actions"] for e in metrics[1]["per_episode"]]
