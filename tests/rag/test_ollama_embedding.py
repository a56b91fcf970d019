"""OllamaEmbedding against a local stand-in that speaks /api/embed on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from rag import ingest_paths, open_store
from rag.ollama_embedding import EmbeddingRejectedError, EmbeddingServerError, OllamaEmbedding
from tests.rag.conftest import make_rag_cfg


class StandIn:
    """Rejects batches over `max_batch` (400), inputs over `max_chars` or containing
    `poison` (500, like Ollama's context-length error), and answers 503 to the first
    `transient_failures` requests."""

    def __init__(self, max_batch=1000, max_chars=10_000, poison=None, transient_failures=0):
        self.max_batch, self.max_chars, self.poison = max_batch, max_chars, poison
        self.transient_failures = transient_failures
        self.requests: list = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, payload = stand_in.answer(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, path, body):
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        self.requests.append(list(inputs))
        if path != "/api/embed":
            return 404, {"error": "not found"}
        if self.transient_failures > 0:
            self.transient_failures -= 1
            return 503, {"error": "server busy"}
        if len(inputs) > self.max_batch:
            return 400, {"error": f"batch of {len(inputs)} exceeds {self.max_batch}"}
        for text in inputs:
            if len(text) > self.max_chars or (self.poison and self.poison in text):
                return 500, {"error": "the input length exceeds the context length"}
        vectors = [[float(len(text)), float(text.count("a")) + 1.0, 1.0] for text in inputs]
        return 200, {"model": body["model"], "embeddings": vectors}

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _embedding(host, **kwargs):
    kwargs.setdefault("retry_wait_s", 0.01)
    return OllamaEmbedding(host=host, model="stand-in", **kwargs)


def test_batches_are_sent_together_and_normalised():
    with StandIn() as server:
        vectors = _embedding(server.host, batch_size=4).embed_documents([f"text {i}" for i in range(10)])
    assert [len(batch) for batch in server.requests] == [4, 4, 2]
    assert vectors.shape == (10, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


def test_rejected_batch_is_embedded_chunk_by_chunk_and_only_the_failing_chunk_is_truncated():
    texts = ["short one", "x" * 500, "short three", "short four"]
    with StandIn(max_batch=2, max_chars=120) as server:
        embedding = _embedding(server.host, batch_size=4)
        vectors = embedding.embed_documents(texts)
    assert vectors.shape == (4, 3)
    assert server.requests[0] == texts  # the whole batch first
    singles = [batch[0] for batch in server.requests[1:]]
    for text in ("short one", "short three", "short four"):
        assert singles.count(text) == 1  # embedded whole, once
    long_attempts = [text for text in singles if text.startswith("x")]
    assert [len(text) for text in long_attempts] == [500, 250, 125, 62]
    assert embedding.stats.rejected_batches == 1
    assert [(t.index, t.original_chars, t.kept_chars) for t in embedding.stats.truncations] == [(1, 500, 62)]


def test_transient_failures_are_retried():
    with StandIn(transient_failures=2) as server:
        embedding = _embedding(server.host, max_retries=3)
        vectors = embedding.embed_documents(["alpha", "beta"])
    assert vectors.shape == (2, 3) and len(server.requests) == 3


def test_server_that_stays_busy_gives_a_clear_error():
    with StandIn(transient_failures=100) as server:
        with pytest.raises(EmbeddingServerError, match=r"127\.0\.0\.1.*kept failing.*server busy"):
            _embedding(server.host, max_retries=2).embed_documents(["alpha"])
    assert len(server.requests) == 3


def test_no_server_fails_fast_naming_the_endpoint():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.perf_counter()
    with pytest.raises(
        EmbeddingServerError, match=rf"cannot reach Ollama embed endpoint http://127.0.0.1:{port}/api/embed"
    ):
        _embedding(f"http://127.0.0.1:{port}", max_retries=1).embed_documents(["alpha"])
    assert time.perf_counter() - started < 5


def test_chunk_that_never_fits_is_reported_and_its_file_skipped(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text("a perfectly normal document")
    (docs / "bad.txt").write_text("POISON from the very first words on")
    with StandIn(poison="POISON", max_batch=8) as server:
        with pytest.raises(EmbeddingRejectedError, match="rejected input 0"):
            _embedding(server.host, min_truncated_chars=8).embed_documents(["POISON pill " * 4])
        cfg = make_rag_cfg(
            tmp_path / "store",
            embedding__backend="ollama",
            embedding__ollama__host=server.host,
            embedding__ollama__retry_wait_s=0.01,
            embedding__ollama__min_truncated_chars=30,
        )
        store = open_store(cfg)
        report = ingest_paths(store, docs)
    assert report.ingested == [str(docs / "good.txt")]
    reason = report.skip_reason(docs / "bad.txt")
    assert reason.startswith("embedding failed:") and "the input length exceeds the context length" in reason
    assert len(store) == 1 and store.consistency_problems() == []


def test_truncated_chunks_are_reported_per_file(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.txt").write_text(" ".join(f"word{i}" for i in range(120)))
    (docs / "short.txt").write_text("brief note")
    with StandIn(max_chars=300) as server:
        cfg = make_rag_cfg(
            tmp_path / "store",
            embedding__backend="ollama",
            embedding__ollama__host=server.host,
            embedding__ollama__retry_wait_s=0.01,
        )
        report = ingest_paths(open_store(cfg), docs)
    assert len(report.ingested) == 2
    assert len(report.warnings) == 1
    assert report.warnings[0].startswith(f"{docs / 'long.txt'}: a chunk was truncated from ")
