"""The one async interface every LLM backend implements.

A backend subclass writes `_generate` (one attempt, raw text and token counts) and, if
it has limits, `check_schema_supported`. Everything else lives here once: request
validation, the token budget, the response cache, retries with backoff, the per-call
timeout, schema-checked JSON, latency and token accounting.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import warnings
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Generic, Mapping, Sequence, TypeVar

from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from ..sync import run_sync
from .accounting import TokenLedger
from .cache import ResponseCache, cache_key
from .errors import RETRYABLE, LLMConfigError, LLMError, LLMTimeoutError
from .json_output import check_schema, parse_json_output
from .transport import http_family, transport_error

ROLES = ("system", "user", "assistant")

C = TypeVar("C")


class LoopBoundClients(Generic[C]):
    """One HTTP client per running event loop, built on first use in that loop.

    An async HTTP client's connection pool belongs to the loop it first ran on; used
    from another loop it fails ("Event loop is closed", "attached to a different
    loop"). A backend object outlives loops (a sync `step` loop, a notebook's loop, an
    async collector's loop), so it asks here for the client of the loop now running.
    Clients of loops that were garbage-collected go with them.
    """

    def __init__(self, factory: Callable[[], C]):
        self._factory = factory
        self._clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, C]" = weakref.WeakKeyDictionary()

    def get(self) -> C:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._factory()
        return client

    def pop_current(self) -> C | None:
        """Forget (and return, for closing) the running loop's client."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        return self._clients.pop(loop, None)

    def __len__(self) -> int:
        return len(self._clients)


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[tuple[str, str], ...]  # (role, content) pairs
    schema: Mapping[str, Any] | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int | None = None

    def message_dicts(self) -> list[dict[str, str]]:
        return [{"role": r, "content": c} for r, c in self.messages]


@dataclass(frozen=True)
class Completion:
    """What one attempt of a backend returns."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    # Why this answer was not produced the way it was asked for (e.g. a schema answer generated
    # without the backend's grammar after the constrained call failed); "" when it was.
    fallback: str = ""
    # Prompt tokens the model did not compute again because it kept their state from an earlier
    # prompt (the in-process llama.cpp's prefix reuse, a server's prompt cache); 0 when none or unknown.
    prompt_tokens_reused: int = 0
    # Prompt tokens the model computed for this answer; None: all of prompt_tokens (the backend
    # cannot tell otherwise). More than prompt_tokens when an attempt was redone (grammar fallback).
    prompt_tokens_evaluated: int | None = None


@dataclass
class LLMResponse:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    backend: str
    model: str
    cached: bool = False
    attempts: int = 1
    parsed: Any = None  # the schema-valid JSON value when a schema was given
    fallback: str = ""  # Completion.fallback of the attempt that answered ("" when none)
    # Prompt tokens the model computed for this call (every attempt; 0 for a cached reply) and
    # those it reused from state kept from earlier prompts (Completion.prompt_tokens_reused).
    prompt_tokens_evaluated: int = 0
    prompt_tokens_reused: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class RetryPolicy:
    max_attempts: int = 3
    backoff_s: float = 0.5  # first wait; doubles each attempt
    backoff_max_s: float = 8.0


class LLMBackend(ABC):
    name: ClassVar[str] = "base"

    def __init__(
        self,
        *,
        model: str,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | None = None,
        max_concurrent_requests: int | None = None,
        server_slots: int | None = None,
    ):
        if timeout_s <= 0:
            raise LLMConfigError(f"timeout_s must be positive, got {timeout_s}", backend=self.name)
        for key, value in (("max_concurrent_requests", max_concurrent_requests), ("server_slots", server_slots)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise LLMConfigError(f"llm.{key} must be an integer >= 1 or null, got {value!r}", backend=self.name)
        # At most this many requests of this backend in flight (per event loop); the rest wait here.
        self.max_concurrent_requests = max_concurrent_requests
        # How many requests the server decodes at once; more in flight queue there (warned once).
        self.server_slots = server_slots
        if max_concurrent_requests and server_slots and max_concurrent_requests > server_slots:
            warnings.warn(
                f"llm.max_concurrent_requests={max_concurrent_requests} is above llm.server_slots="
                f"{server_slots}: the server queues what it cannot decode at once",
                stacklevel=2,
            )
        self._limits: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> Semaphore
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests seen in flight at once
        self._warned_slots = False
        self.model = model
        self.timeout_s = float(timeout_s)
        self.retry = retry or RetryPolicy()
        if self.retry.max_attempts < 1:
            raise LLMConfigError("retry.max_attempts must be at least 1", backend=self.name)
        self.cache = cache
        # Process-lifetime usage of this backend; episodes keep their own ledgers.
        self.usage = TokenLedger()

    @property
    def endpoint(self) -> str:
        """Where calls go (a URL or a model file), for error messages."""
        return ""

    # -- what a backend implements ---------------------------------------------------
    @abstractmethod
    async def _generate(self, request: ChatRequest) -> Completion:
        """One attempt. Raise LLMConnectionError / LLMServerError / LLMOutputError."""

    def check_schema_supported(self, schema: Mapping[str, Any]) -> None:
        """Raise LLMConfigError if this backend cannot constrain output to `schema`."""
        check_schema(schema, backend=self.name)

    async def aclose(self) -> None:
        """Release connections; the default has none."""

    # -- the shared call path --------------------------------------------------------
    def _validate(
        self, messages: Sequence[Mapping[str, str]], max_tokens: int, temperature: float
    ) -> tuple[tuple[str, str], ...]:
        if not isinstance(messages, (list, tuple)) or len(messages) == 0:
            raise LLMConfigError("empty message list: a chat call needs at least one message", backend=self.name)
        out = []
        for i, m in enumerate(messages):
            if not isinstance(m, Mapping) or "role" not in m or "content" not in m:
                raise LLMConfigError(
                    f"message {i} must be a mapping with 'role' and 'content', got {m!r:.80}", backend=self.name
                )
            if m["role"] not in ROLES:
                raise LLMConfigError(f"message {i} has role {m['role']!r}; expected one of {ROLES}", backend=self.name)
            if not isinstance(m["content"], str):
                raise LLMConfigError(
                    f"message {i} content must be str, got {type(m['content']).__name__}", backend=self.name
                )
            out.append((m["role"], m["content"]))
        if not isinstance(max_tokens, int) or max_tokens <= 0:
            raise LLMConfigError(f"max_tokens must be a positive int, got {max_tokens!r}", backend=self.name)
        if temperature < 0:
            raise LLMConfigError(f"temperature must be >= 0, got {temperature}", backend=self.name)
        return tuple(out)

    @property
    def cache_scope(self) -> str:
        """What besides the model name tells apart servers in the response cache: the
        endpoint, so one server's cached answer is never replayed for another (or for a
        dead one). In-process backends, whose model name identifies the weights, use ""."""
        return self.endpoint

    def _key(self, req: ChatRequest) -> str:
        return cache_key(
            backend=self.name,
            endpoint=self.cache_scope,
            model=self.model,
            messages=req.messages,
            schema=req.schema,
            max_tokens=req.max_tokens,
            temperature=req.temperature,
            seed=req.seed,
        )

    async def chat(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        caller: str = "",
        ledger: TokenLedger | None = None,
    ) -> LLMResponse:
        """Send a chat; return text, token counts and latency.

        `caller` names who pays (an agent, a judge); `ledger` is the episode's budgeted
        ledger. With a `schema`, the answer is held to it and returned parsed in
        `.parsed`; an answer that fails is retried, then raised as LLMOutputError.
        """
        req = ChatRequest(
            self._validate(messages, max_tokens, temperature),
            schema=schema,
            max_tokens=max_tokens,
            temperature=float(temperature),
            seed=seed,
        )
        if schema is not None:
            self.check_schema_supported(schema)
        if ledger is not None:
            ledger.check(caller)

        key = self._key(req) if self.cache is not None else ""
        t0 = time.perf_counter()
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                text, pt, ct, fallback = hit
                parsed = parse_json_output(text, dict(schema), self.name) if schema is not None else None
                self._charge(caller, ledger, pt, ct)
                return LLMResponse(
                    text,
                    pt,
                    ct,
                    time.perf_counter() - t0,
                    self.name,
                    self.model,
                    cached=True,
                    parsed=parsed,
                    fallback=fallback,
                )

        attempts = evaluated = reused = 0
        comp: Completion | None = None
        parsed = None
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception_type(RETRYABLE),
                reraise=True,
                stop=stop_after_attempt(self.retry.max_attempts),
                wait=wait_exponential(multiplier=self.retry.backoff_s, max=self.retry.backoff_max_s),
            ):
                with attempt:
                    attempts += 1
                    comp = await self._attempt(req)
                    reused += comp.prompt_tokens_reused
                    evaluated += (
                        comp.prompt_tokens - comp.prompt_tokens_reused
                        if comp.prompt_tokens_evaluated is None
                        else comp.prompt_tokens_evaluated
                    )
                    # Tokens of a rejected answer were still spent: charge every attempt.
                    self._charge(caller, ledger, comp.prompt_tokens, comp.completion_tokens)
                    if schema is not None:
                        parsed = parse_json_output(comp.text, dict(schema), self.name)
        except LLMError as e:
            if attempts > 1:
                raise type(e)(f"{e} (after {attempts} attempts)") from e
            raise
        assert comp is not None
        if self.cache is not None:
            self.cache.put(key, comp.text, comp.prompt_tokens, comp.completion_tokens, comp.fallback)
        return LLMResponse(
            comp.text,
            comp.prompt_tokens,
            comp.completion_tokens,
            time.perf_counter() - t0,
            self.name,
            self.model,
            attempts=attempts,
            parsed=parsed,
            fallback=comp.fallback,
            prompt_tokens_evaluated=evaluated,
            prompt_tokens_reused=reused,
        )

    def _limit(self) -> asyncio.Semaphore | contextlib.nullcontext:
        """The in-flight limit of this backend on the running loop (a semaphore is bound to one loop)."""
        if self.max_concurrent_requests is None:
            return contextlib.nullcontext()
        loop = asyncio.get_running_loop()
        sem = self._limits.get(loop)
        if sem is None:
            sem = self._limits[loop] = asyncio.Semaphore(self.max_concurrent_requests)
        return sem

    async def _attempt(self, req: ChatRequest) -> Completion:
        async with self._limit():  # waiting for a free request slot is not part of the call's timeout
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.server_slots and self.in_flight > self.server_slots and not self._warned_slots:
                self._warned_slots = True
                warnings.warn(
                    f"{self.in_flight} requests in flight to {self.endpoint or self.name}, more than "
                    f"llm.server_slots={self.server_slots}: the server queues them; cap them with "
                    "llm.max_concurrent_requests",
                    stacklevel=2,
                )
            try:
                return await asyncio.wait_for(self._generate(req), timeout=self.timeout_s)
            except asyncio.TimeoutError:
                raise LLMTimeoutError(
                    f"call timed out after {self.timeout_s:.1f} s", backend=self.name, endpoint=self.endpoint
                ) from None
            except Exception as e:  # a backend that let an HTTP library's error through: retried, one line
                if http_family(type(e)) is None:
                    raise
                raise transport_error(e, backend=self.name, endpoint=self.endpoint) from None
            finally:
                self.in_flight -= 1

    def _charge(self, caller: str, ledger: TokenLedger | None, pt: int, ct: int) -> None:
        self.usage.charge(caller, pt, ct)
        if ledger is not None:
            ledger.charge(caller, pt, ct)

    def chat_sync(self, messages: Sequence[Mapping[str, str]], **kwargs: Any) -> LLMResponse:
        """Blocking `chat`, usable from scripts and from inside a running event loop."""
        return run_sync(self.chat(messages, **kwargs))
