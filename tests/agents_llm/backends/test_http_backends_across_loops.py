"""HTTP backends live across rounds, episodes and event loops (fast, stand-in servers).

The sync `step` used to run each round on a fresh event loop while the HTTP clients,
built once, kept their connection pools on the first loop: round 2 failed with
"Event loop is closed". Here a report episode runs several rounds over real HTTP to a
stand-in server, through `step` (sync), through `astep` on one loop for two episodes,
from inside a running loop (a notebook), and again through `step` afterwards; and
`train.py llm=openai` runs two episodes against the stand-in.
"""

from __future__ import annotations

import asyncio
import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from report_protocol import ActionTable
from tests.report_doubles import HASHING_JUDGE, StubRetriever, isolated_cache  # noqa: F401 (fixture)

from .standins import OllamaStandIn, OpenAIStandIn

ROOT = Path(__file__).resolve().parents[3]
T = ActionTable(4)
TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
ROUNDS = [
    {**{a: T.solo for a in TEAM}, "LeadArchitect": T.broadcast, "Researcher": T.query(0)},
    {**{a: T.solo for a in TEAM}, "DataAnalyst": T.append},
    {**{a: T.solo for a in TEAM}, "Reviewer": T.aggregate, "Researcher": T.append},
]


def report_env(llm: dict):
    from envs.report.writing import ReportWritingEnv

    return ReportWritingEnv(
        llm=llm, retriever=StubRetriever(), judge=HASHING_JUDGE, max_rounds=len(ROUNDS), min_rounds_before_terminate=1
    )


def sync_episode(env, seed=0):
    env.reset(seed=seed)
    infos = {}
    for acts in ROUNDS:
        _, _, _, _, infos = env.step(acts)
    return infos


async def async_episode(env, seed=0):
    env.reset(seed=seed)
    infos = {}
    for acts in ROUNDS:
        _, _, _, _, infos = await env.astep(acts)
    return infos


def assert_clean(env, infos):
    calls = [c for r in env.trace.rounds for c in r["calls"]]
    assert [c["error"] for c in calls if c["error"]] == []
    assert len(env.trace.rounds) == len(ROUNDS) and env.trace.end["reason"] == "truncated"
    assert infos["LeadArchitect"]["llm_errors"] == 0 and infos["LeadArchitect"]["llm_calls"] > 0
    assert env.report.chars > 0  # the appends of rounds 2 and 3 went through


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_report_episodes_over_http_on_every_kind_of_loop(kind):
    standin = OpenAIStandIn() if kind == "openai" else OllamaStandIn()
    with standin as server:
        llm = (
            {"backend": "openai", "model": "standin", "base_url": server.url}
            if kind == "openai"
            else {"backend": "ollama", "model": "qwen2.5:0.5b", "host": server.url}
        )
        env = report_env(llm)
        assert_clean(env, sync_episode(env))  # sync step, several rounds

        async def two_episodes():  # astep on one loop, two episodes
            for seed in (1, 2):
                assert_clean(env, await async_episode(env, seed))

        asyncio.run(two_episodes())

        async def notebook():  # a sync step called while a loop runs
            return sync_episode(env, 3)

        assert_clean(env, asyncio.run(notebook()))
        assert_clean(env, sync_episode(env, 4))  # and back to plain sync after all that
        assert len(server.requests) >= 5 * 3 * 3


@pytest.mark.slow
def test_train_py_runs_two_report_episodes_over_an_openai_server(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "sorting.md").write_text(
        "# Sorting networks\n\nA sorting network sorts with a fixed sequence of "
        "compare-exchange operations. Batcher's odd-even merge sort builds one.\n"
    )
    with OpenAIStandIn() as server:
        run_dir = tmp_path / "run"
        res = subprocess.run(
            [
                sys.executable,
                str(ROOT / "experiments" / "train.py"),
                "llm=openai",
                f"llm.base_url={server.url}",
                "llm.model=standin",
                "rag=hashing",
                "judge.embedding=hashing",
                f"env.corpus={docs}",
                "env.max_rounds=3",
                "train.episodes=2",
                "algo.min_updates=0",  # the plumbing, not learning
                "train.eval_episodes=1",
                "logger=csv",
                f"hydra.run.dir={run_dir}",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "QMIX_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)},
        )
        assert res.returncode == 0, res.stderr[-3000:]
        assert (run_dir / "checkpoints" / "final.pt").is_file()
        with open(run_dir / "train.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 2 and all(float(r["llm_errors"]) == 0 and float(r["llm_calls"]) > 0 for r in rows)
        assert all(float(r["length"]) >= 2 for r in rows)  # rounds 2+ ran over the same clients
        assert len(server.requests) >= 3 * 5
