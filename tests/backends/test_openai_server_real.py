"""The openai backend against a real OpenAI-compatible server: llama-cpp-python's own
`llama_cpp.server`, started here on 127.0.0.1 with SmolLM2 and stopped after."""
import asyncio
import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from agents_llm.backends import LLMConnectionError, LLMConfigError, RetryPolicy
from agents_llm.backends.models import resolve_model
from agents_llm.backends.openai_compat import OpenAIBackend

pytestmark = pytest.mark.slow


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    port = _free_port()
    log = open(tmp_path_factory.mktemp("server") / "server.log", "w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(resolve_model("smollm2-135m")),
         "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
         "--n_threads", "1"], stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"})
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 90
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                log.seek(0)
                pytest.fail(f"llama_cpp.server did not start: {log.read()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def test_chat_through_a_real_server(server_url):
    b = OpenAIBackend("smollm2", base_url=server_url)
    resp = asyncio.run(b.chat([{"role": "user", "content": "Name a fruit."}], max_tokens=16))
    assert resp.text.strip() and resp.prompt_tokens > 0 and 0 < resp.completion_tokens <= 16


def test_schema_through_the_server_comes_back_valid(server_url):
    schema = {"type": "object", "properties": {"fruit": {"type": "string", "maxLength": 30},
                                                "sweet": {"type": "boolean"}}, "required": ["fruit", "sweet"]}
    b = OpenAIBackend("smollm2", base_url=server_url, json_mode="json_object_schema")
    resp = asyncio.run(b.chat([{"role": "user", "content": "Name a fruit and say if it is sweet, as JSON."}],
                              schema=schema, max_tokens=48))
    assert isinstance(resp.parsed["fruit"], str) and isinstance(resp.parsed["sweet"], bool)


def test_api_key_is_read_from_the_named_variable(server_url, monkeypatch):
    monkeypatch.setenv("QMIX_TEST_KEY", "sk-test-123")
    b = OpenAIBackend("smollm2", base_url=server_url, api_key_env="QMIX_TEST_KEY")
    assert b._client.api_key == "sk-test-123"
