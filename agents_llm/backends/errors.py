"""Errors raised by LLM backends.

Every message names the backend and, where there is one, the endpoint or model file, so
a failure in a long run says where to look without a traceback dive.
"""
from __future__ import annotations


class LLMError(Exception):
    """Base class: something about an LLM call failed."""

    def __init__(self, message: str, *, backend: str = "", endpoint: str = ""):
        where = ", ".join(p for p in (f"backend={backend}" if backend else "",
                                      f"endpoint={endpoint}" if endpoint else "") if p)
        super().__init__(f"{message} [{where}]" if where else message)
        self.backend = backend
        self.endpoint = endpoint


class LLMConfigError(LLMError, ValueError):
    """The request or configuration can never succeed (bad model name, bad schema, ...)."""


class LLMConnectionError(LLMError, ConnectionError):
    """The server could not be reached."""


class LLMTimeoutError(LLMError, TimeoutError):
    """A call ran past its per-call timeout."""


class LLMOutputError(LLMError):
    """The model answered, but not with what was asked (e.g. JSON that fails the schema)."""


class LLMServerError(LLMError):
    """The server answered with an error status that may go away on retry (429, 5xx)."""


class TokenBudgetExceeded(LLMError):
    """The episode's token budget is spent. `reason` says by whom and how much."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# Errors worth another attempt with backoff. Connection refusals are not retried: a
# server that is down stays down for the next 200 ms, and the caller should hear at once.
RETRYABLE = (LLMTimeoutError, LLMOutputError, LLMServerError)
