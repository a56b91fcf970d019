"""The shared call path (validation, retries, timeout, budget, cache) on the scripted test double."""

import asyncio
import time

import pytest

from agents_llm.backends import (
    LLMConfigError,
    LLMOutputError,
    LLMTimeoutError,
    ResponseCache,
    RetryPolicy,
    TokenBudgetExceeded,
    TokenLedger,
)
from agents_llm.backends.base import Completion
from agents_llm.backends.scripted import ScriptedBackend

SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 5}},
    "required": ["score"],
}
FAST_RETRY = RetryPolicy(max_attempts=3, backoff_s=0.01, backoff_max_s=0.02)
MSG = [{"role": "user", "content": "rate this"}]


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize(
    "messages, needle",
    [
        ([], "empty message list"),
        ([{"role": "robot", "content": "x"}], "role 'robot'"),
        ([{"role": "user"}], "'role' and 'content'"),
        ([{"role": "user", "content": 3}], "content must be str"),
    ],
)
def test_bad_messages_are_refused_before_any_call(messages, needle):
    b = ScriptedBackend()
    with pytest.raises(LLMConfigError, match=needle):
        run(b.chat(messages))
    assert b.calls == []


def test_bad_sampling_parameters_are_refused():
    b = ScriptedBackend()
    with pytest.raises(LLMConfigError, match="max_tokens"):
        run(b.chat(MSG, max_tokens=0))
    with pytest.raises(LLMConfigError, match="temperature"):
        run(b.chat(MSG, temperature=-1.0))


def test_invalid_schema_names_the_problem():
    b = ScriptedBackend()
    with pytest.raises(LLMConfigError, match="invalid JSON schema at properties/score/type"):
        run(b.chat(MSG, schema={"type": "object", "properties": {"score": {"type": "integr"}}}))


def test_schema_answer_is_parsed_and_validated():
    b = ScriptedBackend(rules=[("rate", 'Sure! ```json\n{"score": 4}\n```')])
    resp = run(b.chat(MSG, schema=SCHEMA))
    assert resp.parsed == {"score": 4}


def test_malformed_json_is_retried_then_reported_with_attempt_count():
    b = ScriptedBackend(rules=[("rate", "I think it is good, maybe four?")], retry=FAST_RETRY)
    ledger = TokenLedger()
    with pytest.raises(LLMOutputError, match=r"not JSON.*after 3 attempts"):
        run(b.chat(MSG, schema=SCHEMA, caller="judge", ledger=ledger))
    assert len(b.calls) == 3
    # the failed attempts still cost tokens
    assert ledger.by_caller["judge"].calls == 3


def test_out_of_range_json_fails_schema_and_recovers_on_retry():
    answers = iter(['{"score": 9}', '{"score": 3}'])
    b = ScriptedBackend(responder=lambda req: next(answers), retry=FAST_RETRY)
    resp = run(b.chat(MSG, schema=SCHEMA))
    assert resp.parsed == {"score": 3}
    assert resp.attempts == 2


def test_timeout_is_reported_with_backend_and_retried():
    b = ScriptedBackend(latency_s=0.5, timeout_s=0.05, retry=RetryPolicy(2, 0.01, 0.01))
    t0 = time.perf_counter()
    with pytest.raises(LLMTimeoutError, match=r"timed out after 0.1 s.*backend=scripted.*after 2 attempts"):
        run(b.chat(MSG))
    assert time.perf_counter() - t0 < 0.5
    assert len(b.calls) == 2


def test_zero_budget_is_a_clear_error():
    with pytest.raises(ValueError, match="positive integer"):
        TokenLedger(budget=0)


def test_budget_stops_before_the_call_that_would_exceed_it():
    b = ScriptedBackend()
    ledger = TokenLedger(budget=10)
    run(b.chat([{"role": "user", "content": "one two three four five six"}], caller="Researcher", ledger=ledger))
    assert ledger.total.total >= 10
    with pytest.raises(
        TokenBudgetExceeded, match=r"before a call by Reviewer: used \d+ of 10 tokens; largest user Researcher"
    ):
        run(b.chat(MSG, caller="Reviewer", ledger=ledger))
    assert len(b.calls) == 1


