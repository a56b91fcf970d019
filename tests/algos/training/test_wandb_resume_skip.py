"""A resumed W&B run skips the episodes its earlier offline segments hold (real W&B, offline).

The end-to-end case (train.py killed past its checkpoint, then resumed) is
test_wandb_offline_run.py::test_a_resumed_run_logs_each_replayed_episode_to_wandb_once (slow);
here the reader and the logger in-process: what a segment holds, read back from its file,
also when a kill cut the file in a record, and a second segment that sends only the rest."""

from __future__ import annotations

import time
from pathlib import Path

from algos.training.loggers import RunLoggers
from algos.training.wandb_history import logged_episodes, read_records
from tests.algos.training.wandb_records import history_rows, offline_run_files


def _cfg():
    from omegaconf import OmegaConf

    return OmegaConf.create(
        {
            "algo": {"name": "random"},
            "env": {"name": "two_step"},
            "seed": 0,
            "logger": {
                "tensorboard": False,
                "wandb": True,
                "wandb_mode": "offline",
                "wandb_project": "test",
                "wandb_entity": None,
            },
        }
    )


def _episodes(file: Path) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for row in history_rows(read_records(file)):
        for key in row:
            if key.endswith("/return"):
                out.setdefault(key.split("/")[0], []).append(int(row["episode"]))
    return out


def test_a_second_segment_sends_only_the_episodes_w_and_b_does_not_hold(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_MODE", raising=False)  # offline comes from the logger config
    run_dir = tmp_path / "run"
    first = RunLoggers(_cfg(), run_dir)
    for episode in range(1, 7):
        first.log("train", {"return": float(episode)}, episode)
    first.log("eval", {"return": 4.0}, 4)
    first.close()
    run_id = first.wandb_id
    assert run_id is not None
    assert logged_episodes(run_dir, run_id) == {"train": 6, "eval": 4}

    time.sleep(1.1)  # W&B names a segment's folder by the second it started
    second = RunLoggers(_cfg(), run_dir, wandb_id=run_id, resume_episode=3)  # replays 4..6
    assert second.wandb_id == run_id
    for episode in range(4, 9):
        second.log("train", {"return": float(episode)}, episode)
    for episode in (4, 8):
        second.log("eval", {"return": float(episode)}, episode)
    second.close()
    files = offline_run_files(run_dir)
    assert len(files) == 2
    assert _episodes(files[0]) == {"train": [1, 2, 3, 4, 5, 6], "eval": [4]}
    assert _episodes(files[1]) == {"train": [7, 8], "eval": [8]}
    assert logged_episodes(run_dir, run_id) == {"train": 8, "eval": 8}


def test_a_file_cut_by_a_kill_holds_the_rows_before_the_cut_and_a_foreign_file_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_MODE", raising=False)
    run_dir = tmp_path / "run"
    loggers = RunLoggers(_cfg(), run_dir)
    for episode in range(1, 31):
        loggers.log("train", {"return": float(episode), "note": "x" * 200}, episode)
    loggers.close()
    run_id = loggers.wandb_id
    assert run_id is not None
    [file] = offline_run_files(run_dir)
    data = file.read_bytes()
    seen = set()
    for cut in range(len(data) // 4, len(data), max(1, len(data) // 40)):
        file.write_bytes(data[:cut])
        held = logged_episodes(run_dir, run_id).get("train", 0)
        assert 0 <= held <= 30
        seen.add(held)
    assert len(seen) > 3  # the cuts landed among the rows: fewer are held the earlier the cut
    file.write_bytes(data)
    assert logged_episodes(run_dir, run_id) == {"train": 30}
    file.write_bytes(b"not a W&B file")
    assert logged_episodes(run_dir, run_id) == {}
