"""A raw HTTP server on 127.0.0.1 that breaks connections the way a crashed worker or a
proxy does: it reads the request, sends the status line and headers and part of the body,
then closes the socket. No HTTP framework: the bytes on the wire are exactly these.

Runs its own asyncio loop in a thread. ``plan`` lists, per incoming request, what to do
(``"cut_body"``, ``"cut_chunked"``, ``"cut_headers"``, ``"ok"``); past its end the last
entry repeats. ``requests`` counts the requests read.
"""

from __future__ import annotations

import asyncio
import json
import threading

from .standins import free_port

OK_BODY = {
    "id": "cut-1",
    "object": "chat.completion",
    "model": "standin",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole answer"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
}
OLLAMA_OK_BODY = {
    "model": "standin",
    "created_at": "2024-01-01T00:00:00Z",
    "message": {"role": "assistant", "content": "whole answer"},
    "done": True,
    "prompt_eval_count": 5,
    "eval_count": 2,
}


class CuttingServer:
    def __init__(self, plan: list[str], ollama: bool = False):
        self.plan = list(plan)
        self.ollama = ollama
        self.requests = 0
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}" + ("" if self.ollama else "/v1")

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", self.port))
        self._ready.set()
        self.loop.run_forever()
        server.close()
        self.loop.run_until_complete(server.wait_closed())

    async def _read_request(self, reader: asyncio.StreamReader) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.decode("latin-1").split("\r\n"):
            if line.lower().startswith("content-length:"):
                length = int(line.split(":", 1)[1])
        await reader.readexactly(length)
        return True

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._read_request(reader):
                action = self.plan[min(self.requests, len(self.plan) - 1)]
                self.requests += 1
                body = json.dumps(OLLAMA_OK_BODY if self.ollama else OK_BODY).encode()
                if action == "ok":
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        + f"Content-Length: {len(body)}\r\n\r\n".encode()
                        + body
                    )
                    await writer.drain()
                    continue
                if action == "cut_headers":  # half a status line, then nothing
                    writer.write(b"HTTP/1.1 200 O")
                elif action == "cut_body":  # all headers, a third of the announced body
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        + f"Content-Length: {len(body)}\r\n\r\n".encode()
                        + body[: len(body) // 3]
                    )
                elif action == "cut_chunked":  # a chunk announced, half of it sent
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + f"{len(body):x}\r\n".encode()
                        + body[: len(body) // 2]
                    )
                await writer.drain()
                break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def __enter__(self) -> "CuttingServer":
        self._thread.start()
        assert self._ready.wait(10), "cutting server did not start"
        return self

    def __exit__(self, *exc) -> None:
        async def cancel_handlers() -> None:  # connections a client keeps open (keep-alive)
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(cancel_handlers(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
