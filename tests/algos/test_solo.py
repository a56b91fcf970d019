"""The solo policy (algos/solo.py): one agent with the retrieval tool writes the report alone."""

from __future__ import annotations

import pytest

import algos
from algos.training.rollout import run_episode

from tests.agents_llm.extractive.conftest import corpus, make_env  # noqa: F401 (fixtures)


def test_solo_writes_the_report_alone_at_the_round_budget(make_env):  # noqa: F811
    env = make_env(max_rounds=4)
    spec = algos.EnvSpec.from_env(env)
    solo = algos.build("solo", spec, {"name": "solo"}, seed=0)
    assert solo.agent == "Researcher" and not solo.capabilities.learns
    _, stats = run_episode(env, solo, spec, explore=False, seed=0)
    rounds = env.trace.rounds
    assert len(rounds) == 4 and env.report.sections and stats.infos["report_score"] > 0
    for r in rounds:  # nobody else ran, nothing was sent between agents
        assert set(r["agents"]) == {"Researcher"} and r["agents"]["Researcher"]["senders"] == []


def test_solo_refuses_an_agent_the_env_does_not_have(make_env):  # noqa: F811
    spec = algos.EnvSpec.from_env(make_env())
    with pytest.raises(ValueError, match="algo.agent: 'Nobody' is not an agent"):
        algos.build("solo", spec, {"name": "solo", "agent": "Nobody"}, seed=0)
