"""A W&B offline run is complete on disk when its logger's close() returns, in-process.

W&B's run.finish() returns before its service process has written the run file (a bare
7-byte header was read right after finish() in 1 of 4 in-process runs); RunLoggers.close()
waits for it. A few runs in a row, each read the moment close() returns, catch the race."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.envs.interop.conftest import report_env
from tests.report_doubles import isolated_cache  # noqa: F401 (fixture)
from tests.algos.training.wandb_records import history_rows, read_records

RUNS = 3


def test_each_run_file_holds_its_row_and_the_report_envs_action_names_when_close_returns(tmp_path, monkeypatch):
    from omegaconf import OmegaConf

    from algos.training.loggers import RunLoggers, env_action_names
    from algos.training.rollout import action_distribution

    monkeypatch.setenv("WANDB_MODE", "offline")  # recorded, so that the logger's own setting is undone too
    monkeypatch.delenv("WANDB_MODE")  # offline comes from the logger config
    env = report_env()
    names = env_action_names(env, env.action_space(env.possible_agents[0]).n)
    assert names == env.action_names()
    agent = env.possible_agents[1]
    cfg = OmegaConf.create(
        {
            "algo": {"name": "random"},
            "env": {"name": "report_writing_v0"},
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
    for run in range(RUNS):
        counts = np.zeros((len(env.possible_agents), len(names)), np.int64)
        counts[1, run] = 3  # a different action per run: the table read back is this run's
        counts[1, names.index("append")] = 1
        loggers = RunLoggers(cfg, tmp_path / f"r{run}", action_names=names, kinds=("eval",), job_type="eval")
        loggers.log("eval", {"return": float(run), **action_distribution(counts, env.possible_agents)}, 7 + run)
        loggers.close()
        (run_file,) = (tmp_path / f"r{run}").glob("wandb/offline-run-*/run-*.wandb")
        rows = history_rows(read_records(run_file))  # no wait: close() promised a complete file
        assert len(rows) == 1, f"run {run}: {len(rows)} history rows in {run_file.stat().st_size} bytes"
        row = rows[0]
        assert row["episode"] == 7 + run and row["eval/return"] == run
        media = json.loads((run_file.parent / "files" / row["eval/actions/path"]).read_text())
        shares = {(a, n): s for a, n, s in media["data"]}
        assert shares[(agent, names[run])] == pytest.approx(0.75) and shares[(agent, "append")] == pytest.approx(0.25)
        assert {n for _, n, _ in media["data"]} == set(names)
