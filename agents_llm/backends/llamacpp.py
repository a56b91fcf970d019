"""In-process llama.cpp: the embedded default, no server, no key.

One Llama instance per (model file, context size, threads, chat format) per process,
shared by every backend object and every agent: the one deliberate process-wide cache of
the report stack (envs/report_resources.py), because loading the weights costs seconds
per env. Everything a config may vary beyond that key (temperature, seed, repeat penalty,
timeouts, the response cache) lives on the backend object, never on the shared
instance. Calls are serialised by a lock because a llama.cpp context is not re-entrant. Generation runs in a worker thread so the event loop stays
free; a deadline in a logits processor ends a generation that outlives its timeout.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .base import ChatRequest, Completion, LLMBackend
from .errors import LLMConfigError, LLMTimeoutError
from .json_output import check_schema
from .models import resolve_model

_INSTANCES: dict[tuple, tuple[Any, threading.Lock]] = {}
_INSTANCES_LOCK = threading.Lock()


def shared_llama(path: Path, n_ctx: int, n_threads: int, chat_format: str | None = None):
    """The process-wide Llama for these settings, loaded on first use."""
    import llama_cpp

    key = (str(path), n_ctx, n_threads, chat_format)
    with _INSTANCES_LOCK:
        if key not in _INSTANCES:
            llm = llama_cpp.Llama(
                str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                chat_format=chat_format,
                verbose=False,
            )
            _INSTANCES[key] = (llm, threading.Lock())
        return _INSTANCES[key]


class LlamaCppBackend(LLMBackend):
    name = "llamacpp"

    def __init__(
        self,
        model: str = "smollm2-135m",
        *,
        n_ctx: int = 4096,
        n_threads: int = 1,
        cache_dir: str | None = None,
        chat_format: str | None = None,
        repeat_penalty: float = 1.0,
        **kwargs: Any,
    ):
        super().__init__(model=model, **kwargs)
        if n_threads < 1 or n_ctx < 256:
            raise LLMConfigError(
                f"n_threads must be >= 1 and n_ctx >= 256 (got {n_threads}, {n_ctx})", backend=self.name
            )
        if not repeat_penalty > 0:
            raise LLMConfigError(f"repeat_penalty must be > 0 (1.0 = off), got {repeat_penalty}", backend=self.name)
        self.repeat_penalty = float(repeat_penalty)
        self.path = resolve_model(model, cache_dir)
        self.n_ctx, self.n_threads, self.chat_format = n_ctx, n_threads, chat_format
        self._llm, self._lock = shared_llama(self.path, n_ctx, n_threads, chat_format)
        self._grammars: dict[str, Any] = {}

    @property
    def endpoint(self) -> str:
        return str(self.path)

    @property
    def cache_scope(self) -> str:
        return ""  # the registered name pins the weights (sha256); the file's location does not matter

    def _key(self, req: ChatRequest) -> str:
        # The repeat penalty changes the completion: cached replies must not cross penalties.
        key = super()._key(req)
        return key if self.repeat_penalty == 1.0 else f"{key}:rp{self.repeat_penalty:g}"

    def _grammar(self, schema: Mapping[str, Any]):
        import llama_cpp

        key = json.dumps(schema, sort_keys=True)  # lookup only: order-insensitive
        if key not in self._grammars:
            try:
                # The grammar follows the schema's own property order (e.g. reasoning before
                # scores), so it is built from the unsorted text.
                self._grammars[key] = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            except Exception as e:  # the converter raises bare Exceptions/ValueErrors
                raise LLMConfigError(
                    f"llama.cpp cannot turn this JSON schema into a grammar: {e}",
                    backend=self.name,
                    endpoint=self.endpoint,
                ) from None
        return self._grammars[key]

    def check_schema_supported(self, schema: Mapping[str, Any]) -> None:
        check_schema(schema, backend=self.name)
        self._grammar(schema)

    async def _generate(self, request: ChatRequest) -> Completion:
        deadline = time.monotonic() + self.timeout_s
        comp = await asyncio.to_thread(self._generate_blocking, request, deadline)
        if comp is None:
            raise LLMTimeoutError(
                f"generation passed its {self.timeout_s:.1f} s timeout", backend=self.name, endpoint=self.endpoint
            )
        return comp

    def _generate_blocking(self, request: ChatRequest, deadline: float) -> Completion | None:
        eos = self._llm.token_eos()
        timed_out = False

        def stop_at_deadline(_ids, logits):
            # Past the deadline only EOS stays possible, so decoding ends at the next token.
            nonlocal timed_out
            if time.monotonic() > deadline:
                timed_out = True
                logits[:] = -np.inf
                logits[eos] = 0.0
            return logits

        import llama_cpp

        kwargs: dict[str, Any] = dict(
            messages=request.message_dicts(),
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            seed=request.seed,
            repeat_penalty=self.repeat_penalty,
            logits_processor=llama_cpp.LogitsProcessorList([stop_at_deadline]),
        )
        if request.schema is not None:
            kwargs["grammar"] = self._grammar(request.schema)
        with self._lock:
            if time.monotonic() > deadline:
                return None  # waited for the lock past our own timeout
            # Forget the previous prompt: reusing its KV prefix changes the batch shapes of
            # the prompt pass, and with them the floats, so greedy output would depend on
            # which call came before. Prefill of a few hundred tokens costs milliseconds.
            self._llm.reset()
            try:
                out = self._llm.create_chat_completion(**kwargs)
            except ValueError as e:  # e.g. prompt longer than the context window
                raise LLMConfigError(str(e), backend=self.name, endpoint=self.endpoint) from None
        if timed_out:
            return None
        usage = out["usage"]
        return Completion(
            out["choices"][0]["message"]["content"] or "", usage["prompt_tokens"], usage["completion_tokens"]
        )
