"""Any OpenAI-compatible chat server: vLLM, llama.cpp's server, LM Studio, Ollama's /v1,
hosted APIs. The API key is read from a named environment variable, never from config;
a `base_url` carrying credentials (`http://user:pass@host`) is refused for that reason.

The SDK client is bound to the running event loop (one per loop, see LoopBoundClients),
and its answer is read as raw bytes under a size cap and checked field by field, so a
malformed "200 OK" is an LLMResponseError naming the endpoint, not a traceback.
"""

from __future__ import annotations

import enum
import os
from typing import Any, Mapping

import openai

from report_protocol.url_policy import url_credential_problem

from ..redaction import redact_text, register_secret, secret_setting_problem
from .base import ChatRequest, Completion, LLMBackend, LoopBoundClients
from .errors import LLMConfigError, LLMConnectionError, LLMServerError, LLMTimeoutError
from .http_response import (
    DEFAULT_MAX_RESPONSE_BYTES,
    check_max_response_bytes,
    parse_json_body,
    prompt_cache_counts,
    read_capped,
    require,
    token_count,
)
from .json_output import check_schema
from .transport import is_connect_error, is_transport_error, transport_error


class JsonMode(str, enum.Enum):
    """How a JSON schema is sent; servers disagree."""

    json_schema = "json_schema"  # OpenAI standard: response_format={"type": "json_schema", ...} (vLLM, OpenAI)
    json_object_schema = "json_object_schema"  # {"type": "json_object", "schema": ...} (llama.cpp's server)
    none = "none"  # the server cannot constrain output: schema calls are refused


class OpenAIBackend(LLMBackend):
    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "http://127.0.0.1:8000/v1",
        api_key_env: str = "OPENAI_API_KEY",
        json_mode: str | JsonMode = JsonMode.json_schema,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        **kwargs: Any,
    ):
        super().__init__(model=model, **kwargs)
        check_base_url(base_url, key="llm.base_url", backend=self.name)
        self.base_url = base_url
        self.json_mode = JsonMode(json_mode)
        self.max_response_bytes = check_max_response_bytes(max_response_bytes, self.name)
        # Local servers ignore the key; hosted ones answer 401, which we report with the variable's name.
        problem = secret_setting_problem("llm.api_key_env", api_key_env)  # a key pasted where its name goes
        if problem:
            raise LLMConfigError(problem)
        self.api_key_env = api_key_env
        self.api_key = (os.environ.get(api_key_env) if api_key_env else None) or "not-set"
        register_secret(self.api_key if self.api_key != "not-set" else None)  # redacted wherever it shows up
        self._clients = LoopBoundClients(self._new_client)

    def _new_client(self) -> openai.AsyncOpenAI:
        # Retries are ours (tenacity in the base class), so the SDK's own are off.
        return openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout_s)

    @property
    def endpoint(self) -> str:
        return self.base_url

    def check_schema_supported(self, schema: Mapping[str, Any]) -> None:
        check_schema(schema, backend=self.name)
        if self.json_mode is JsonMode.none:
            raise LLMConfigError(
                "this server is configured with json_mode=none and cannot honour a JSON schema;"
                " set llm.json_mode to json_schema or json_object_schema",
                backend=self.name,
                endpoint=self.endpoint,
            )

    def _response_format(self, schema: Mapping[str, Any] | None) -> dict | None:
        if schema is None:
            return None
        if self.json_mode is JsonMode.json_object_schema:
            return {"type": "json_object", "schema": dict(schema)}
        return {"type": "json_schema", "json_schema": {"name": "response", "schema": dict(schema)}}

    async def _generate(self, request: ChatRequest) -> Completion:
        kwargs: dict[str, Any] = dict(
            model=self.model,
            messages=request.message_dicts(),
            max_tokens=request.max_tokens,
            temperature=request.temperature,
        )
        if request.seed is not None:
            kwargs["seed"] = request.seed
        fmt = self._response_format(request.schema)
        if fmt is not None:
            kwargs["response_format"] = fmt
        where = dict(backend=self.name, endpoint=self.endpoint)
        client = self._clients.get()
        try:
            async with client.chat.completions.with_streaming_response.create(**kwargs) as raw:
                body = await read_capped(raw.iter_bytes(), self.max_response_bytes, **where)
                content_type = raw.headers.get("content-type", "")
        except openai.APITimeoutError:
            raise LLMTimeoutError("server did not answer in time", **where) from None
        except openai.APIConnectionError as e:
            cause = e.__cause__
            if cause is not None and not is_connect_error(cause) and is_transport_error(cause):
                # connected, then the connection broke before the answer's headers: retried
                raise transport_error(cause, reading=False, backend=self.name, endpoint=self.endpoint) from None
            raise LLMConnectionError(f"cannot reach the server ({cause or e}); is it running?", **where) from None
        except openai.AuthenticationError:
            raise LLMConfigError(f"authentication failed: set the API key in ${self.api_key_env}", **where) from None
        except openai.APIStatusError as e:
            msg = f"server answered {e.status_code}: {str(e.message)[:300]}"
            if e.status_code == 429 or e.status_code >= 500:
                raise LLMServerError(msg, **where) from None
            raise LLMConfigError(msg, **where) from None
        except Exception as e:  # while the body was being read: whichever HTTP library the SDK uses
            if not is_transport_error(e):
                raise
            raise transport_error(e, backend=self.name, endpoint=self.endpoint) from None
        data = parse_json_body(body, content_type, **where)
        choices = require(data, ("choices",), list, **where)
        if not choices:
            raise LLMServerError("server answered with no choices", **where)
        text = require(data, ("choices", 0, "message", "content"), str, **where)
        prompt_tokens = token_count(data, ("usage", "prompt_tokens"), **where)
        reused, evaluated = prompt_cache_counts(data, prompt_tokens)
        return Completion(
            text,
            prompt_tokens,
            token_count(data, ("usage", "completion_tokens"), **where),
            prompt_tokens_reused=reused,
            prompt_tokens_evaluated=evaluated,
        )

    async def aclose(self) -> None:
        client = self._clients.pop_current()
        if client is not None:
            await client.close()


def check_base_url(url: str, *, key: str, backend: str) -> None:
    """Refuse a URL with credentials in it (``user:password@``, ``?key=``, ``access_token=``,
    ``sig=``...): they would be copied into every config, trace and log."""
    problem = url_credential_problem(url or "")
    if problem:
        raise LLMConfigError(
            f"{key} must not carry credentials, but {redact_text(url)} has {problem}; "
            "a URL is written to configs, traces and logs, so put the key in the environment "
            "variable named by llm.api_key_env",
            backend=backend,
        )
