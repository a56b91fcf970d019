"""`scripted`: a deterministic TEST DOUBLE for unit tests. Never a default for real runs.

It answers from rules (regex on the conversation -> text or callable), else with a
deterministic text derived from a hash of the messages; with a schema it returns the
smallest instance that satisfies it. `latency_s` makes every call sleep, which is how
the concurrency tests measure a round's critical path.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from typing import Any, Callable, Mapping, Sequence

from .base import ChatRequest, Completion, LLMBackend

Responder = Callable[[ChatRequest], str]


def minimal_instance(schema: Mapping[str, Any]) -> Any:
    """The simplest value that satisfies a (simple) JSON schema."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return minimal_instance(schema[key][0])
    t = schema.get("type", "object")
    if isinstance(t, list):
        t = t[0]
    if t == "object":
        props = schema.get("properties", {})
        return {k: minimal_instance(props.get(k, {})) for k in schema.get("required", list(props))}
    if t == "array":
        return [minimal_instance(schema.get("items", {})) for _ in range(schema.get("minItems", 0))]
    if t in ("integer", "number"):
        lo = schema.get("minimum", 0)
        return int(lo) if t == "integer" else float(lo)
    if t == "boolean":
        return False
    if t == "null":
        return None
    return "x" * schema.get("minLength", 1)


class ScriptedBackend(LLMBackend):
    """TEST DOUBLE: deterministic answers without a model."""

    name = "scripted"

    def __init__(
        self,
        model: str = "scripted-test-double",
        *,
        rules: Sequence[tuple[str, str | Responder]] = (),
        responder: Responder | None = None,
        latency_s: float = 0.0,
        **kwargs: Any,
    ):
        super().__init__(model=model, **kwargs)
        self.rules = [(re.compile(p, re.DOTALL), r) for p, r in rules]
        self.responder = responder
        self.latency_s = float(latency_s)
        self.calls: list[ChatRequest] = []

    @property
    def endpoint(self) -> str:
        return "scripted://test-double"

    def _answer(self, request: ChatRequest) -> str:
        convo = "\n".join(f"{r}: {c}" for r, c in request.messages)
        for pattern, reply in self.rules:
            if pattern.search(convo):
                return reply(request) if callable(reply) else reply
        if self.responder is not None:
            return self.responder(request)
        if request.schema is not None:
            return json.dumps(minimal_instance(request.schema))
        digest = hashlib.sha256(convo.encode()).hexdigest()[:8]
        last = request.messages[-1][1].split()
        return f"Scripted reply {digest} about {' '.join(last[:12])}."

    async def _generate(self, request: ChatRequest) -> Completion:
        self.calls.append(request)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        text = self._answer(request)
        prompt_tokens = sum(len(c.split()) for _, c in request.messages)
        words = text.split()
        if len(words) > request.max_tokens:
            text = " ".join(words[: request.max_tokens])
        return Completion(text, prompt_tokens, min(len(words), request.max_tokens))
