"""Fixtures for the report env and round engine tests: scripted TEST DOUBLE backends,
the hashing embedding and a store in a temporary cache folder (built once per session)."""

from __future__ import annotations

from tests.report_doubles import HASHING_JUDGE, HASHING_RAG, isolated_cache  # noqa: F401 (fixture)
from tests.report_doubles import SlowForRole, StubRetriever, scripted  # noqa: F401 (re-exported to the tests)


def make_env(**overrides):
    from envs.report.writing import ReportWritingEnv

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
