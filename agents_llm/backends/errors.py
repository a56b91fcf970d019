"""Errors raised by LLM backends.

Every message names the backend and, where there is one, the endpoint or model file, so
a failure in a long run says where to look without a traceback dive.
"""

from __future__ import annotations


class LLMError(Exception):
    """Base class: something about an LLM call failed."""

    def __init__(self, message: str, *, backend: str = "", endpoint: str = ""):
        # One line, secrets scrubbed: the message lands in logs, traces and stderr as it is,
        # and a server's error body may echo the request's Authorization header.
        from ..redaction import redact_text

        message = redact_text(" ".join(str(message).split()))
        endpoint = redact_text(endpoint)
        where = ", ".join(
            p for p in (f"backend={backend}" if backend else "", f"endpoint={endpoint}" if endpoint else "") if p
        )
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


class LLMResponseError(LLMServerError):
    """The server answered, but not with a usable chat response: a body that is not JSON
    (an HTML error page, a proxy's text), a JSON body of the wrong shape (null content,
    no usage), or one larger than the response size cap. Retried like a server error."""


class TokenBudgetExceeded(LLMError):
    """The episode's token budget is spent. `reason` says by whom and how much."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# Errors that mean the server cannot serve this run at all (down, wrong model, bad key):
# the engine stops calling it and the episode ends as an LLM failure.
FATAL = (LLMConnectionError, LLMConfigError)

# Errors worth another attempt with backoff. Connection refusals are not retried: a
# server that is down stays down for the next 200 ms, and the caller should hear at once.
RETRYABLE = (LLMTimeoutError, LLMOutputError, LLMServerError)
