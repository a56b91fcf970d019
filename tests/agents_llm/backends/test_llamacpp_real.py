"""Real generation with the embedded SmolLM2-135M through the llamacpp backend."""

import asyncio
import time

import pytest

from agents_llm.backends import LLMConfigError, LLMTimeoutError, RetryPolicy

pytestmark = pytest.mark.slow

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 80},
        "score": {"type": "integer", "minimum": 0, "maximum": 5},
        "keywords": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["title", "score", "keywords"],
}


@pytest.fixture(scope="module")
def backend():
    from agents_llm.backends.llamacpp import LlamaCppBackend

    return LlamaCppBackend("smollm2-135m", n_ctx=2048, n_threads=1)


def test_generates_text_with_token_counts(backend):
    resp = asyncio.run(backend.chat([{"role": "user", "content": "Name a primary colour."}], max_tokens=24))
    assert resp.text.strip()
    assert resp.prompt_tokens > 5 and 0 < resp.completion_tokens <= 24
    assert resp.latency_s > 0 and resp.backend == "llamacpp"


def test_greedy_generation_is_reproducible(backend):
    msgs = [{"role": "user", "content": "Write one sentence about rivers."}]
    a = asyncio.run(backend.chat(msgs, max_tokens=24, temperature=0.0))
    b = asyncio.run(backend.chat(msgs, max_tokens=24, temperature=0.0))
    assert a.text == b.text


def test_schema_constrained_json_is_valid(backend):
    msgs = [
        {"role": "system", "content": "Answer in JSON."},
        {"role": "user", "content": "Give a title, a 0-5 quality score and keywords for a report on solar power."},
    ]
    resp = asyncio.run(backend.chat(msgs, schema=SCHEMA, max_tokens=96))
    assert set(resp.parsed) == {"title", "score", "keywords"}
    assert 0 <= resp.parsed["score"] <= 5 and len(resp.parsed["keywords"]) <= 3


def test_one_model_instance_is_shared(backend):
    from agents_llm.backends.llamacpp import LlamaCppBackend

    other = LlamaCppBackend("smollm2-135m", n_ctx=2048, n_threads=1)
    assert other._llm is backend._llm


def test_concurrent_calls_are_serialised_and_all_answered(backend):
    async def many():
        return await asyncio.gather(
            *[backend.chat([{"role": "user", "content": f"Count to {i}."}], max_tokens=8) for i in range(3)]
        )

    assert all(r.text for r in asyncio.run(many()))


def test_schema_llama_cpp_cannot_turn_into_a_grammar_is_refused(backend):
    with pytest.raises(LLMConfigError, match="cannot turn this JSON schema into a grammar"):
        asyncio.run(backend.chat([{"role": "user", "content": "x"}], schema={"not": {"type": "string"}}))


def test_prompt_longer_than_the_context_is_a_clear_error(backend):
    with pytest.raises(LLMConfigError, match="context window"):
        asyncio.run(backend.chat([{"role": "user", "content": "word " * 5000}], max_tokens=8))


def test_a_generation_past_its_timeout_stops_and_is_reported():
    from agents_llm.backends.llamacpp import LlamaCppBackend

    b = LlamaCppBackend("smollm2-135m", n_ctx=2048, n_threads=1, timeout_s=0.3, retry=RetryPolicy(1))
    t0 = time.perf_counter()
    with pytest.raises(LLMTimeoutError):
        asyncio.run(b.chat([{"role": "user", "content": "Write a long essay about the sea."}], max_tokens=1500))
    # the worker thread was stopped too, so the model is free again right away
    assert time.perf_counter() - t0 < 3.0
    assert b._lock.acquire(timeout=2.0)
    b._lock.release()


def test_json_keys_come_in_the_schema_order_not_alphabetical(backend):
    schema = {
        "type": "object",
        "properties": {
            "zeta_reason": {"type": "string", "maxLength": 40},
            "alpha_score": {"type": "integer", "minimum": 0, "maximum": 5},
        },
        "required": ["zeta_reason", "alpha_score"],
    }
    resp = asyncio.run(
        backend.chat(
            [{"role": "user", "content": "Explain briefly, then score the sky 0-5."}], schema=schema, max_tokens=64
        )
    )
    assert list(resp.parsed) == ["zeta_reason", "alpha_score"]


def test_a_grammar_generation_past_its_timeout_ends_without_aborting_the_process(tmp_path):
    # llama.cpp's grammar throws a C++ exception when made to accept a token it rejects; that
    # aborts the process (exit 134), so this runs in a subprocess. The old deadline processor
    # left only EOS, which a grammar mid-object masks: token 0 was sampled and the run aborted.
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "grammar_timeout.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio
            from agents_llm.backends import LLMTimeoutError, RetryPolicy
            from agents_llm.backends.llamacpp import LlamaCppBackend
            schema = {"type": "object", "properties": {"essay": {"type": "string"}}, "required": ["essay"]}
            b = LlamaCppBackend("smollm2-135m", n_ctx=2048, n_threads=1, timeout_s=0.3, retry=RetryPolicy(2, 0.0, 0.0))
            msgs = [{"role": "user", "content": "Write a long essay about the sea, as JSON."}]
            try:
                asyncio.run(b.chat(msgs, schema=schema, max_tokens=400))
            except LLMTimeoutError:
                print("timed out cleanly")
            with b._lock:
                print("model free")
            """
        )
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "timed out cleanly" in proc.stdout and "model free" in proc.stdout


def test_a_run_ends_without_a_traceback_from_the_models_finalizer(tmp_path):
    """validate_proxy with nothing to run loads the model for its task list and exits; left to
    the interpreter's last collection, Llama.__del__ ran after llama_cpp's globals were gone and
    printed "Exception ignored ... TypeError" over a run that succeeded."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    run = subprocess.run(
        [
            sys.executable,
            str(root / "experiments/protocol/validate_proxy.py"),
            "validate.run_episodes=false",
            f"validate.out={tmp_path / 'panel'}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=dict(os.environ),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Exception ignored" not in run.stderr and "Traceback" not in run.stderr, run.stderr[-3000:]
