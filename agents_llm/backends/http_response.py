"""Reading an HTTP backend's answer defensively: size-capped, JSON-checked, shape-checked.

A "200 OK" is not yet a chat completion: a proxy's HTML page, a truncated or binary
body, `null` content or usage all reach the backend as success. Each becomes one
`LLMResponseError` line naming the endpoint and what was wrong (retried like a server
error), never a traceback from deep inside a client library.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Sequence

import httpx

from ..redaction import redact_text
from .errors import LLMResponseError

DEFAULT_MAX_RESPONSE_BYTES = 1_000_000


def check_max_response_bytes(value: Any, backend: str) -> int:
    from .errors import LLMConfigError

    if isinstance(value, bool) or not isinstance(value, int) or value < 1024:
        raise LLMConfigError(f"llm.max_response_bytes must be an integer >= 1024, got {value!r}", backend=backend)
    return value


def _snippet(body: bytes, limit: int = 80) -> str:
    text = body[: limit * 4].decode("utf-8", errors="replace")
    return redact_text(" ".join(text.split()))[:limit]


async def read_capped(chunks: AsyncIterator[bytes], cap: int, *, backend: str, endpoint: str) -> bytes:
    """The whole body, or LLMResponseError as soon as it passes `cap` bytes (not read further)."""
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > cap:
            raise LLMResponseError(
                f"response body is larger than the {cap}-byte cap (llm.max_response_bytes); "
                f"it began {_snippet(b''.join(parts) + chunk)!r}",
                backend=backend,
                endpoint=endpoint,
            )
        parts.append(chunk)
    return b"".join(parts)


def parse_json_body(body: bytes, content_type: str, *, backend: str, endpoint: str) -> Any:
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError):
        kind = content_type.split(";")[0].strip() or "no content type"
        raise LLMResponseError(
            f"response body is not JSON ({kind}, {len(body)} bytes); it began {_snippet(body)!r}",
            backend=backend,
            endpoint=endpoint,
        ) from None


def require(data: Any, path: Sequence[str | int], kind: type | tuple[type, ...], *, backend: str, endpoint: str) -> Any:
    """`data[path...]`, which must exist and be of `kind`; else LLMResponseError naming the field."""
    value, where = data, ""
    for step in path:
        if value is None:  # a parent is null (e.g. "usage": null)
            raise LLMResponseError(f"malformed response: {where} is null", backend=backend, endpoint=endpoint)
        where += f"[{step}]" if isinstance(step, int) else (f".{step}" if where else str(step))
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            raise LLMResponseError(
                f"malformed response: {where} is missing", backend=backend, endpoint=endpoint
            ) from None
    if value is None:
        raise LLMResponseError(f"malformed response: {where} is null", backend=backend, endpoint=endpoint)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = "/".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise LLMResponseError(
            f"malformed response: {where} should be {names}, got {type(value).__name__}",
            backend=backend,
            endpoint=endpoint,
        )
    return value


def token_count(data: Any, path: Sequence[str | int], *, backend: str, endpoint: str) -> int:
    value = require(data, path, int, backend=backend, endpoint=endpoint)
    if value < 0:
        raise LLMResponseError(
            f"malformed response: {'.'.join(map(str, path))} is negative ({value})", backend=backend, endpoint=endpoint
        )
    return value


def _optional_count(data: Any, path: Sequence[str]) -> int | None:
    value = data
    for step in path:
        if not isinstance(value, dict) or step not in value:
            return None
        value = value[step]
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def prompt_cache_counts(data: Any, prompt_tokens: int) -> tuple[int, int | None]:
    """(tokens reused, tokens evaluated or None) of one answer, from what the server reports.

    OpenAI, vLLM and SGLang report the prompt tokens served from their prefix cache as
    ``usage.prompt_tokens_details.cached_tokens``; llama.cpp's server reports ``timings.cache_n``
    (reused) and ``timings.prompt_n`` (evaluated). Both are optional: a server that says nothing,
    or something impossible (not a count, more than the prompt), gives (0, None), "unknown", and
    the call stands; the cache report is bookkeeping, never a reason to retry an answer.
    """
    cached = _optional_count(data, ("usage", "prompt_tokens_details", "cached_tokens"))
    cache_n = _optional_count(data, ("timings", "cache_n"))
    prompt_n = _optional_count(data, ("timings", "prompt_n"))
    if cache_n is not None and prompt_n is not None and cache_n + prompt_n == prompt_tokens:
        return cache_n, prompt_n
    reused = cached if cached is not None else cache_n
    if reused is None or reused > prompt_tokens:
        return 0, None
    return reused, prompt_tokens - reused


class _CappedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, cap: int, backend: str, endpoint: str):
        self._inner, self._cap, self._where = inner, cap, dict(backend=backend, endpoint=endpoint)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen, size = b"", 0
        async for chunk in self._inner:
            size += len(chunk)
            if size > self._cap:
                raise LLMResponseError(
                    f"response body is larger than the {self._cap}-byte cap "
                    f"(llm.max_response_bytes); it began {_snippet(seen + chunk)!r}",
                    **self._where,
                )
            if len(seen) < 320:
                seen += chunk[:320]
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedTransport(httpx.AsyncBaseTransport):
    """httpx transport that stops reading a response body past `cap` bytes (LLMResponseError),
    for clients that read the body themselves (Ollama's)."""

    def __init__(self, cap: int, *, backend: str, endpoint: str):
        self._inner = httpx.AsyncHTTPTransport()
        self._cap, self._backend, self._endpoint = cap, backend, endpoint

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        resp = await self._inner.handle_async_request(request)
        # httpx types Response.stream for both kinds; an async transport's streams asynchronously.
        assert isinstance(resp.stream, httpx.AsyncByteStream), type(resp.stream)
        return httpx.Response(
            resp.status_code,
            headers=resp.headers,
            extensions=resp.extensions,
            request=request,
            stream=_CappedStream(resp.stream, self._cap, self._backend, self._endpoint),
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
