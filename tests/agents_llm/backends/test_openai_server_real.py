"""The openai backend against a real OpenAI-compatible server: llama-cpp-python's own
`llama_cpp.server`, started here on 127.0.0.1 with SmolLM2 and stopped after."""

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from agents_llm.backends.models import resolve_model
from agents_llm.backends.openai_compat import OpenAIBackend

pytestmark = pytest.mark.slow


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    port = _free_port()
    log = open(tmp_path_factory.mktemp("server") / "server.log", "w+")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(resolve_model("smollm2-135m")),
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "1",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 90
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                log.seek(0)
                pytest.fail(f"llama_cpp.server did not start: {log.read()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def test_chat_through_a_real_server(server_url):
    b = OpenAIBackend("smollm2", base_url=server_url)
    resp = asyncio.run(b.chat([{"role": "user", "content": "Name a fruit."}], max_tokens=16))
    assert resp.text.strip() and resp.prompt_tokens > 0 and 0 < resp.completion_tokens <= 16


def test_schema_through_the_server_comes_back_valid(server_url):
    schema = {
        "type": "object",
        "properties": {"fruit": {"type": "string", "maxLength": 30}, "sweet": {"type": "boolean"}},
        "required": ["fruit", "sweet"],
    }
    b = OpenAIBackend("smollm2", base_url=server_url, json_mode="json_object_schema")
    resp = asyncio.run(
        b.chat(
            [{"role": "user", "content": "Name a fruit and say if it is sweet, as JSON."}], schema=schema, max_tokens=48
        )
    )
    assert isinstance(resp.parsed["fruit"], str) and isinstance(resp.parsed["sweet"], bool)


def test_api_key_is_read_from_the_named_variable(server_url, monkeypatch):
    monkeypatch.setenv("QMIX_TEST_KEY", "sk-test-123")
    b = OpenAIBackend("smollm2", base_url=server_url, api_key_env="QMIX_TEST_KEY")
    assert b.api_key == "sk-test-123"
    assert asyncio.run(b.chat([{"role": "user", "content": "Hi"}], max_tokens=4)).text is not None


def test_multi_round_report_episode_over_the_real_server(server_url):
    """Several rounds of the report team through one backend object: the client's connection
    pool must outlive each sync step's event loop (it used to break in round 2)."""
    from report_protocol import ActionTable
    from envs.report.writing import ReportWritingEnv
    from tests.report_doubles import HASHING_JUDGE, StubRetriever

    # A two-agent team keeps the real model's calls few (each costs seconds on a CPU).
    T = ActionTable(2)
    team = ["LeadArchitect", "DataAnalyst"]
    env = ReportWritingEnv(
        team=team,
        llm={"backend": "openai", "model": "smollm2", "base_url": server_url},
        retriever=StubRetriever(),
        judge=HASHING_JUDGE,
        max_rounds=3,
        min_rounds_before_terminate=1,
        engine={"agent_max_tokens": 16, "collector_max_tokens": 32, "summary_max_tokens": 12},
    )
    env.reset(seed=0)
    for acts in (
        {a: T.solo for a in team},
        {"LeadArchitect": T.solo, "DataAnalyst": T.append},
        {"LeadArchitect": T.append, "DataAnalyst": T.solo},
    ):
        _, _, _, _, infos = env.step(acts)
    errors = [c["error"] for r in env.trace.rounds for c in r["calls"] if c["error"]]
    assert errors == [] and len(env.trace.rounds) == 3 and env.trace.end["reason"] == "truncated"
    assert infos["DataAnalyst"]["llm_calls"] > 0 and env.report.chars > 0


def test_train_py_two_report_episodes_over_the_real_server(server_url, tmp_path):
    import csv

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "sorting.md").write_text(
        "# Sorting networks\n\nA sorting network sorts with a fixed sequence of compare-exchange operations.\n"
    )
    run_dir = tmp_path / "run"
    root = Path(__file__).resolve().parents[3]
    res = subprocess.run(
        [
            sys.executable,
            str(root / "experiments" / "train.py"),
            "llm=openai",
            f"llm.base_url={server_url}",
            "llm.model=smollm2",
            "rag=hashing",
            "judge.embedding=hashing",
            f"env.corpus={docs}",
            "env.max_rounds=2",
            "env.team=[LeadArchitect,DataAnalyst]",
            "env.engine.agent_max_tokens=16",
            "env.engine.collector_max_tokens=32",
            "env.engine.summary_max_tokens=12",
            "train.episodes=2",
            "algo.min_updates=0",  # the plumbing, not learning
            "train.eval_episodes=1",
            "logger=csv",
            f"hydra.run.dir={run_dir}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "QMIX_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(root)},
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert (run_dir / "checkpoints" / "final.pt").is_file()
    with open(run_dir / "train.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 and all(float(r["llm_errors"]) == 0 and float(r["llm_calls"]) > 0 for r in rows)
