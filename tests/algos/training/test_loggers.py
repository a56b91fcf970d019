"""Loggers without W&B's process: names, groups, the CSV header, TensorBoard hparams."""

from __future__ import annotations

import csv

from algos.training.loggers import (
    CSVLogger,
    action_shares,
    config_hash,
    flat_hparams,
    group_name,
    run_tags,
)
from report_protocol.run_labels import env_label, team_label


def test_csv_header_is_stable_episode_and_t_env_first_and_later_metrics_widen_without_moving_columns(tmp_path):
    path = tmp_path / "train.csv"
    log = CSVLogger(path)
    log.log({"return": 1.0, "t_env": 4.0, "epsilon": 0.9}, 5)
    log.log({"return": 2.0, "t_env": 8.0, "epsilon": 0.5, "loss": 0.3}, 10)  # learning started: a new column
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["episode", "t_env", "return", "epsilon", "loss"]
    assert rows[1] == ["5", "4.0", "1.0", "0.9", ""] and rows[2] == ["10", "8.0", "2.0", "0.5", "0.3"]
    resumed = CSVLogger(path)  # a resumed run appends under the same header
    resumed.log({"loss": 0.1, "return": 3.0, "t_env": 12.0, "epsilon": 0.1}, 15)
    with open(path, newline="") as f:
        assert list(csv.DictReader(f))[-1] == {
            "episode": "15",
            "t_env": "12.0",
            "return": "3.0",
            "epsilon": "0.1",
            "loss": "0.1",
        }


def test_group_is_readable_the_same_for_every_seed_and_the_hash_is_a_tag():
    cfg = {"algo": {"name": "qmix", "lr": 0.001}, "env": {"name": "two_step_v0"}, "seed": 0}
    overrides = ["env=two_step", "algo.lr=0.001", "seed=3", "logger=wandb", "hydra.run.dir=/x", "plugins=[a.b]"]
    assert group_name("qmix", "two_step_v0", overrides) == "qmix-two_step_v0-algo.lr=0.001"
    assert group_name("qmix", "two_step_v0", []) == "qmix-two_step_v0"
    assert config_hash(cfg) == config_hash({**cfg, "seed": 7})  # the seed is not part of the configuration
    assert config_hash(cfg) != config_hash({**cfg, "algo": {"name": "qmix", "lr": 0.01}})
    assert f"cfg-{config_hash(cfg)}" in run_tags("qmix", "two_step_v0", cfg)
    long = [f"algo.k{i}={i}" for i in range(40)]
    name = group_name("qmix", "two_step_v0", long)
    assert len(name) <= 128 and name.startswith("qmix-two_step_v0-algo.k0=0,")  # W&B's limit
    assert name == group_name("qmix", "two_step_v0", long[::-1]) != group_name("qmix", "two_step_v0", long[1:])


def test_action_shares_and_hparams_are_read_off_the_logged_names():
    metrics = {
        "eval/act/Researcher/0": 0.25,
        "eval/act/Researcher/3": 0.75,
        "eval/act/Researcher/top": 0.75,
        "train/act/Researcher/0": 1.0,
        "eval/return": 2.0,
    }
    assert action_shares(metrics, "eval") == {"Researcher": {0: 0.25, 3: 0.75}}
    assert flat_hparams({"algo": {"lr": 1e-3, "team": ["a", "b"], "x": None}, "seed": 1}) == {
        "algo.lr": 1e-3,
        "algo.team": '["a", "b"]',
        "algo.x": "null",
        "seed": 1,
    }


def test_the_team_names_the_group_so_proxy_and_llm_runs_never_share_one():
    extractive = {"env": {"name": "report_writing_v0", "llm": {"backend": "extractive"}}, "algo": {"name": "qmix"}}
    llm = {"env": {"name": "report_writing_v0", "llm": {"backend": "llamacpp", "model": "smollm2-135m"}}}
    served = {"env": {"name": "report_writing_v0", "llm": {"backend": "openai", "model": "Qwen/Qwen2.5-7B"}}}
    versioned = {"env": {"name": "report_writing_v0", "llm": {"backend": "extractive"}, "extractive": {"version": 2}}}
    assert team_label(extractive) == "extractive" and team_label(versioned) == "extractive-v2"
    assert team_label(llm) == "smollm2-135m" and team_label(served) == "Qwen2.5-7B"
    assert team_label({"env": {"name": "two_step_v0"}}) is None
    assert env_label("two_step_v0", {"env": {"name": "two_step_v0"}}) == "two_step_v0"
    groups = {group_name("qmix", env_label("report_writing_v0", c), []) for c in (extractive, llm, versioned)}
    assert len(groups) == 3 and "qmix-report_writing_v0+extractive" in groups
    assert "team:smollm2-135m" in run_tags("qmix", "report_writing_v0", llm)
