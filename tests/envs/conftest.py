"""Fixtures for the report env and round engine tests: scripted TEST DOUBLE backends,
the hashing embedding and a store in a temporary cache folder (built once per session)."""

from __future__ import annotations

import asyncio


from agents_llm.backends.scripted import ScriptedBackend
from tests.report_doubles import HASHING_JUDGE, HASHING_RAG, isolated_cache  # noqa: F401 (fixture)
from tests.report_doubles import StubRetriever  # noqa: F401


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


def make_env(**overrides):
    from envs.report_writing import ReportWritingEnv

    cfg = dict(
        llm={"backend": "scripted"},
        rag=HASHING_RAG,
        judge=HASHING_JUDGE,
        max_rounds=4,
        min_rounds_before_terminate=1,
        infos="full",
    )  # full: these tests read text fields of infos
    if "backend" not in overrides:
        overrides["backend"] = scripted()
    cfg.update(overrides)
    return ReportWritingEnv(**cfg)
