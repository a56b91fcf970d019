"""The llamacpp backend's grammar path without a model: a fake llama.cpp instance stands in.

A real grammar abort is a process abort (tests/backends/test_llamacpp_real.py runs one in a
subprocess); here: the deadline never leaves a grammar without a token, a grammar failure
raised in Python is redone without the grammar and recorded, and `json_grammar=False`
skips the grammar.
"""

import asyncio

import threading
import time

import numpy as np
import pytest

from agents_llm.backends import LLMConfigError, LLMOutputError, RetryPolicy

pytest.importorskip("llama_cpp")

from agents_llm.backends.llama_prefix import PromptStats  # noqa: E402
from agents_llm.backends.llamacpp import DeadlineProcessor, LlamaCppBackend  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {"assessment": {"type": "string"}, "score": {"type": "integer", "enum": [0, 1, 2, 3, 4, 5]}},
    "required": ["assessment", "score"],
    "additionalProperties": False,
}


class FakeLlama:
    """Answers `reply`; with a grammar, raises `grammar_error` when one is set."""

    def __init__(self, reply: str, grammar_error: Exception | None = None):
        self.reply, self.grammar_error = reply, grammar_error
        self.calls: list[dict] = []
        self.reuse, self.keep = True, 8  # set by the backend per call
        self.last = PromptStats()
        self.remembered = 0

    def token_eos(self) -> int:
        return 2

    def remember(self) -> None:
        self.remembered += 1

    def create_chat_completion(self, **kwargs):
        self.calls.append(kwargs)
        self.last = PromptStats(sent=7, reused=3)  # every pass evaluates 4 of its 7 prompt tokens
        if "grammar" in kwargs and self.grammar_error is not None:
            raise self.grammar_error
        return {
            "choices": [{"message": {"content": self.reply}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 5},
        }


def fake_backend(llm: FakeLlama, *, json_grammar: bool = True, attempts: int = 1) -> LlamaCppBackend:
    backend = LlamaCppBackend.__new__(LlamaCppBackend)
    super(LlamaCppBackend, backend).__init__(model="fake", retry=RetryPolicy(attempts, 0.0, 0.0))
    backend.repeat_penalty, backend.json_grammar = 1.0, json_grammar
    backend.prompt_reuse, backend.reuse_states, backend.prompt_batch = True, 8, 64
    backend.path, backend.n_ctx, backend.n_threads, backend.chat_format = "fake.gguf", 2048, 1, None
    backend._llm, backend._lock, backend._grammars = llm, threading.Lock(), {}
    return backend


def chat(backend, schema=SCHEMA):
    return asyncio.run(backend.chat([{"role": "user", "content": "Judge this."}], schema=schema, max_tokens=32))


def test_a_grammar_failure_in_python_is_redone_without_the_grammar_and_recorded():
    llm = FakeLlama('{"assessment": "fine", "score": 4}', RuntimeError("Unexpected empty grammar stack"))
    resp = chat(fake_backend(llm))
    assert resp.parsed == {"assessment": "fine", "score": 4}
    assert "grammar-constrained decoding failed (RuntimeError: Unexpected empty grammar stack)" in resp.fallback
    assert ["grammar" in c for c in llm.calls] == [True, False]
    # both passes computed their prompt: the answer counts both, and the reuse of the one that answered
    assert (resp.prompt_tokens_evaluated, resp.prompt_tokens_reused) == (8, 3)


def test_the_grammar_free_answer_is_held_to_the_schema():
    llm = FakeLlama('{"assessment": "fine", "score": 9}', RuntimeError("grammar"))
    with pytest.raises(LLMOutputError, match="fails the schema"):
        chat(fake_backend(llm))


def test_a_context_error_is_not_retried_without_the_grammar():
    llm = FakeLlama("{}", ValueError("Requested tokens exceed context window"))
    with pytest.raises(LLMConfigError, match="context window"):
        chat(fake_backend(llm))
    assert len(llm.calls) == 1


def test_a_constrained_answer_has_no_fallback_and_json_grammar_false_skips_the_grammar():
    llm = FakeLlama('{"assessment": "ok", "score": 3}')
    assert chat(fake_backend(llm)).fallback == "" and "grammar" in llm.calls[-1]
    free = chat(fake_backend(llm, json_grammar=False))
    assert free.parsed["score"] == 3 and free.fallback == "" and "grammar" not in llm.calls[-1]


def test_past_the_deadline_eos_wins_and_a_grammar_always_keeps_a_finite_token():
    processor = DeadlineProcessor(eos=2, deadline=time.monotonic() - 1.0)
    logits = np.array([5.0, 9.0, -3.0, 1.0], dtype=np.float32)
    out = processor(None, logits)
    assert processor.timed_out and int(np.argmax(out)) == 2
    # A grammar applied after the processor masks EOS (mid-object) and token 1: what is left
    # is finite, so the sampler picks a token the grammar accepts (the old processor left
    # only -inf, the sampler took token 0 and llama.cpp aborted the process).
    masked = out.copy()
    masked[[1, 2]] = -np.inf
    assert np.isfinite(masked[[0, 3]]).all() and int(np.argmax(masked)) == 0


def test_before_the_deadline_the_logits_are_untouched():
    processor = DeadlineProcessor(eos=2, deadline=time.monotonic() + 60.0)
    logits = np.array([5.0, 9.0, -3.0], dtype=np.float32)
    assert processor(None, logits.copy()).tolist() == logits.tolist() and not processor.timed_out
