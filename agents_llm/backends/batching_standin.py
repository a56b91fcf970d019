"""A stand-in OpenAI-compatible server that behaves like a batching GPU server
(vLLM, SGLang, llama.cpp with parallel slots), for tests and experiments/timing/bench_rollout.py
(a library module, beside the ``scripted`` backend, so that a benchmark imports no test code).

TEST DOUBLE: it runs no model. Each request takes a fixed ``latency_s`` whatever the
number in flight, up to ``slots`` at once (one decoding batch); requests beyond that
queue for a free slot, as on a real server. Answers are deterministic (a hash of the
messages; with a JSON schema, its smallest instance), so a run against it replays.

    with BatchingServer(latency_s=0.5, slots=64) as server:
        llm = {"backend": "openai", "base_url": server.url, "model": "stand-in"}

It runs in its own process (``python -m agents_llm.backends.batching_standin --port P ...``), so the
client's CPU work does not slow it. ``GET /stats`` tells the requests served and the most
in flight / decoding at once; ``POST /control`` changes ``latency_s`` or makes it answer
``503`` (``{"fail": n}``: the next n requests); :meth:`BatchingServer.stop` then
:meth:`start` make it refuse connections for a while.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the project root (the server process imports from there)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _reply(messages: list[dict], response_format: dict | None, max_tokens: int) -> str:
    if response_format:
        from agents_llm.backends.scripted import minimal_instance

        schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema") or {}
        return json.dumps(minimal_instance(schema))
    convo = "\n".join(f"{m['role']}: {m['content']}" for m in messages)
    digest = hashlib.sha256(convo.encode()).hexdigest()[:8]
    words = str(messages[-1]["content"]).split()[:12]
    return " ".join(f"Stand-in reply {digest} about {' '.join(words)}.".split()[:max_tokens])


def build_app(latency_s: float, slots: int):
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    state = {
        "latency_s": float(latency_s),
        "fail": 0,
        "requests": 0,
        "in_flight": 0,
        "decoding": 0,
        "max_in_flight": 0,
        "max_decoding": 0,
    }
    decode_slots = asyncio.Semaphore(int(slots))

    async def models(request: Request):
        return JSONResponse({"object": "list", "data": [{"id": "stand-in", "object": "model", "owned_by": "tests"}]})

    async def completions(request: Request):
        body = await request.json()
        if state["fail"] > 0:
            state["fail"] -= 1
            return JSONResponse(
                {"error": {"message": "stand-in told to fail", "type": "server_error"}}, status_code=503
            )
        state["in_flight"] += 1
        state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
        try:
            async with decode_slots:  # a full batch: wait for a slot
                state["decoding"] += 1
                state["max_decoding"] = max(state["max_decoding"], state["decoding"])
                try:
                    await asyncio.sleep(state["latency_s"])
                finally:
                    state["decoding"] -= 1
        finally:
            state["in_flight"] -= 1
        state["requests"] += 1
        text = _reply(body["messages"], body.get("response_format"), int(body.get("max_tokens") or 256))
        prompt_tokens = sum(len(str(m["content"]).split()) for m in body["messages"])
        return JSONResponse(
            {
                "id": f"chatcmpl-{state['requests']}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "stand-in"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": len(text.split()),
                    "total_tokens": prompt_tokens + len(text.split()),
                },
            }
        )

    async def stats(request: Request):
        return JSONResponse({k: v for k, v in state.items()})

    async def control(request: Request):
        body = await request.json()
        for key in ("latency_s", "fail"):
            if key in body:
                state[key] = type(state[key])(body[key])
        return JSONResponse(state)

    return Starlette(
        routes=[
            Route("/v1/models", models),
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/stats", stats),
            Route("/control", control, methods=["POST"]),
        ]
    )


class BatchingServer:
    """Starts the stand-in in a subprocess on 127.0.0.1 and stops it."""

    def __init__(self, latency_s: float = 0.5, slots: int = 64, port: int | None = None):
        self.latency_s, self.slots = float(latency_s), int(slots)
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 60.0) -> "BatchingServer":
        import httpx

        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agents_llm.backends.batching_standin",
                "--port",
                str(self.port),
                "--latency",
                str(self.latency_s),
                "--slots",
                str(self.slots),
            ],
            cwd=str(ROOT),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.time() + timeout_s
        while True:
            try:
                if httpx.get(f"{self.url}/models", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                stderr = self.proc.stderr
                exited = self.proc.poll() is not None and stderr is not None
                err = stderr.read().decode()[-2000:] if exited and stderr is not None else "timed out"
                self.stop()
                raise RuntimeError(f"stand-in batching server did not start: {err}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None

    def stats(self) -> dict:
        import httpx

        return httpx.get(f"http://127.0.0.1:{self.port}/stats", timeout=5).json()

    def control(self, **changes) -> dict:
        import httpx

        return httpx.post(f"http://127.0.0.1:{self.port}/control", json=changes, timeout=5).json()

    def __enter__(self) -> "BatchingServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main() -> None:
    import uvicorn

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--latency", type=float, default=0.5, help="seconds per request, whatever the batch size")
    p.add_argument("--slots", type=int, default=64, help="requests decoded at once; more queue")
    a = p.parse_args()
    uvicorn.run(
        build_app(a.latency, a.slots),
        host="127.0.0.1",
        port=a.port,
        log_level="warning",
        backlog=2048,
        limit_concurrency=None,
    )


if __name__ == "__main__":
    main()
