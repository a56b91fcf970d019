"""Transport errors of whatever HTTP library an SDK brings.

The OpenAI SDK moved from ``httpx`` (1.x, 2.x) to ``httpx2`` (3.x) and the Ollama SDK
uses ``httpx``: catching ``httpx.TransportError`` by name let the other library's
``RemoteProtocolError`` (a server closing the connection mid-body) escape as a traceback,
unretried. Errors are recognised here by the library family their class comes from
(``httpx``, ``httpx2``, ``httpcore``, ``h11``, ``h2``, ``anyio``, any later ``httpxN``) and
by the standard library's socket errors, so a new SDK major on a renamed HTTP library is
still caught: the error becomes an :class:`LLMTimeoutError` or an :class:`LLMServerError`
(both retried) naming the endpoint.
"""

from __future__ import annotations

import re
from typing import Optional

from .errors import LLMError, LLMServerError, LLMTimeoutError

# Top-level packages of the HTTP stacks the SDKs use (and their renamed majors: httpx2, httpcore2).
_HTTP_FAMILY = re.compile(r"^(httpx\d*|httpcore\d*|h11|h2|anyio|aiohttp)$")


def http_family(exc_type: type) -> Optional[str]:
    """The HTTP library an exception class belongs to (its top-level package), or None."""
    for cls in exc_type.__mro__:
        root = (cls.__module__ or "").split(".", 1)[0]
        if _HTTP_FAMILY.match(root):
            return root
    return None


def is_transport_error(exc: BaseException) -> bool:
    """True for a failure on the wire: any error of an HTTP library's family (not a status
    error the SDK already classified), a socket or TLS error, an early end of stream."""
    if isinstance(exc, LLMError):
        return False
    if http_family(type(exc)) is not None:
        return True
    return isinstance(exc, (OSError, EOFError))  # sockets (ConnectionResetError, ...) and TLS (ssl.SSLError)


def is_connect_error(exc: BaseException) -> bool:
    """The connection could not be opened at all (refused, unknown host): the server is down."""
    return isinstance(exc, ConnectionRefusedError) or any(
        cls.__name__ in ("ConnectError", "ConnectTimeout") for cls in type(exc).__mro__
    )


def is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


def transport_error(exc: BaseException, *, backend: str, endpoint: str, reading: bool = True) -> LLMError:
    """The retryable LLM error for a transport failure ``exc``, one line naming the endpoint."""
    where = dict(backend=backend, endpoint=endpoint)
    if is_timeout(exc):
        return LLMTimeoutError(
            "server stopped sending its answer in time" if reading else "server did not answer in time", **where
        )
    family = http_family(type(exc))
    kind = f"{family}.{type(exc).__name__}" if family else type(exc).__name__
    detail = str(exc).strip() or "no detail"
    phase = "while reading the answer" if reading else "while sending the request"
    return LLMServerError(f"connection failed {phase} ({kind}: {detail})", **where)
