from __future__ import annotations

import json
from typing import Callable

import pytest

from agents_llm.backends import make_backend
from agents_llm.backends.base import ChatRequest


def judge_kind(request: ChatRequest) -> str:
    system = request.messages[0][1]
    return "macro" if "senior editor" in system else "micro" if "fact-checker" in system else "other"


def chunk_of(request: ChatRequest) -> str:
    """The chunk text a Micro request judges."""
    user = request.messages[1][1]
    return user.split("<chunk ", 1)[1].split(">\n", 1)[1].rsplit("\n</chunk>", 1)[0]


def macro_reply(score: int = 4, notes: str = "Macro notes: coverage thin on costs.") -> str:
    return json.dumps(
        {"assessment": notes, "coverage": score, "flow": score, "structure": score, "tone": score, "repetition": score}
    )


def micro_reply(
    logic=4, verifiability=4, technical_precision=4, density=4, hallucination=False, notes="Chunk notes."
) -> str:
    return json.dumps(
        {
            "assessment": notes,
            "logic": logic,
            "verifiability": verifiability,
            "technical_precision": technical_precision,
            "density": density,
            "hallucination": hallucination,
        }
    )


@pytest.fixture
def scripted() -> Callable:
    """A scripted (TEST DOUBLE) backend answering Macro and Micro requests through `responder`."""

    def build(responder: Callable[[ChatRequest], str] | None = None, max_attempts: int = 2):
        def default(request: ChatRequest) -> str:
            return macro_reply() if judge_kind(request) == "macro" else micro_reply()

        return make_backend(
            {
                "backend": "scripted",
                "responder": responder or default,
                "retry": {"max_attempts": max_attempts, "backoff_s": 0.0, "backoff_max_s": 0.0},
            }
        )

    return build
