"""Planted secrets are written nowhere, on every entry point: credentials in a URL
(user:password@, a secret-looking query parameter) are refused before anything is
written, and the API key in use is redacted from everything a run writes even when its
variable's name says nothing of a key and the server echoes it back."""

from __future__ import annotations

from pathlib import Path

import pytest

from .standins import OpenAIStandIn, free_port
from .test_failure_cli import REPORT_ENV, TRAIN, WRITE, docs, run

ROOT = Path(__file__).resolve().parents[3]
CHAT = str(ROOT / "experiments" / "chat.py")
INGEST = str(ROOT / "experiments" / "ingest.py")
QUERY = str(ROOT / "experiments" / "query.py")
KEY_VAR = "QMIX_SERVER_VALUE"  # nothing in the name says it holds a key
KEY = "zq-planted-7Hk29xLm"


def _leaks(root: Path, secret: str, *streams: str) -> list[str]:
    found = [str(p) for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    return found + [f"stream {i}" for i, s in enumerate(streams) if secret in s]


def _bad_urls(secret: str) -> list[str]:
    port = free_port()
    return [
        f"http://alice:{secret}@127.0.0.1:{port}/v1",
        f"http://127.0.0.1:{port}/v1?key={secret}",
        f"http://127.0.0.1:{port}/v1?model=x&access_token={secret}",
        f"http://127.0.0.1:{port}/v1?sig={secret}&se=2030",
    ]


@pytest.mark.parametrize(
    "which",
    [pytest.param(0, marks=pytest.mark.slow), 1, pytest.param(2, marks=pytest.mark.slow), 3],
    ids=["userinfo", "key", "access_token", "sig"],
)
@pytest.mark.slow
def test_credentials_in_a_url_are_refused_by_every_entry_point_and_written_nowhere(tmp_path, which):
    secret = f"PlantedUrlSecret{which}x9"
    url = _bad_urls(secret)[which]
    corpus = docs(tmp_path)
    calls = {
        "train": (TRAIN, ["llm=openai", f"llm.base_url='{url}'", *REPORT_ENV, "train.episodes=1"], "llm.base_url"),
        "write_report": (
            WRITE,
            ["task=Sorting networks", f"docs={corpus}", "llm=openai", f"llm.base_url='{url}'", "rag=hashing"],
            "llm.base_url",
        ),
        "chat": (CHAT, ["llm=openai", f"llm.base_url='{url}'", "prompt=hi"], "llm.base_url"),
        "ingest": (
            INGEST,
            [f"docs={corpus}", "rag.embedding.backend=ollama", f"rag.embedding.ollama.host='{url}'"],
            "rag.embedding.ollama.host",
        ),
        "query": (
            QUERY,
            ["q=sorting", "rag.embedding.backend=ollama", f"rag.embedding.ollama.host='{url}'"],
            "rag.embedding.ollama.host",
        ),
    }
    for name, (script, args, key) in calls.items():
        res = run(script, args, tmp_path, timeout=300)
        assert res.returncode == 2, (name, res.stderr[-2000:])
        assert f"{key} must not carry credentials" in res.stderr, (name, res.stderr[-2000:])
        assert _leaks(tmp_path, secret, res.stdout, res.stderr) == [], name


@pytest.mark.slow
def test_the_key_in_use_is_redacted_from_a_whole_run_whatever_its_variable_is_called(tmp_path, monkeypatch):
    """A server failing with the key in its error body: train (CSV, TensorBoard, W&B offline,
    checkpoints, traces), write_report (report, trace) and chat leave it nowhere."""
    monkeypatch.setenv(KEY_VAR, KEY)
    with OpenAIStandIn() as server:
        server.mode = "echo_key"
        common = ["llm=openai", f"llm.base_url={server.url}", f"llm.api_key_env={KEY_VAR}", "llm.retry.backoff_s=0"]
        train = run(
            TRAIN,
            [
                *common,
                *REPORT_ENV,
                f"env.corpus={docs(tmp_path)}",
                "train.episodes=1",
                "logger.tensorboard=true",
                "logger.wandb=true",
                "logger.wandb_mode=offline",
                f"hydra.run.dir={tmp_path / 'run'}",
            ],
            tmp_path,
        )
        report = run(
            WRITE,
            [
                *common,
                "task=Sorting networks",
                f"docs={docs(tmp_path)}",
                "rag=hashing",
                "judge.embedding=hashing",
                "export.pdf=false",
                f"output_root={tmp_path / 'out'}",
                f"data_root={tmp_path / 'data'}",
            ],
            tmp_path,
        )
        chat = run(CHAT, [*common, "prompt=hi", f"hydra.run.dir={tmp_path / 'chat'}"], tmp_path)
        sent = {h.get("Authorization") for h in server.headers}
    assert sent == {f"Bearer {KEY}"}  # the key was in use on every call...
    assert train.returncode == 1 and "model not loaded for caller [REDACTED]" in train.stderr, train.stderr[-3000:]
    assert report.returncode == 3 and "[REDACTED]" in report.stderr, report.stderr[-3000:]
    assert chat.returncode == 1 and "[REDACTED]" in chat.stderr, chat.stderr[-3000:]
    written = {p.relative_to(tmp_path).parts[0] for p in tmp_path.rglob("*") if p.is_file()}
    assert {"run", "out", "chat"} <= written
    assert (tmp_path / "run" / "checkpoints" / "last.pt").is_file() and (tmp_path / "run" / "tensorboard").is_dir()
    assert list((tmp_path / "out").glob("*/trace.json")) and list((tmp_path / "out").glob("*/report.md"))
    # ...and is written nowhere: configs, logs, traces, reports, checkpoints, TensorBoard, W&B, consoles
    streams = [r.stdout + r.stderr for r in (train, report, chat)]
    assert _leaks(tmp_path, KEY, *streams) == []
