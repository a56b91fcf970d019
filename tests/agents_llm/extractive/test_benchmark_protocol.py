"""experiments/protocol/benchmark.py on a tiny budget writes every file of its results folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents_llm.extractive.conftest import TASK

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_tiny_protocol_writes_every_result_file(tmp_path, corpus, isolated_cache):
    from experiments.protocol.benchmark import RESULT_FILES

    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps(
            {
                "tasks": [
                    dict(TASK, id="ssb-train"),
                    dict(TASK, id="ssb-a", split="holdout"),
                    dict(TASK, id="ssb-b", split="holdout", topic="Dendrites in batteries"),
                ]
            }
        )
    )
    out = tmp_path / "results"
    overrides = [
        "env=report_writing_extractive",
        "rag=hashing",
        "judge.embedding=hashing",
        f"env.corpus={corpus}",
        f"env.tasks={tasks}",
        "env.max_rounds=4",
    ]
    cmd = [
        sys.executable,
        str(ROOT / "experiments" / "protocol" / "benchmark.py"),
        "benchmark.seeds=[0,1]",
        "benchmark.train_episodes=3",
        "benchmark.log_every=1",
        "benchmark.fixed=[handcrafted,preset:chain,random]",
        "benchmark.fixed_runs=2",
        "benchmark.workers=1",
        "benchmark.reps=200",
        f"benchmark.out={out}",
        f"benchmark.ship={tmp_path / 'shipped'}",
        "benchmark.overrides=[" + ",".join(f"'{o}'" for o in overrides) + "]",
        "benchmark.train_overrides=['algo.batch_size=2','algo.learning_starts=2','algo.target_update=soft']",
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT), QMIX_CACHE_DIR=str(isolated_cache))
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for name in RESULT_FILES:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    result = json.loads((out / "results.json").read_text())
    policies = {r["policy"]: r for r in result["table"]}
    assert set(policies) == {"qmix", "vdn", "iql", "handcrafted", "preset:chain", "random"}
    assert all(policies[p]["runs"] == 2 and policies[p]["tasks"] == 2 for p in policies)
    assert result["best_fixed"] in {"handcrafted", "preset:chain", "random"}
    assert all("p_improvement" in r for p, r in policies.items() if p != result["best_fixed"])
    assert set(result["curves"]) == {"qmix", "vdn", "iql"}
    shipped = tmp_path / "shipped"
    assert {p.name for p in shipped.iterdir()} == {"CARD.md", "config.yaml", "final.pt", "heldout.json"}
    assert "IQM" in (shipped / "CARD.md").read_text()
    md = (out / "results.md").read_text()
    assert "| qmix | learner | 2 |" in md and "learning_curves.png" in md
