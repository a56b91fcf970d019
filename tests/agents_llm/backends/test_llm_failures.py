"""A failed LLM call is a failure: malformed answers, dead and hanging servers, error bodies
that echo credentials, the response cache across endpoints (fast, stand-in servers)."""

from __future__ import annotations

import asyncio

import pytest

from agents_llm.backends import LLMConnectionError, LLMError, ResponseCache, RetryPolicy, TokenLedger
from agents_llm.backends.errors import LLMResponseError
from agents_llm.backends.ollama_native import OllamaBackend
from agents_llm.backends.openai_compat import OpenAIBackend
from report_protocol import ActionTable
from tests.report_doubles import HASHING_JUDGE, StubRetriever, isolated_cache  # noqa: F401 (fixture)

from .standins import OllamaStandIn, OpenAIStandIn, free_port

MSG = [{"role": "user", "content": "Say hi"}]
FAST_RETRY = RetryPolicy(2, 0.01, 0.01)
T = ActionTable(4)
TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
APPEND_ROUND = {**{a: T.solo for a in TEAM}, "DataAnalyst": T.append}

MALFORMED = {  # mode -> what the one-line error must say
    "html": r"not JSON \(text/html, \d+ bytes\); it began '<html><body><h1>502 Bad Gateway",
    "not_json": r"not JSON \(application/json, \d+ bytes\); it began 'upstream",
    "huge": r"larger than the 1000000-byte cap \(llm.max_response_bytes\)",
    "null_content": r"choices\[0\].message.content is null",
    "null_usage": r"usage(.prompt_tokens)? is (null|missing)",
    "no_usage": r"usage(.prompt_tokens)? is missing",
}
OLLAMA_MALFORMED = {
    "html": r"not an Ollama chat response \(JSONDecodeError",
    "not_json": r"not an Ollama chat response \(JSONDecodeError",
    "huge": r"larger than the 1000000-byte cap",
    "null_content": r"message.content is null",
    "null_usage": r"eval_count \(completion tokens\) is missing",
}


@pytest.fixture(scope="module")
def openai_server():
    with OpenAIStandIn() as s:
        yield s


@pytest.fixture(scope="module")
def ollama_server():
    with OllamaStandIn() as s:
        yield s


def _one_line_error(exc: BaseException, endpoint: str) -> str:
    msg = str(exc)
    assert "\n" not in msg and f"endpoint={endpoint}" in msg, msg
    return msg


@pytest.mark.parametrize("mode", sorted(MALFORMED))
def test_malformed_openai_answers_are_one_line_errors_retried_per_policy(openai_server, mode):
    openai_server.mode, before = mode, len(openai_server.requests)
    b = OpenAIBackend("standin", base_url=openai_server.url, retry=FAST_RETRY)
    try:
        with pytest.raises(LLMResponseError, match=MALFORMED[mode]) as info:
            asyncio.run(b.chat(MSG))
    finally:
        openai_server.mode = "ok"
    assert "after 2 attempts" in _one_line_error(info.value, openai_server.url)
    assert len(openai_server.requests) - before == 2


@pytest.mark.parametrize("mode", sorted(OLLAMA_MALFORMED))
def test_malformed_ollama_answers_are_one_line_errors_retried_per_policy(ollama_server, mode):
    ollama_server.mode, before = mode, len(ollama_server.requests)
    b = OllamaBackend("qwen2.5:0.5b", host=ollama_server.url, retry=FAST_RETRY)
    try:
        with pytest.raises(LLMResponseError, match=OLLAMA_MALFORMED[mode]) as info:
            asyncio.run(b.chat(MSG))
    finally:
        ollama_server.mode = "ok"
    _one_line_error(info.value, f"{ollama_server.url}/api/chat")
    assert len(ollama_server.requests) - before == 2


def test_response_size_cap_is_a_setting(openai_server):
    from agents_llm.backends import LLMConfigError

    openai_server.mode = "huge"
    try:
        b = OpenAIBackend("standin", base_url=openai_server.url, retry=RetryPolicy(1), max_response_bytes=4096)
        with pytest.raises(LLMResponseError, match="larger than the 4096-byte cap"):
            asyncio.run(b.chat(MSG))
    finally:
        openai_server.mode = "ok"
    with pytest.raises(LLMConfigError, match="llm.max_response_bytes must be an integer >= 1024"):
        OpenAIBackend("standin", base_url=openai_server.url, max_response_bytes=0)


