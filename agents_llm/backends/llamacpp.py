"""In-process llama.cpp: the embedded default, no server, no key.

One Llama instance per (model file, context size, threads, chat format) per process,
shared by every backend object and every agent: the one deliberate process-wide cache of
the report stack (envs/report/resources.py), because loading the weights costs seconds
per env. Everything a config may vary beyond that key (temperature, seed, repeat penalty,
timeouts, the response cache, prompt reuse) lives on the backend object, never on the shared
instance. Calls are serialised by a lock because a llama.cpp context is not re-entrant. Generation runs in a worker thread so the event loop stays
free; a deadline in a logits processor ends a generation that outlives its timeout.

Prompt reuse (`prompt_reuse`, on by default): the instance keeps the state of the last
`reuse_states` prompts and evaluates only what a new prompt does not share with the best
of them, in aligned batches of `prompt_batch` tokens, so that greedy output is the same
with reuse on and off (`llama_prefix`). Each answer says how many prompt tokens were
evaluated and how many reused.

Schema output and llama.cpp's grammar. With a schema, decoding is constrained by a
grammar built from it (`json_grammar=True`, the default). llama.cpp's grammar sampler
throws a C++ exception ("Unexpected empty grammar stack after accepting piece") when it
is made to accept a token its grammar rejects; that exception cannot cross the ctypes
boundary, so it is not a Python exception: the process aborts (SIGABRT, exit 134,
"terminate called after throwing an instance of 'std::runtime_error'"). Reproduced with
Qwen2.5-Coder-0.5B: the old deadline processor set every logit but EOS to -inf, the
grammar then masked EOS mid-object, greedy sampling took token 0 ("!") and the grammar
aborted the run. Two defences here: past the deadline a constrained generation only
lowers the other logits (finite), so the grammar always keeps a token it accepts and
EOS wins as soon as the grammar allows it; and an exception that a grammar-constrained
call does raise in Python is caught and the call is made again without the grammar, its
text then held to the schema by parsing and validation (`base.LLMBackend.chat`, retried
with tenacity like any malformed answer). Such a completion carries `fallback` (the
reason), which the LLM judge records in its flags. `json_grammar=False` skips the
grammar altogether (generation, then parse and validate).
"""

from __future__ import annotations

import asyncio
import atexit
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
CLOSE_WAIT_S = 5.0  # how long exit waits for a generation still running on a shared instance


def shared_llama(path: Path, n_ctx: int, n_threads: int, chat_format: str | None = None, prompt_batch: int = 64):
    """The process-wide Llama for these settings, loaded on first use. `prompt_batch` is the
    size of the aligned batches prompts are evaluated in (it decides the floats, so it is
    part of the key: every backend on one instance computes a prompt the same way)."""
    from .llama_prefix import PrefixReusingLlama

    key = (str(path), n_ctx, n_threads, chat_format, prompt_batch)
    with _INSTANCES_LOCK:
        if key not in _INSTANCES:
            llm = PrefixReusingLlama(
                str(path),
                n_ctx=n_ctx,
                n_batch=prompt_batch,
                n_ubatch=prompt_batch,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                chat_format=chat_format,
                verbose=False,
            )
            _INSTANCES[key] = (llm, threading.Lock())
        return _INSTANCES[key]


