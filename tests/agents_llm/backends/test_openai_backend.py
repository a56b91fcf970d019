"""The openai backend's failure paths, which need no server."""

import asyncio
import socket
import time

import pytest

from agents_llm.backends import LLMConfigError, LLMConnectionError, RetryPolicy
from agents_llm.backends.openai_compat import OpenAIBackend


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_down_fails_fast_naming_the_endpoint():
    port = _free_port()
    b = OpenAIBackend("smollm2", base_url=f"http://127.0.0.1:{port}/v1", retry=RetryPolicy(3, 0.01, 0.01))
    t0 = time.perf_counter()
    with pytest.raises(LLMConnectionError, match=rf"cannot reach the server.*endpoint=http://127.0.0.1:{port}/v1"):
        asyncio.run(b.chat([{"role": "user", "content": "hi"}]))
    assert time.perf_counter() - t0 < 2.0


def test_schema_with_json_mode_none_is_refused_before_calling():
    b = OpenAIBackend("smollm2", base_url="http://127.0.0.1:9/v1", json_mode="none")
    with pytest.raises(LLMConfigError, match="json_mode=none and cannot honour a JSON schema"):
        asyncio.run(b.chat([{"role": "user", "content": "hi"}], schema={"type": "object"}))