def test_token_accounting_refuses_a_missing_count():
    ledger = TokenLedger()
    with pytest.raises(ValueError, match="prompt_tokens must be a non-negative number of tokens, got None"):
        ledger.charge("Researcher", None, 3)
    with pytest.raises(ValueError, match="completion_tokens"):
        ledger.charge("Researcher", 3, -1)
    assert ledger.total.calls == 0


def test_an_error_body_echoing_the_authorization_header_is_not_printed(openai_server, monkeypatch):
    monkeypatch.setenv("STANDIN_AUTH", "abc-live-0123456789")  # a name the env-value scrub does not catch
    openai_server.mode = "echo_auth"
    try:
        b = OpenAIBackend("standin", base_url=openai_server.url, api_key_env="STANDIN_AUTH", retry=RetryPolicy(1))
        with pytest.raises(LLMError, match="server answered 400") as info:
            asyncio.run(b.chat(MSG))
    finally:
        openai_server.mode = "ok"
    assert openai_server.headers[-1]["Authorization"] == "Bearer abc-live-0123456789"  # it was sent...
    assert "abc-live-0123456789" not in str(info.value) and "[REDACTED]" in str(info.value)  # ...not echoed


def test_credentials_in_the_url_are_refused_without_repeating_them():
    from agents_llm.backends import LLMConfigError, make_backend

    for cfg in (
        {"backend": "openai", "model": "m", "base_url": "http://alice:S3cretPass99@127.0.0.1:9/v1"},
        {"backend": "ollama", "model": "m", "host": "https://alice:S3cretPass99@ollama.example"},
    ):
        with pytest.raises(LLMConfigError, match=r"must not carry credentials") as info:
            make_backend(cfg)
        assert "S3cretPass99" not in str(info.value) and "alice" not in str(info.value)


