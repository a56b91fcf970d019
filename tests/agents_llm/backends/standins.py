"""Local stand-ins for LLM servers, on 127.0.0.1 in a thread of the test process.

`OpenAIStandIn` speaks the OpenAI chat-completions protocol, `OllamaStandIn` Ollama's
/api/chat. Both record what they were sent and can be told to misbehave (`mode`), the
way a proxy, a crashed worker or a half-configured server does in real deployments.
They run their own event loop in their own thread, so a client in the test may use as
many event loops as it likes: exactly what the backends must survive.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading

from aiohttp import web


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _StandIn:
    routes: dict = {}

    def __init__(self):
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.mode = "ok"
        self.fail_next: list[int] = []  # HTTP statuses to answer before behaving
        self.fail_when: str | None = None  # answer 500 to requests whose messages contain this text
        self.loop = asyncio.new_event_loop()
        self.port = free_port()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self):
        asyncio.set_event_loop(self.loop)
        app = web.Application(client_max_size=8 * 2**20)
        for path, (method, handler) in self.routes.items():
            app.router.add_route(method, path, getattr(self, handler))
        runner = web.AppRunner(app)
        self.loop.run_until_complete(runner.setup())
        self.loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", self.port).start())
        self._ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(runner.cleanup())

    def __enter__(self):
        self._thread.start()
        assert self._ready.wait(10), "stand-in server did not start"
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)

    async def _record(self, request) -> dict:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        return body

    def _failing(self, body) -> int | None:
        if self.fail_next:
            return self.fail_next.pop(0)
        if self.fail_when and self.fail_when in json.dumps(body.get("messages", [])):
            return 500
        return None

    @staticmethod
    def answer_text(body) -> str:
        last = body["messages"][-1]["content"].split()
        return "Stand-in answer about " + " ".join(last[:8]) + "."


class OpenAIStandIn(_StandIn):
    """Modes: ok | html | not_json | huge (2 MB of text) | null_content | null_usage | no_usage |
    echo_auth (400 whose body repeats the Authorization header) | echo_key (500 whose body
    repeats the bare key, no header name) | hang (never answers). `extra` is merged into every
    answer (e.g. a server's prompt-cache report)."""

    def __init__(self):
        super().__init__()
        self.extra: dict = {}

    routes = {"/v1/chat/completions": ("POST", "chat"), "/v1/models": ("GET", "models")}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def models(self, request):
        return web.json_response({"object": "list", "data": [{"id": "standin", "object": "model"}]})

    async def chat(self, request):
        body = await self._record(request)
        status = self._failing(body)
        if status:
            return web.json_response({"error": {"message": f"stand-in failure {status}"}}, status=status)
        mode = self.mode
        if mode == "hang":
            await asyncio.sleep(3600)
        if mode == "html":
            return web.Response(
                text="<html><body><h1>502 Bad Gateway</h1>\n<p>nginx</p></body></html>", content_type="text/html"
            )
        if mode == "not_json":
            return web.Response(
                text="upstream connect error or disconnect/reset before headers", content_type="application/json"
            )
        if mode == "huge":
            return web.Response(text="x" * (2 * 2**20), content_type="text/plain")
        if mode == "echo_key":
            key = request.headers.get("Authorization", "").removeprefix("Bearer ")
            return web.json_response({"error": {"message": f"model not loaded for caller {key}"}}, status=500)
        if mode == "echo_auth":
            auth = request.headers.get("Authorization", "")
            return web.json_response({"error": {"message": f"bad request; you sent Authorization: {auth}"}}, status=400)
        content = None if mode == "null_content" else self.answer_text(body)
        if body.get("response_format"):
            content = json.dumps({"ok": True})
        out = {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }
        for k, v in self.extra.items():
            out[k] = {**out[k], **v} if isinstance(out.get(k), dict) and isinstance(v, dict) else v
        if mode == "null_usage":
            out["usage"] = None
        if mode == "no_usage":
            del out["usage"]
        return web.json_response(out)


class OllamaStandIn(_StandIn):
    """Ollama's /api/chat: message, prompt_eval_count, eval_count, done. Modes: ok | html |
    not_json | huge | null_content | null_usage."""

    routes = {"/api/chat": ("POST", "chat")}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def chat(self, request):
        body = await self._record(request)
        status = self._failing(body)
        if status:
            return web.json_response({"error": f"stand-in failure {status}"}, status=status)
        if body["model"] != "qwen2.5:0.5b":
            return web.json_response({"error": f"model '{body['model']}' not found"}, status=404)
        mode = self.mode
        if mode == "html":
            return web.Response(text="<html><body>502 Bad Gateway</body></html>", content_type="text/html")
        if mode == "not_json":
            return web.Response(text="upstream reset", content_type="application/json")
        if mode == "huge":
            return web.Response(text="x" * (2 * 2**20), content_type="text/plain")
        content = json.dumps({"ok": True}) if body.get("format") else "Hello from the stand-in."
        out = {
            "model": body["model"],
            "created_at": "2026-12-01T00:00:00Z",
            "message": {"role": "assistant", "content": None if mode == "null_content" else content},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 11,
            "eval_count": 7,
        }
        if mode == "null_usage":
            out["prompt_eval_count"] = out["eval_count"] = None
        return web.json_response(out)
