"""The llamacpp_server preset against the real llama_cpp.server (SmolLM2) on 127.0.0.1,
two report episodes in flight through evaluate.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents_llm.backends.test_openai_server_real import server_url  # noqa: F401 (fixture: starts the real server)
from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(1200)
def test_two_episodes_in_flight_against_the_real_server(server_url, tmp_path):  # noqa: F811
    out = tmp_path / "metrics.json"
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "experiments" / "evaluate.py"),
            "llm=llamacpp_server",
            f"llm.base_url={server_url}",
            "llm.model=smollm2",
            "llm.server_slots=1",
            "llm.max_concurrent_requests=2",
            "rag=hashing",
            "judge.embedding=hashing",
            "algo=preset",
            "algo.topology=star",
            "algo.append_every=1",
            "env.max_rounds=1",
            "env.team=[LeadArchitect,DataAnalyst]",
            "env.engine.agent_max_tokens=16",
            "env.engine.collector_max_tokens=24",
            "env.engine.summary_max_tokens=16",
            "eval.episodes=2",
            "rollout.num_envs=2",
            f"eval.out={out}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1100,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert len(result["per_episode"]) == 2 and "dropped" not in proc.stderr
    assert all(e["tokens"] > 0 for e in result["per_episode"])  # the server really answered both episodes
    # two in flight against a one-slot server: warned once, naming the settings
    assert "llm.server_slots=1" in proc.stderr and "llm.max_concurrent_requests" in proc.stderr