def test_the_response_cache_never_answers_for_another_endpoint(openai_server, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    live = OpenAIBackend("standin", base_url=openai_server.url, cache=cache)
    first = asyncio.run(live.chat(MSG))
    assert not first.cached and asyncio.run(live.chat(MSG)).cached  # replay works on the same server
    dead = OpenAIBackend("standin", base_url=f"http://127.0.0.1:{free_port()}/v1", cache=cache)
    with pytest.raises(LLMConnectionError):
        asyncio.run(dead.chat(MSG))


# -- the engine and the env: an episode whose LLM fails ends as llm_error ---------------
def _env(llm, **kw):
    from envs.report.writing import ReportWritingEnv

    return ReportWritingEnv(
        llm=llm,
        retriever=StubRetriever(),
        judge=HASHING_JUDGE,
        max_rounds=3,
        min_rounds_before_terminate=1,
        **{"infos": "full", **kw},
    )  # reads end_reason text


def test_dead_server_ends_the_episode_with_llm_error_and_the_cause():
    url = f"http://127.0.0.1:{free_port()}/v1"
    env = _env({"backend": "openai", "model": "m", "base_url": url, "retry": {"max_attempts": 1}})
    env.reset(seed=0)
    _, _, terms, truncs, infos = env.step(APPEND_ROUND)
    info = infos["LeadArchitect"]
    assert info["end_reason"] == "llm_error" and truncs["LeadArchitect"] and not terms["LeadArchitect"]
    assert "LLMConnectionError: cannot reach the server" in info["llm_error"] and url in info["llm_error"]
    assert info["llm_errors"] == info["llm_calls"] > 0
    assert env.trace.end["reason"] == "llm_error" and "cannot reach the server" in env.trace.end["detail"]
    assert env.agents == []  # the episode is over
    # what training reads (the env contract's call_failures): every call failed, none succeeded, the cause
    from envs import get_call_failures

    failures = get_call_failures(env)
    assert failures.failed == failures.calls == info["llm_calls"] and failures.share == 1.0
    assert failures.none_succeeded and failures.cause == env.trace.end["detail"]


def test_a_server_that_times_out_on_every_call_ends_the_episode(openai_server):
    openai_server.mode = "hang"
    try:
        env = _env(
            {
                "backend": "openai",
                "model": "m",
                "base_url": openai_server.url,
                "timeout_s": 0.3,
                "retry": {"max_attempts": 1},
            }
        )
        env.reset(seed=0)
        _, _, _, _, infos = env.step(APPEND_ROUND)
    finally:
        openai_server.mode = "ok"
    assert infos["Reviewer"]["end_reason"] == "llm_error"
    assert "all" in infos["Reviewer"]["llm_error"] and "LLMTimeoutError" in infos["Reviewer"]["llm_error"]


def test_some_failed_calls_are_counted_and_summed_per_episode(openai_server):
    """One role's calls fail (after retries); the others succeed: the episode carries on and
    the rollout's episode stats add up the failures the rounds reported."""
    import algos
    from algos.training.rollout import run_episode

    openai_server.fail_when = "You are the Reviewer"
    try:
        env = _env({"backend": "openai", "model": "m", "base_url": openai_server.url, "retry": {"max_attempts": 1}})
        spec = algos.EnvSpec.from_env(env)
        _, stats = run_episode(env, algos.build("random", spec, {}), spec, explore=True, seed=0)
    finally:
        openai_server.fail_when = None
    per_round = [r["llm"] for r in env.trace.rounds]
    assert stats.infos["llm_errors"] == sum(r["errors"] for r in per_round)
    assert stats.infos["llm_calls"] == sum(r["calls"] for r in per_round) > stats.infos["llm_errors"]
    assert env.trace.end["reason"] != "llm_error"
    # the env's report agrees with the logged sums; the cause is the first failed call's error
    assert (stats.failures.calls, stats.failures.failed) == (stats.infos["llm_calls"], stats.infos["llm_errors"])
    assert not stats.failures.none_succeeded and stats.failures.cause not in ("", "unknown")


def test_write_report_api_raises_the_cause_and_keeps_what_it_wrote(tmp_path):
    from report_app.api import ReportLLMError, run_report

    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ReportLLMError, match=r"the LLM failed after 1 round\(s\): LLMConnectionError") as info:
        run_report(
            "Sorting networks",
            llm={"backend": "openai", "model": "m", "base_url": url},
            # Documents on the topic: the run reaches the model (unrelated ones stop before it).
            retriever=StubRetriever(texts=("Sorting networks compare and swap pairs of values in a fixed order.",)),
            judge=HASHING_JUDGE,
            output_root=tmp_path,
            pdf=False,
        )
    files = info.value.files
    assert files["trace"] and files["markdown"]
    md = open(files["markdown"]).read()
    assert "the language model failed" in md and "did not give enough evidence" not in md


@pytest.mark.parametrize(
    "report, reused, evaluated",
    [
        ({"usage": {"prompt_tokens_details": {"cached_tokens": 8}}}, 8, 3),  # OpenAI, vLLM, SGLang
        ({"timings": {"cache_n": 6, "prompt_n": 5, "prompt_ms": 1.5}}, 6, 5),  # llama.cpp's server
        ({}, 0, 11),  # nothing reported: everything counted as evaluated
        ({"usage": {"prompt_tokens_details": {"cached_tokens": 99}}}, 0, 11),  # more than the prompt: ignored
        ({"usage": {"prompt_tokens_details": {"cached_tokens": True}}}, 0, 11),  # not a count: ignored
        ({"usage": {"prompt_tokens_details": None}}, 0, 11),
    ],
)
def test_a_servers_prompt_cache_report_reaches_the_token_counts(openai_server, report, reused, evaluated):
    """The stand-in's prompt has 11 tokens; what the server says it took from its cache is
    counted as reused, the rest as evaluated, as the in-process model's prefix reuse is."""
    openai_server.extra = report
    b = OpenAIBackend("standin", base_url=openai_server.url, retry=RetryPolicy(1, 0.01, 0.01))
    r = asyncio.run(b.chat([{"role": "user", "content": "hi"}]))
    assert (r.prompt_tokens, r.prompt_tokens_reused, r.prompt_tokens_evaluated) == (11, reused, evaluated)
