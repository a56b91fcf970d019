"""What a researcher sees in W&B, read back from the offline run files W&B would upload."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.algos.training.wandb_records import (
    history_rows,
    offline_run_file,
    offline_run_files,
    read_records,
    records_of,
)

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow  # W&B's service process and two train/evaluate subprocesses

SMALL = [
    "env=two_step",
    "algo.batch_size=8",
    "algo.learning_starts=8",
    "algo.target_update_interval=5",
    "algo.hidden_dim=16",
    "algo.lr=0.002",
    "train.episodes=20",
    "train.log_every=5",
    "train.eval_every=10",
    "train.eval_episodes=2",
]


def _run(script: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("WANDB_MODE", None)  # offline must come from logger=wandb itself
    return subprocess.run(
        [sys.executable, str(ROOT / "experiments" / script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_train_and_eval_runs_decode_with_episode_axes_readable_group_job_types_and_named_actions(tmp_path):
    run_dir = tmp_path / "run"
    res = _run("train.py", ["logger=wandb", *SMALL, f"hydra.run.dir={run_dir}"], tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert not [line for line in res.stderr.splitlines() if "wandb:" in line]  # W&B stays off the console

    records = read_records(offline_run_file(run_dir))
    run = records_of(records, "run")[0]
    ckpt = torch.load(run_dir / "checkpoints" / "final.pt", weights_only=False)
    from algos.training.loggers import config_hash

    assert run.run_group.startswith("qmix-two_step_v0-algo.batch_size=8,") and "algo.lr=0.002" in run.run_group
    assert "seed" not in run.run_group and len(run.run_group) <= 128
    assert f"cfg-{config_hash(ckpt['config'])}" in run.tags and run.job_type == "train"
    axes = {m.glob_name or m.name: m.step_metric for m in records_of(records, "metric")}
    assert axes["train/*"] == "episode" and axes["eval/*"] == "episode" and "t_env" in axes

    rows = history_rows(records)
    train_rows = [r for r in rows if "train/return" in r]
    eval_rows = [r for r in rows if "eval/return" in r]
    assert [r["episode"] for r in train_rows] == [5, 10, 15, 20]
    assert [r["episode"] for r in eval_rows] == [10, 20]
    assert all(not any(k.startswith("eval/") for k in r) for r in train_rows)  # rows are not mixed
    assert [r["t_env"] for r in train_rows] == [r["train/t_env"] for r in train_rows]

    # action tables by name (two_step has no names: its indices), the bar chart per agent
    assert eval_rows[-1]["eval/actions/_type"] == "table-file"  # W&B flattens a table's fields into keys
    media = json.loads((offline_run_file(run_dir).parent / "files" / eval_rows[-1]["eval/actions/path"]).read_text())
    assert media["columns"] == ["agent", "action", "share"]
    shares = {(agent, action): share for agent, action, share in media["data"]}
    assert set(shares) == {(a, n) for a in ("agent_0", "agent_1") for n in ("0", "1")}
    assert shares[("agent_0", "1")] == pytest.approx(eval_rows[-1]["eval/act/agent_0/1"])
    assert eval_rows[-1]["eval/actions/agent_0_table/_type"] == "table-file"  # wandb.plot.bar's table

    # the same names in TensorBoard (with hparams) and in the CSV header
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import plugin_data_pb2

    with open(run_dir / "train.csv", newline="") as f:
        header = next(csv.reader(f))
    assert header[:2] == ["episode", "t_env"]
    tb = EventAccumulator(str(run_dir / "tensorboard"))
    tb.Reload()
    assert {f"train/{c}" for c in header[1:]} <= set(tb.Tags()["scalars"])
    start = plugin_data_pb2.HParamsPluginData.FromString(
        tb.PluginTagToContent("hparams")["_hparams_/session_start_info"]
    )
    assert start.session_start_info.hparams["algo.lr"].number_value == pytest.approx(0.002)

    # evaluate.py: a run of job type eval in the same group
    res = _run(
        "evaluate.py",
        [f"checkpoint={run_dir}", "logger=wandb", "eval.episodes=2", f"eval.out={tmp_path / 'ev' / 'metrics.json'}"],
        tmp_path,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    ev = read_records(offline_run_file(tmp_path / "ev"))
    ev_run = records_of(ev, "run")[0]
    assert ev_run.job_type == "eval" and ev_run.run_group == run.run_group
    assert f"cfg-{config_hash(ckpt['config'])}" in ev_run.tags  # the trained configuration's hash
    ev_rows = history_rows(ev)
    assert ev_rows[0]["episode"] == 20 and "eval/return" in ev_rows[0]


def _episodes_by_kind(files: list[Path]) -> dict[str, list[int]]:
    """{kind: the episode of every row W&B holds of that kind}, over all the run's segments."""
    from algos.training.wandb_history import row_kinds

    out: dict[str, list[int]] = {"train": [], "eval": []}
    for file in files:
        for row in history_rows(read_records(file)):
            for kind in row_kinds(row):
                out.setdefault(kind, []).append(int(row["episode"]))
    return out


def test_a_resumed_run_logs_each_replayed_episode_to_wandb_once(tmp_path):
    """A kill -9 after the last periodic checkpoint leaves W&B rows of episodes the resumed
    run replays (as for train.csv in tests/experiments/test_train_cli.py): the W&B run, both
    its offline segments together, holds every train and eval episode once."""
    import shutil

    run_dir = tmp_path / "run"
    common = [
        "logger=wandb",
        *SMALL,
        "train.log_every=1",
        "train.eval_every=4",
        "train.eval_episodes=1",
        f"hydra.run.dir={run_dir}",
    ]
    res = _run("train.py", [*common, "train.episodes=12", "train.checkpoint_every=5"], tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    [first] = offline_run_files(run_dir)
    assert _episodes_by_kind([first]) == {"train": list(range(1, 13)), "eval": [4, 8, 12]}
    # what a kill -9 during episode 13 leaves: last.pt from episode 10, W&B rows up to 12, no final.pt
    ckpt_dir = run_dir / "checkpoints"
    shutil.copy(ckpt_dir / "ep_000010.pt", ckpt_dir / "last.pt")
    (ckpt_dir / "final.pt").unlink()

    res = _run("train.py", [f"resume={run_dir}", "train.episodes=15"], tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "from episode 10" in res.stdout
    files = offline_run_files(run_dir)
    assert len(files) == 2 and files[0] == first  # the same W&B run id, a second segment
    assert len({f.name for f in files}) == 1
    assert _episodes_by_kind(files) == {"train": list(range(1, 16)), "eval": [4, 8, 12, 15]}
    # the resumed segment starts where W&B's rows stopped, not at the checkpoint
    assert _episodes_by_kind(files[1:]) == {"train": [13, 14, 15], "eval": [15]}
    train_csv = [int(r["episode"]) for r in csv.DictReader(open(run_dir / "train.csv", newline=""))]
    assert train_csv == list(range(1, 16))
