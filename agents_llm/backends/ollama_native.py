"""The native Ollama client (/api/chat), with schema-constrained `format`.

The client is bound to the running event loop (one per loop, see LoopBoundClients); its
HTTP transport caps the response size, and an answer that is not an Ollama chat
response (not JSON, wrong shape, null content) is an LLMResponseError naming the
endpoint, retried like a server error.
"""

from __future__ import annotations

from typing import Any

import httpx
import ollama

from .base import ChatRequest, Completion, LLMBackend, LoopBoundClients
from .errors import LLMConfigError, LLMConnectionError, LLMResponseError, LLMServerError, LLMTimeoutError
from .http_response import DEFAULT_MAX_RESPONSE_BYTES, CappedTransport, check_max_response_bytes
from .openai_compat import check_base_url
from .transport import is_transport_error, transport_error


class OllamaBackend(LLMBackend):
    name = "ollama"

    def __init__(
        self,
        model: str,
        *,
        host: str = "http://127.0.0.1:11434",
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        **kwargs: Any,
    ):
        super().__init__(model=model, **kwargs)
        check_base_url(host, key="llm.host", backend=self.name)
        self.host = host.rstrip("/")
        self.max_response_bytes = check_max_response_bytes(max_response_bytes, self.name)
        self._clients = LoopBoundClients(self._new_client)

    def _new_client(self) -> ollama.AsyncClient:
        transport = CappedTransport(self.max_response_bytes, backend=self.name, endpoint=self.endpoint)
        return ollama.AsyncClient(host=self.host, timeout=self.timeout_s, transport=transport)

    @property
    def endpoint(self) -> str:
        return f"{self.host}/api/chat"

    async def _generate(self, request: ChatRequest) -> Completion:
        options: dict[str, Any] = {"num_predict": request.max_tokens, "temperature": request.temperature}
        if request.seed is not None:
            options["seed"] = request.seed
        where = dict(backend=self.name, endpoint=self.endpoint)
        try:
            out = await self._clients.get().chat(
                model=self.model,
                messages=request.message_dicts(),
                stream=False,
                format=dict(request.schema) if request.schema is not None else None,
                options=options,
            )
        # The client turns a refused connection into ConnectionError (httpx.ConnectError when
        # streaming); both mean the same thing to the user.
        except (ConnectionError, httpx.ConnectError) as e:
            raise LLMConnectionError(
                f"cannot reach the Ollama server ({e}); start it with `ollama serve`", **where
            ) from None
        except httpx.TimeoutException:
            raise LLMTimeoutError("server did not answer in time", **where) from None
        except ollama.ResponseError as e:
            msg = f"server answered {e.status_code}: {str(e.error)[:300]}"
            if e.status_code == 429 or e.status_code >= 500:
                raise LLMServerError(msg, **where) from None
            raise LLMConfigError(msg, **where) from None
        except (ValueError, TypeError) as e:  # a body that is not JSON, or JSON of the wrong shape
            first = str(e).splitlines()[0] if str(e) else ""
            raise LLMResponseError(
                f"response body is not an Ollama chat response ({type(e).__name__}: {first[:160]})", **where
            ) from None
        except Exception as e:  # the connection broke while the answer was being read (any HTTP library)
            if not is_transport_error(e):
                raise
            raise transport_error(e, backend=self.name, endpoint=self.endpoint) from None
        if out.message is None or out.message.content is None:
            raise LLMResponseError("malformed response: message.content is null", **where)
        if out.eval_count is None:
            raise LLMResponseError("malformed response: eval_count (completion tokens) is missing", **where)
        # Ollama leaves prompt_eval_count out when the whole prompt came from its cache.
        return Completion(out.message.content, int(out.prompt_eval_count or 0), int(out.eval_count))

    async def aclose(self) -> None:
        client = self._clients.pop_current()
        if client is not None:
            await client._client.aclose()  # the SDK has no public close; its httpx client is `_client`
