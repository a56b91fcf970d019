"""Fixtures for the interop tests: the report env on the scripted TEST DOUBLE backend."""

from __future__ import annotations

from tests.report_doubles import HASHING_JUDGE, HASHING_RAG, StubRetriever, isolated_cache  # noqa: F401 (fixture)


def report_env(**overrides):
    """The report env with its default infos, the scripted TEST DOUBLE backend and a stub retriever."""
    from agents_llm.backends.scripted import ScriptedBackend
    from envs.report.writing import ReportWritingEnv

    cfg = dict(
        llm={"backend": "scripted"},
        rag=HASHING_RAG,
        judge=HASHING_JUDGE,
        max_rounds=3,
        min_rounds_before_terminate=1,
        backend=ScriptedBackend(),
        retriever=StubRetriever(),
    )
    cfg.update(overrides)
    return ReportWritingEnv(**cfg)
