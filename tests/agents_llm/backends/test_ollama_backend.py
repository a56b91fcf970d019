"""The native Ollama client against a local stand-in speaking Ollama's /api/chat protocol.

No Ollama server can be installed here, so a small aiohttp app on 127.0.0.1 plays one:
it answers like Ollama does (message, prompt_eval_count, eval_count, done) and records
what it was sent, so the tests check the request (format = schema, options) as well.
"""

import asyncio
import time

import pytest

from agents_llm.backends import LLMConfigError, LLMConnectionError, LLMServerError, RetryPolicy
from agents_llm.backends.ollama_native import OllamaBackend

from .standins import OllamaStandIn
from .standins import free_port as _free_port

MSG = [{"role": "user", "content": "Say hi"}]


@pytest.fixture
def server():
    with OllamaStandIn() as s:
        yield s


def test_chat_returns_text_and_token_counts(server):
    b = OllamaBackend("qwen2.5:0.5b", host=f"http://127.0.0.1:{server.port}")
    resp = asyncio.run(b.chat(MSG, max_tokens=32, temperature=0.2, seed=5))
    assert resp.text == "Hello from the stand-in."
    assert (resp.prompt_tokens, resp.completion_tokens) == (11, 7)
    sent = server.requests[-1]
    assert sent["options"] == {"num_predict": 32, "temperature": 0.2, "seed": 5}
    assert sent["messages"] == MSG and sent["stream"] is False


def test_schema_goes_out_as_format_and_comes_back_parsed(server):
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    b = OllamaBackend("qwen2.5:0.5b", host=f"http://127.0.0.1:{server.port}")
    resp = asyncio.run(b.chat(MSG, schema=schema))
    assert resp.parsed == {"ok": True}
    assert server.requests[-1]["format"] == schema


def test_server_errors_are_retried(server):
    server.fail_next = [503]
    b = OllamaBackend("qwen2.5:0.5b", host=f"http://127.0.0.1:{server.port}", retry=RetryPolicy(3, 0.01, 0.01))
    resp = asyncio.run(b.chat(MSG))
    assert resp.attempts == 2 and len(server.requests) == 2


def test_persistent_server_error_is_reported_after_retries(server):
    server.fail_next = [500, 500]
    b = OllamaBackend("qwen2.5:0.5b", host=f"http://127.0.0.1:{server.port}", retry=RetryPolicy(2, 0.01, 0.01))
    with pytest.raises(LLMServerError, match=r"answered 500.*after 2 attempts"):
        asyncio.run(b.chat(MSG))


def test_unknown_model_is_not_retried(server):
    b = OllamaBackend("llama9", host=f"http://127.0.0.1:{server.port}", retry=RetryPolicy(3, 0.01, 0.01))
    with pytest.raises(LLMConfigError, match="model 'llama9' not found"):
        asyncio.run(b.chat(MSG))
    assert len(server.requests) == 1


def test_nothing_listening_fails_fast_naming_the_endpoint():
    port = _free_port()
    b = OllamaBackend("qwen2.5:0.5b", host=f"http://127.0.0.1:{port}")
    t0 = time.perf_counter()
    with pytest.raises(
        LLMConnectionError, match=rf"cannot reach the Ollama server.*endpoint=http://127.0.0.1:{port}/api/chat"
    ):
        asyncio.run(b.chat(MSG))
    assert time.perf_counter() - t0 < 2.0
