"""Test doubles shared by the report env, engine and handcrafted pipeline tests."""

from __future__ import annotations

import asyncio
import os
from types import SimpleNamespace

import pytest

from agents_llm.backends.scripted import ScriptedBackend

HASHING_RAG = {"embedding": {"backend": "hashing"}}  # fast lexical embedding instead of MiniLM
HASHING_JUDGE = {"kind": "reference", "embedding": "hashing"}


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory):
    """Stores and corpora go to a session temp dir, never the user's cache.

    Import it into a conftest.py to apply it to that folder's tests."""
    path = tmp_path_factory.mktemp("qmix-cache")
    old = os.environ.get("QMIX_CACHE_DIR")
    os.environ["QMIX_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("QMIX_CACHE_DIR", None)
    else:
        os.environ["QMIX_CACHE_DIR"] = old


class StubRetriever:
    """Returns fixed chunks (or none, with `texts=()`) and remembers the queries it got."""

    def __init__(self, texts=("PettingZoo offers a Parallel API where all agents act at once.",)):
        self.texts = list(texts)
        self.queries: list[list[str]] = []

    def retrieve(self, queries):
        self.queries.append(list(queries))
        return [
            SimpleNamespace(text=t, source=f"doc{i}.md", page=i + 1, chunk_id=f"c{i}", scores={"rrf": 0.5})
            for i, t in enumerate(self.texts)
        ]


class SlowForRole(ScriptedBackend):
    """TEST DOUBLE that hangs on the calls whose system prompt names `role` (to force a timeout)."""

    def __init__(self, role: str, hang_s: float = 5.0, **kw):
        super().__init__(**kw)
        self.role, self.hang_s = role, hang_s

    async def _generate(self, request):
        if any(r == "system" and self.role in c for r, c in request.messages):
            await asyncio.sleep(self.hang_s)
        return await super()._generate(request)


def scripted(**kw) -> ScriptedBackend:
    return ScriptedBackend(**kw)
