"""The report env trained and evaluated in-process with ``logger=wandb``, its offline runs
decoded: episode / t_env axes, action tables keyed by the env's own action names, the
readable group with the config hash as tag, job types train and eval.

In-process on purpose: W&B's ``run.finish()`` returns before its service process has
written the run file, so a file read right after it could be a bare header; the logger's
``close()`` waits for it (algos/training/loggers.py), and this test reads the files the
moment train() and evaluate_run() return."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores in a temp cache)
from tests.algos.training.wandb_records import history_rows, offline_run_file, read_records, records_of

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow  # per case: the root config (torch, algos), W&B's service, 4+2+1 report episodes

OVERRIDES = [
    "env=report_writing",
    "llm=scripted",
    "rag=hashing",
    "judge=reference",
    "judge.embedding=hashing",
    "logger=wandb",
    "logger.tensorboard=false",
    "logger.progress=quiet",
    "algo=qmix",
    "env.max_rounds=2",
    "env.min_rounds_before_terminate=1",
    "env.summary_dim=8",
    "algo.hidden_dim=16",
    "train.episodes=4",
    "train.log_every=2",
    "train.eval_every=2",
    "train.eval_episodes=1",
    "train.checkpoint_every=0",
    "eval.episodes=1",
]


def _compose(overrides: list[str]):
    """The config a Hydra job of train.py gets, with HydraConfig set (its overrides name the group)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import open_dict

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides, return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        del cfg["hydra"]  # as Hydra hands it to the job
    return cfg


def _table(run_file: Path, row: dict, key: str) -> dict:
    assert row[f"{key}/_type"] == "table-file"  # W&B flattens a table's fields into keys of the row
    return json.loads((run_file.parent / "files" / row[f"{key}/path"]).read_text())


@pytest.fixture
def experiments_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    # Offline must come from logger=wandb itself. (setenv first, so that the logger's own
    # WANDB_MODE=offline is undone after the test as well.)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.delenv("WANDB_MODE")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # train.py rewrites it at import
    yield
    from hydra.core.hydra_config import HydraConfig

    HydraConfig.instance().cfg = None


# The sequential loop, and the concurrent runner (two episodes in flight on one event loop),
# whose episodes reach the loggers through another path.
@pytest.mark.parametrize("rollout", [[], ["rollout.num_envs=2"]], ids=["sequential", "concurrent"])
def test_report_env_train_and_eval_runs_decode_with_axes_named_action_tables_group_and_job_types(
    tmp_path, experiments_on_path, rollout
):
    import torch

    from experiments.train import make_env, train

    from algos.training.loggers import config_hash

    cfg = _compose(OVERRIDES + rollout)
    env = make_env(cfg.env)
    names = env.action_names()  # the env's own action table, read, not restated here
    agents = env.possible_agents
    assert len(names) == env.action_space(agents[0]).n and len(set(names)) == len(names)

    run_dir = tmp_path / "run"
    train(cfg, run_dir=run_dir)
    run_file = offline_run_file(run_dir)
    records = read_records(run_file)  # read at once: close() left the file complete
    run = records_of(records, "run")[0]
    ckpt = torch.load(run_dir / "checkpoints" / "final.pt", weights_only=False)
    tag = f"cfg-{config_hash(ckpt['config'])}"
    assert run.job_type == "train" and tag in run.tags
    assert run.run_group.startswith("qmix-report_writing_v0+scripted-")  # <algo>-<env>+<team>-<overrides>, readable
    # the overrides sorted; cut to W&B's 128 characters with a hash of the whole name
    assert run.run_group.startswith("qmix-report_writing_v0+scripted-algo.hidden_dim=16,env.max_rounds=2,")
    assert len(run.run_group) <= 128 and "logger" not in run.run_group and "seed" not in run.run_group

    axes = {m.glob_name or m.name: m.step_metric for m in records_of(records, "metric")}
    assert axes["train/*"] == "episode" and axes["eval/*"] == "episode" and "t_env" in axes
    rows = history_rows(records)
    train_rows = [r for r in rows if "train/return" in r]
    eval_rows = [r for r in rows if "eval/return" in r]
    assert [r["episode"] for r in train_rows] == [2, 4] and [r["episode"] for r in eval_rows] == [2, 4]
    assert all(not any(k.startswith("eval/") for k in r) for r in train_rows)  # train and eval rows apart
    assert [r["t_env"] for r in train_rows] == [r["train/t_env"] for r in train_rows]
    assert 0 < train_rows[0]["t_env"] < train_rows[1]["t_env"] <= 4 * 2  # env rounds, at most max_rounds each

    for kind, row in (("train", train_rows[0]), ("eval", eval_rows[0])):  # tables on each kind's first row
        table = _table(run_file, row, f"{kind}/actions")
        assert table["columns"] == ["agent", "action", "share"]
        shares = {(agent, action): share for agent, action, share in table["data"]}
        assert set(shares) == {(a, n) for a in agents for n in names}, kind  # every agent x every action name
        for agent in agents:
            assert sum(shares[(agent, n)] for n in names) == pytest.approx(1.0)
            for i, n in enumerate(names):  # the name labels the share logged under that index
                assert shares[(agent, n)] == pytest.approx(row[f"{kind}/act/{agent}/{i}"])
            bar = _table(run_file, row, f"{kind}/actions/{agent}_table")  # wandb.plot.bar's table
            assert [a for a, _ in bar["data"]] == names

    # evaluate.py on the checkpoint, in the same process: a run of job type eval, same group and tag
    from experiments.evaluate import evaluate_run

    ev_dir = tmp_path / "ev"
    ev_cfg = _compose(
        [
            "logger=wandb",
            "logger.tensorboard=false",
            "logger.progress=quiet",
            f"checkpoint={run_dir}",
            "eval.episodes=1",
            f"eval.out={ev_dir / 'metrics.json'}",
        ]
    )
    result = evaluate_run(ev_cfg)
    ev_file = offline_run_file(ev_dir)
    ev = read_records(ev_file)
    ev_run = records_of(ev, "run")[0]
    assert ev_run.job_type == "eval" and ev_run.run_group == run.run_group and tag in ev_run.tags
    (ev_row,) = history_rows(ev)
    assert ev_row["episode"] == 4 and ev_row["eval/return"] == pytest.approx(result["metrics"]["return"])
    table = _table(ev_file, ev_row, "eval/actions")
    assert {n for _, n, _ in table["data"]} == set(names)
    assert sys.modules["experiments.train"].__file__.startswith(str(ROOT))  # this checkout's train.py ran