@atexit.register
def close_shared_llamas() -> None:
    """Free every shared Llama while the interpreter is still whole. Left to the last garbage
    collection, an instance still referenced at exit is freed after llama_cpp's module globals
    are gone, and `Llama.__del__` prints a TypeError traceback over a run that succeeded."""
    with _INSTANCES_LOCK:
        for llm, lock in _INSTANCES.values():
            # A daemon thread may still be generating on it: leave that one to the collector
            # rather than free a context in use or wait on it forever.
            if lock.acquire(timeout=CLOSE_WAIT_S):
                try:
                    llm.close()
                finally:
                    lock.release()
        _INSTANCES.clear()


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
        json_grammar: bool = True,
        prompt_reuse: bool = True,
        reuse_states: int = 8,
        prompt_batch: int = 64,
        **kwargs: Any,
    ):
        super().__init__(model=model, **kwargs)
        if n_threads < 1 or n_ctx < 256:
            raise LLMConfigError(
                f"n_threads must be >= 1 and n_ctx >= 256 (got {n_threads}, {n_ctx})", backend=self.name
            )
        for key, value, low in (("reuse_states", reuse_states, 0), ("prompt_batch", prompt_batch, 8)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise LLMConfigError(f"llm.{key} must be an integer >= {low}, got {value!r}", backend=self.name)
        self.prompt_reuse, self.reuse_states, self.prompt_batch = bool(prompt_reuse), reuse_states, prompt_batch
        if not repeat_penalty > 0:
            raise LLMConfigError(f"repeat_penalty must be > 0 (1.0 = off), got {repeat_penalty}", backend=self.name)
        self.repeat_penalty = float(repeat_penalty)
        self.json_grammar = bool(json_grammar)
        self.path = resolve_model(model, cache_dir)
        self.n_ctx, self.n_threads, self.chat_format = n_ctx, n_threads, chat_format
        self._llm, self._lock = shared_llama(self.path, n_ctx, n_threads, chat_format, prompt_batch)
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
        key = key if self.repeat_penalty == 1.0 else f"{key}:rp{self.repeat_penalty:g}"
        return key if self.json_grammar or req.schema is None else f"{key}:nogrammar"

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
        if self.json_grammar:
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
        grammar = self._grammar(request.schema) if request.schema is not None and self.json_grammar else None
        if grammar is None:
            return self._complete(request, deadline, None)
        try:
            return self._complete(request, deadline, grammar)
        except LLMConfigError:
            raise  # e.g. the prompt does not fit the context: no grammar-free call would either
        except Exception as e:  # a grammar failure that surfaced in Python: generate without it
            reason = f"grammar-constrained decoding failed ({type(e).__name__}: {' '.join(str(e).split())[:160]})"
        spent = self._llm.last.evaluated  # the failed constrained pass evaluated its prompt too
        comp = self._complete(request, deadline, None)
        if comp is None:
            return None
        evaluated = (comp.prompt_tokens_evaluated or 0) + spent
        return Completion(
            comp.text, comp.prompt_tokens, comp.completion_tokens, reason, comp.prompt_tokens_reused, evaluated
        )

    def _complete(self, request: ChatRequest, deadline: float, grammar: Any) -> Completion | None:
        import llama_cpp

        processor = DeadlineProcessor(self._llm.token_eos(), deadline)
        kwargs: dict[str, Any] = dict(
            messages=request.message_dicts(),
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            seed=request.seed,
            repeat_penalty=self.repeat_penalty,
            logits_processor=llama_cpp.LogitsProcessorList([processor]),
        )
        if grammar is not None:
            kwargs["grammar"] = grammar
        with self._lock:
            if time.monotonic() > deadline:
                return None  # waited for the lock past our own timeout
            # Reuse keeps only whole aligned batches of earlier prompts (llama_prefix), so the
            # floats, and greedy output, do not depend on which call came before.
            self._llm.reuse, self._llm.keep = self.prompt_reuse, self.reuse_states
            try:
                out = self._llm.create_chat_completion(**kwargs)
            except ValueError as e:  # e.g. prompt longer than the context window
                raise LLMConfigError(str(e), backend=self.name, endpoint=self.endpoint) from None
            stats = self._llm.last
            self._llm.remember()
        if processor.timed_out:
            return None
        usage = out["usage"]
        return Completion(
            out["choices"][0]["message"]["content"] or "",
            usage["prompt_tokens"],
            usage["completion_tokens"],
            prompt_tokens_reused=stats.reused,
            prompt_tokens_evaluated=stats.evaluated,
        )


class DeadlineProcessor:
    """A logits processor that ends a generation past `deadline` without breaking a grammar.

    Past the deadline, EOS gets logit 0 and every other token is pushed down by
    `PUSH_DOWN` but stays finite. Unconstrained, EOS is then the argmax and decoding ends
    at the next token. Under a grammar (applied after this processor), EOS wins as soon as
    the grammar allows it, and until then the grammar still has finite tokens to choose
    from: never all -inf, which would make the sampler take a token the grammar rejects
    and abort the process (see the module docstring).
    """

    PUSH_DOWN = 1.0e4

    def __init__(self, eos: int, deadline: float):
        self.eos, self.deadline, self.timed_out = eos, deadline, False

    def __call__(self, _ids: Any, logits: np.ndarray) -> np.ndarray:
        if time.monotonic() > self.deadline:
            self.timed_out = True
            logits -= self.PUSH_DOWN
            logits[self.eos] = 0.0
        return logits
