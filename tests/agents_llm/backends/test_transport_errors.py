"""A server that closes the connection in the middle of an answer: retried per policy and
reported in one line naming the endpoint, whichever HTTP library the SDK brings (httpx for
openai<3 and ollama, httpx2 for openai>=3)."""

from __future__ import annotations

import asyncio
import sys

import httpx
import openai
import pytest

from agents_llm.backends import RetryPolicy
from agents_llm.backends.errors import RETRYABLE, LLMServerError
from agents_llm.backends.ollama_native import OllamaBackend
from agents_llm.backends.openai_compat import OpenAIBackend
from agents_llm.backends.transport import http_family, is_transport_error, transport_error

from .cutting_server import CuttingServer

MSG = [{"role": "user", "content": "Say hi"}]
RETRY3 = RetryPolicy(3, 0.01, 0.01)


def _sdk_http_module():
    """The HTTP library the installed OpenAI SDK sends requests with."""
    client = openai.AsyncOpenAI(api_key="x", base_url="http://127.0.0.1:9/v1")
    roots = [cls.__module__.split(".", 1)[0] for cls in type(client._client).__mro__]
    return sys.modules[next(r for r in roots if r not in ("openai", "builtins"))]


def test_the_installed_sdks_http_library_is_one_the_backends_recognise():
    http = _sdk_http_module()
    for name in ("RemoteProtocolError", "ReadError", "ReadTimeout", "TransportError"):
        assert http_family(getattr(http, name)) == http.__name__
    assert is_transport_error(http.RemoteProtocolError("peer closed connection"))
    assert is_transport_error(httpx.RemoteProtocolError("peer closed connection"))
    assert is_transport_error(ConnectionResetError(104, "reset"))
    assert not is_transport_error(ValueError("a bug of ours"))
    # a library renamed by a later SDK major is still recognised by family
    renamed = type("RemoteProtocolError", (Exception,), {"__module__": "httpx3._exceptions"})
    assert is_transport_error(renamed("cut"))
    assert isinstance(transport_error(renamed("cut"), backend="openai", endpoint="http://h/v1"), RETRYABLE)
    timeout = transport_error(http.ReadTimeout("slow"), backend="openai", endpoint="http://h/v1")
    assert isinstance(timeout, RETRYABLE) and "in time" in str(timeout)


@pytest.mark.parametrize("cut", ["cut_body", "cut_chunked", "cut_headers"])
def test_openai_a_connection_closed_mid_answer_is_retried_then_reported_in_one_line(cut):
    with CuttingServer([cut]) as server:
        backend = OpenAIBackend("standin", base_url=server.url, retry=RETRY3)
        with pytest.raises(LLMServerError) as info:
            asyncio.run(backend.chat(MSG))
        assert server.requests == 3
    msg = str(info.value)
    assert "\n" not in msg and f"endpoint={server.url}" in msg and "after 3 attempts" in msg
    assert "connection failed" in msg and "Error" in msg  # the library's error class is named


def test_openai_a_cut_then_a_whole_answer_succeeds_on_the_retry():
    with CuttingServer(["cut_body", "ok"]) as server:
        backend = OpenAIBackend("standin", base_url=server.url, retry=RETRY3)
        resp = asyncio.run(backend.chat(MSG))
        assert server.requests == 2
    assert resp.text == "whole answer" and resp.attempts == 2


@pytest.mark.parametrize("cut", ["cut_body", "cut_chunked"])
def test_ollama_a_connection_closed_mid_answer_is_retried_then_reported_in_one_line(cut):
    with CuttingServer([cut], ollama=True) as server:
        backend = OllamaBackend("standin", host=server.url, retry=RETRY3)
        with pytest.raises(LLMServerError) as info:
            asyncio.run(backend.chat(MSG))
        assert server.requests == 3
    msg = str(info.value)
    assert "\n" not in msg and "endpoint=" in msg and "after 3 attempts" in msg


def test_ollama_a_cut_then_a_whole_answer_succeeds_on_the_retry():
    with CuttingServer(["cut_body", "ok"], ollama=True) as server:
        backend = OllamaBackend("standin", host=server.url, retry=RETRY3)
        resp = asyncio.run(backend.chat(MSG))
        assert server.requests == 2
    assert resp.text == "whole answer"


@pytest.mark.slow
def test_write_report_and_train_against_a_server_cutting_every_answer_exit_with_the_cause(tmp_path):
    """The entry points: exit 3 (write_report) or 1 (train, with a checkpoint), one line naming
    the endpoint and the library's error, no traceback."""
    from .test_failure_cli import REPORT_ENV, TRAIN, WRITE, docs, run

    with CuttingServer(["cut_body"]) as server:
        report = run(
            WRITE,
            [
                "task=Sorting networks",
                f"docs={docs(tmp_path)}",
                "llm=openai",
                f"llm.base_url={server.url}",
                "rag=hashing",
                "judge.embedding=hashing",
                "export.pdf=false",
                f"output_root={tmp_path / 'out'}",
                f"data_root={tmp_path / 'data'}",
            ],
            tmp_path,
        )
        assert server.requests >= 3  # the first call's three attempts, at least
        train = run(
            TRAIN,
            ["algo=qmix", "llm=openai", f"llm.base_url={server.url}", "train.episodes=2", *REPORT_ENV, "logger=csv"],
            tmp_path,
        )
    assert report.returncode == 3, report.stderr[-3000:]
    [line] = [ln for ln in report.stderr.splitlines() if ln.startswith("write_report:")]
    assert "RemoteProtocolError" in line and server.url in line and "after 3 attempts" in line
    assert "Traceback" not in report.stderr
    assert train.returncode == 1, train.stderr[-3000:]
    assert "Traceback" not in train.stderr and "RemoteProtocolError" in train.stderr and "resume=" in train.stderr