def test_tokens_are_accounted_per_caller_and_per_episode():
    b = ScriptedBackend()
    ep1, ep2 = TokenLedger(), TokenLedger()
    r1 = run(b.chat(MSG, caller="A", ledger=ep1))
    r2 = run(b.chat([{"role": "user", "content": "a b c d e f g"}], caller="B", ledger=ep1))
    r3 = run(b.chat(MSG, caller="A", ledger=ep2))
    assert ep1.by_caller["A"].total == r1.total_tokens
    assert ep1.total.total == r1.total_tokens + r2.total_tokens
    assert ep2.total.total == r3.total_tokens
    assert b.usage.by_caller["A"].calls == 2


def test_cache_replays_exactly_and_skips_the_backend(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    b = ScriptedBackend(cache=cache)
    first = run(b.chat(MSG, seed=1))
    again = run(b.chat(MSG, seed=1))
    other_seed = run(b.chat(MSG, seed=2))
    assert (again.text, again.prompt_tokens, again.completion_tokens) == (
        first.text,
        first.prompt_tokens,
        first.completion_tokens,
    )
    assert again.cached and not first.cached and not other_seed.cached
    assert len(b.calls) == 2
    # a new process (new cache object on the same file) replays too
    b2 = ScriptedBackend(cache=ResponseCache(tmp_path / "c.sqlite"))
    assert run(b2.chat(MSG, seed=1)).text == first.text and b2.calls == []


def test_a_cached_fallback_answer_replays_with_its_fallback_note(tmp_path):
    """A replayed fallback must stay a fallback: the LLM judge flags it, the referee reads it."""
    note = "grammar-constrained decoding failed (RuntimeError: grammar stack empty)"

    class FallingBack(ScriptedBackend):
        async def _generate(self, req):
            comp = await super()._generate(req)
            return Completion(comp.text, comp.prompt_tokens, comp.completion_tokens, note if req.seed == 1 else "")

    path = tmp_path / "c.sqlite"
    first = run(FallingBack(cache=ResponseCache(path)).chat(MSG, seed=1))
    plain = run(FallingBack(cache=ResponseCache(path)).chat(MSG, seed=2))
    replay = FallingBack(cache=ResponseCache(path))  # another process on the same file
    again, again_plain = run(replay.chat(MSG, seed=1)), run(replay.chat(MSG, seed=2))
    assert first.fallback == note and again.cached and again.fallback == note
    assert plain.fallback == "" and again_plain.cached and again_plain.fallback == ""
    assert replay.calls == []


def test_a_cache_file_from_before_fallback_notes_opens_and_replays(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(str(path))
    db.execute(
        "CREATE TABLE responses (key TEXT PRIMARY KEY, text TEXT NOT NULL,"
        " prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL)"
    )
    db.execute("INSERT INTO responses VALUES ('k', 'an old answer', 12, 3)")
    db.commit()
    db.close()
    cache = ResponseCache(path)
    assert tuple(cache.get("k")) == ("an old answer", 12, 3, "")
    cache.put("k2", "a new answer", 5, 2, "a note")
    assert cache.get("k2").fallback == "a note" and len(cache) == 2


def test_chat_sync_works_inside_a_running_event_loop():
    b = ScriptedBackend()

    async def inside_loop():
        return b.chat_sync(MSG)

    assert run(inside_loop()).text.startswith("Scripted reply")


def test_raw_newlines_inside_json_strings_are_tolerated():
    b = ScriptedBackend(rules=[("rate", '{"score": 2, "note": "line one\nline two"}')])
    schema = {"type": "object", "properties": {"score": {"type": "integer"}, "note": {"type": "string"}}}
    assert run(b.chat(MSG, schema=schema)).parsed == {"score": 2, "note": "line one\nline two"}
