"""The native Ollama client (/api/chat), with schema-constrained `format`."""
from __future__ import annotations

from typing import Any

import httpx
import ollama

from .base import ChatRequest, Completion, LLMBackend
from .errors import LLMConfigError, LLMConnectionError, LLMServerError, LLMTimeoutError


class OllamaBackend(LLMBackend):
    name = "ollama"

    def __init__(self, model: str, *, host: str = "http://127.0.0.1:11434", **kwargs: Any):
        super().__init__(model=model, **kwargs)
        self.host = host.rstrip("/")
        self._client = ollama.AsyncClient(host=self.host, timeout=self.timeout_s)

    @property
    def endpoint(self) -> str:
        return f"{self.host}/api/chat"

    async def _generate(self, request: ChatRequest) -> Completion:
        options: dict[str, Any] = {"num_predict": request.max_tokens, "temperature": request.temperature}
        if request.seed is not None:
            options["seed"] = request.seed
        try:
            out = await self._client.chat(model=self.model, messages=request.message_dicts(), stream=False,
                                          format=dict(request.schema) if request.schema is not None else None,
                                          options=options)
        # The client turns a refused connection into ConnectionError (httpx.ConnectError when
        # streaming); both mean the same thing to the user.
        except (ConnectionError, httpx.ConnectError) as e:
            raise LLMConnectionError(f"cannot reach the Ollama server ({e}); start it with `ollama serve`",
                                     backend=self.name, endpoint=self.endpoint) from None
        except httpx.TimeoutException:
            raise LLMTimeoutError("server did not answer in time", backend=self.name, endpoint=self.endpoint) from None
        except ollama.ResponseError as e:
            msg = f"server answered {e.status_code}: {e.error}"
            if e.status_code == 429 or e.status_code >= 500:
                raise LLMServerError(msg, backend=self.name, endpoint=self.endpoint) from None
            raise LLMConfigError(msg, backend=self.name, endpoint=self.endpoint) from None
        return Completion(out.message.content or "", int(out.prompt_eval_count or 0), int(out.eval_count or 0))
