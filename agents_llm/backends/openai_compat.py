"""Any OpenAI-compatible chat server: vLLM, llama.cpp's server, LM Studio, Ollama's /v1,
hosted APIs. The API key is read from a named environment variable, never from config.
"""
from __future__ import annotations

import enum
import os
from typing import Any, Mapping

import openai

from .base import ChatRequest, Completion, LLMBackend
from .errors import LLMConfigError, LLMConnectionError, LLMServerError, LLMTimeoutError
from .json_output import check_schema


class JsonMode(str, enum.Enum):
    """How a JSON schema is sent; servers disagree."""

    json_schema = "json_schema"  # OpenAI standard: response_format={"type": "json_schema", ...} (vLLM, OpenAI)
    json_object_schema = "json_object_schema"  # {"type": "json_object", "schema": ...} (llama.cpp's server)
    none = "none"  # the server cannot constrain output: schema calls are refused


class OpenAIBackend(LLMBackend):
    name = "openai"

    def __init__(self, model: str, *, base_url: str = "http://127.0.0.1:8000/v1",
                 api_key_env: str = "OPENAI_API_KEY", json_mode: str | JsonMode = JsonMode.json_schema,
                 **kwargs: Any):
        super().__init__(model=model, **kwargs)
        self.base_url = base_url
        self.json_mode = JsonMode(json_mode)
        # Local servers ignore the key; hosted ones answer 401, which we report with the variable's name.
        self.api_key_env = api_key_env
        key = os.environ.get(api_key_env) if api_key_env else None
        # Retries are ours (tenacity in the base class), so the SDK's own are off.
        self._client = openai.AsyncOpenAI(base_url=base_url, api_key=key or "not-set", max_retries=0,
                                          timeout=self.timeout_s)

    @property
    def endpoint(self) -> str:
        return self.base_url

    def check_schema_supported(self, schema: Mapping[str, Any]) -> None:
        check_schema(schema, backend=self.name)
        if self.json_mode is JsonMode.none:
            raise LLMConfigError("this server is configured with json_mode=none and cannot honour a JSON schema;"
                                 " set llm.json_mode to json_schema or json_object_schema",
                                 backend=self.name, endpoint=self.endpoint)

    def _response_format(self, schema: Mapping[str, Any] | None) -> dict | None:
        if schema is None:
            return None
        if self.json_mode is JsonMode.json_object_schema:
            return {"type": "json_object", "schema": dict(schema)}
        return {"type": "json_schema", "json_schema": {"name": "response", "schema": dict(schema)}}

    async def _generate(self, request: ChatRequest) -> Completion:
        kwargs: dict[str, Any] = dict(model=self.model, messages=request.message_dicts(),
                                      max_tokens=request.max_tokens, temperature=request.temperature)
        if request.seed is not None:
            kwargs["seed"] = request.seed
        fmt = self._response_format(request.schema)
        if fmt is not None:
            kwargs["response_format"] = fmt
        try:
            out = await self._client.chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            raise LLMTimeoutError("server did not answer in time", backend=self.name, endpoint=self.endpoint) from None
        except openai.APIConnectionError as e:
            raise LLMConnectionError(f"cannot reach the server ({e.__cause__ or e}); is it running?",
                                     backend=self.name, endpoint=self.endpoint) from None
        except openai.AuthenticationError:
            raise LLMConfigError(f"authentication failed: set the API key in ${self.api_key_env}",
                                 backend=self.name, endpoint=self.endpoint) from None
        except openai.APIStatusError as e:
            msg = f"server answered {e.status_code}: {str(e.message)[:300]}"
            if e.status_code == 429 or e.status_code >= 500:
                raise LLMServerError(msg, backend=self.name, endpoint=self.endpoint) from None
            raise LLMConfigError(msg, backend=self.name, endpoint=self.endpoint) from None
        if not out.choices:
            raise LLMServerError("server answered with no choices", backend=self.name, endpoint=self.endpoint)
        usage = out.usage
        text = out.choices[0].message.content or ""
        return Completion(text, usage.prompt_tokens if usage else 0, usage.completion_tokens if usage else 0)

    async def aclose(self) -> None:
        await self._client.close()
