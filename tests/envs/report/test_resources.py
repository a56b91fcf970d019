"""Resources are passed, not cached per process: envs of different configs share nothing but
the open handle on one store folder,
envs built on one ReportResources (or one envs.ResourcePool) share it on purpose."""

from __future__ import annotations

import pytest

import envs
from envs.report.resources import ReportResources
from tests.report_doubles import HASHING_JUDGE, HASHING_RAG, isolated_cache  # noqa: F401 (fixture)

SCRIPTED = {"backend": "scripted"}
BASE = dict(
    llm=SCRIPTED,
    rag=HASHING_RAG,
    judge=HASHING_JUDGE,
    max_rounds=2,
    min_rounds_before_terminate=1,
    task_id="hashing-secrets",
)


def _run_one_round(env):
    env.reset(seed=0)
    append = env.table.append
    env.step({a: append for a in env.agents})
    return env


@pytest.mark.slow
def test_two_envs_of_different_configs_share_nothing():
    a = _run_one_round(envs.make("report_writing_v0", **BASE))
    b_judge = dict(HASHING_JUDGE, w_length=0.5)
    b = envs.make("report_writing_v0", **dict(BASE, judge=b_judge, llm=dict(SCRIPTED, temperature=0.3)))
    assert a.resources is not b.resources
    assert a.backend is not b.backend
    assert a.resources.judge() is not b.resources.judge()
    assert a.resources.judge_cfg != b.resources.judge_cfg and b.resources.judge_cfg["w_length"] == 0.5
    # What A built and changed stays A's: B opens its own store when it first needs one.
    assert "python_stdlib" in a.resources.stores._stores and not b.resources.stores._stores
    a.backend.latency_s = 0.25
    assert b.backend.latency_s == 0.0
    _run_one_round(b)
    # The one exception, on purpose: the same store folder and rag config is one handle per process (envs/report/tasks.py).
    assert a.resources.stores.store("python_stdlib") is b.resources.stores.store("python_stdlib")
    assert a.resources.embedding is b.resources.embedding  # the store's own embedding comes with its handle
    # A's judge scored A's report; B's judge never saw it.
    assert a.report.chars > 0 and a.resources.judge() is not b.resources.judge()


def test_same_config_without_resources_still_builds_separately():
    a, b = envs.make("report_writing_v0", **BASE), envs.make("report_writing_v0", **BASE)
    assert a.resources is not b.resources and a.backend is not b.backend


def test_envs_on_one_resources_object_share_it():
    resources = ReportResources(llm=SCRIPTED, judge=HASHING_JUDGE, rag=HASHING_RAG)
    a = _run_one_round(envs.make("report_writing_v0", resources=resources, **BASE))
    b = envs.make("report_writing_v0", resources=resources, **dict(BASE, split="holdout", task_id=None))
    assert a.backend is b.backend is resources.backend
    b.reset(seed=1)
    assert a.engine.retriever is b.engine.retriever  # one store for the corpus, opened once
    assert a.resources.judge() is b.resources.judge()


def test_a_pool_shares_per_config_and_only_per_config():
    pool = envs.ResourcePool()
    train = pool.make("report_writing_v0", **BASE)
    evaluation = pool.make("report_writing_v0", **dict(BASE, split="holdout", task_id=None))
    other = pool.make("report_writing_v0", **dict(BASE, judge=dict(HASHING_JUDGE, w_length=0.5)))
    assert train.resources is evaluation.resources
    assert other.resources is not train.resources and other.backend is not train.backend
    assert envs.ResourcePool().get("two_step_v0", {}) is None  # an env without shared resources


def test_resources_of_another_config_are_refused_naming_the_key():
    resources = ReportResources(llm=SCRIPTED, judge=HASHING_JUDGE, rag=HASHING_RAG)
    with pytest.raises(ValueError, match=r"judge=.*w_length"):
        envs.make("report_writing_v0", resources=resources, **dict(BASE, judge=dict(HASHING_JUDGE, w_length=0.5)))
    with pytest.raises(TypeError, match="backend"):
        envs.make("report_writing_v0", resources=resources, backend=resources.backend, **BASE)
