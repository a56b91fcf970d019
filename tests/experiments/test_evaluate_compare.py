"""evaluate.py eval.compare: the fixed policies on the same held-out episodes, one table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ["handcrafted", "preset:solo", "preset:star", "preset:chain", "preset:full", "preset:ring", "random"]


def test_parse_entry():
    from experiments.compare_policies import parse_entry

    assert parse_entry("preset:ring") == ("preset:ring", "preset", {"topology": "ring"})
    assert parse_entry("handcrafted:skip_strategy=always_include;rounds.drafting=4") == (
        "handcrafted:skip_strategy=always_include;rounds.drafting=4",
        "handcrafted",
        {"skip_strategy": "always_include", "rounds.drafting": 4},
    )
    with pytest.raises(KeyError, match="unknown algorithm 'nope'"):
        parse_entry("nope")


@pytest.mark.slow
def test_evaluate_compares_every_fixed_policy_in_one_table(tmp_path):
    out = tmp_path / "eval" / "metrics.json"
    env = dict(os.environ, QMIX_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "experiments" / "evaluate.py"),
            "env=report_writing",
            "llm=scripted",
            "rag=hashing",
            "judge=reference",
            "judge.embedding=hashing",
            "algo=handcrafted",
            "algo.rounds={planning: 1, research: 1, drafting: 2, review: 1, revision: 2}",
            "env.max_rounds=8",
            "eval.episodes=1",
            f"eval.compare=[{','.join(POLICIES)}]",
            f"eval.out={out}",
            "logger.wandb=false",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((out.parent / "comparison.json").read_text())
    assert [r["policy"] for r in result["rows"]] == POLICIES
    assert result["split"] == "holdout"
    tasks = {r["per_episode"][0]["task"] for r in result["rows"]}
    assert len(tasks) == 1, "every policy plays the same held-out episode"
    for row in result["rows"]:
        m = row["metrics"]
        assert {"report_score", "length_score", "tokens", "length"} <= set(m), row["policy"]
        assert m["tokens"] > 0 and 1 <= m["length"] <= 8
        # the referee's flags per episode, in all and per kind
        assert {"referee/report_flags", "referee/agent_flags", "referee/repetition"} <= set(m), row["policy"]
    by = {r["policy"]: r for r in result["rows"]}
    assert by["preset:ring"]["config"]["topology"] == "ring"
    assert by["handcrafted"]["config"]["rounds"]["drafting"] == 2  # the composed algo shapes its row
    md = (out.parent / "comparison.md").read_text()
    assert "| policy | report score | length score | tokens | rounds |" in md
    assert "at a budget of 8 rounds" in md and "| report flags | output flags |" in md
    assert all(f"| {p} |" in md for p in POLICIES)


def test_the_default_evaluation_plays_each_held_out_task_once():
    """eval.episodes: null is one repetition of the held-out tasks (20 episodes on 12 tasks left 8
    out of the interval); an env without tasks keeps 20."""
    from hydra import compose, initialize_config_dir

    import experiments.evaluate as evaluate
    from envs.report.tasks import load_tasks

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        report = compose(config_name="config", overrides=["env=report_writing_extractive"])
        game = compose(config_name="config", overrides=["env=two_step"])
        pinned = compose(config_name="config", overrides=["env=report_writing", "env.task_id=sqlite"])
    assert report.eval.episodes is None
    assert evaluate.default_eval_episodes(report.env) == len(load_tasks(None, "holdout")) == 12
    assert evaluate.default_eval_episodes(game.env) == 20
    assert evaluate.default_eval_episodes(pinned.env) == 1


def _compose(*overrides: str):
    from hydra import compose, initialize_config_dir

    import experiments.evaluate  # noqa: F401 (registers the structured configs the defaults name)

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def test_compare_runs_llama_cpp_policies_on_two_model_processes_without_a_flag(monkeypatch):
    """eval.compare of an in-process llama.cpp env on 2 cores: one model process per policy, two at
    once; one policy, another backend, or rollout.auto_workers=false keep one process."""
    import experiments.compare_policies as compare

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    llm_team = _compose("env=report_writing", "eval.compare=[handcrafted,random]")
    assert llm_team.env.llm.backend == "llamacpp" and llm_team.env.llm.n_threads == 1
    assert compare.compare_workers(llm_team, 2) == 2
    assert compare.compare_workers(llm_team, 1) == 1, "one policy: one process with the threads it is given"
    off = _compose("env=report_writing", "rollout.auto_workers=false")
    assert compare.compare_workers(off, 6) == 1
    proxy = _compose("env=report_writing_extractive")
    assert compare.compare_workers(proxy, 6) == 1, "no model: nothing to spread"
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert compare.compare_workers(llm_team, 6) == 1


@pytest.mark.slow
def test_compare_on_two_processes_gives_the_same_table_as_one(tmp_path, isolated_cache):  # noqa: F811
    """Each policy's episodes run in order in one process (random's stream runs on from episode to
    episode), so two worker processes give exactly the sequential rows."""
    import experiments.compare_policies as compare
    from algos.training.env_configs import make_env

    cfg = _compose(
        "env=report_writing_extractive",
        "rag=hashing",
        "judge.embedding=hashing",
        "env.max_rounds=3",
        "eval.episodes=2",
        "eval.compare=[random,preset:ring]",
    )
    one = compare.compare_policies(cfg, make_env, tmp_path / "one", workers=1)
    two = compare.compare_policies(cfg, make_env, tmp_path / "two", workers=2)

    def played(result):
        return [
            [(e["task"], round(e["report_score"], 6), e["tokens"], e["length"]) for e in row["per_episode"]]
            for row in result["rows"]
        ]

    assert played(one) == played(two)
    assert len({e[0] for e in played(one)[0]}) == 2, "two seeds, two tasks"
