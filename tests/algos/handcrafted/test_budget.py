"""Fair budgets: the handcrafted pipeline fits the round budget the learners get."""

from __future__ import annotations

import pytest

from algos import handcrafted_phases as hp

from tests.handcrafted_team import TeamScript, make_env, make_policy, run_pipeline


def test_fit_rounds_keeps_a_schedule_that_fits_and_compacts_one_that_does_not():
    assert hp.fit_rounds(hp.DEFAULT_ROUNDS, 24) == hp.DEFAULT_ROUNDS
    assert hp.fit_rounds(hp.DEFAULT_ROUNDS, None) == hp.DEFAULT_ROUNDS
    assert hp.fit_rounds(hp.DEFAULT_ROUNDS, 4) == {
        "planning": 1,
        "research": 1,
        "drafting": 2,
        "review": 0,
        "revision": 0,
    }
    assert hp.fit_rounds(hp.DEFAULT_ROUNDS, 7) == {
        "planning": 1,
        "research": 1,
        "drafting": 2,
        "review": 1,
        "revision": 2,
    }
    for budget in range(1, 30):
        fitted = hp.fit_rounds(hp.DEFAULT_ROUNDS, budget)
        assert sum(fitted.values()) <= budget
        assert all(fitted[p] <= hp.DEFAULT_ROUNDS[p] for p in fitted)
        if budget >= 2:
            assert fitted["drafting"] >= 2  # every compact schedule writes a section
    with pytest.raises(hp.PhaseConfigError, match="round budget"):
        hp.fit_rounds(hp.DEFAULT_ROUNDS, 0)


def test_at_the_default_budget_the_pipeline_appends_and_finishes():
    from envs.report_config import ReportEnvConfig

    default_budget = ReportEnvConfig.__dataclass_fields__["max_rounds"].default
    assert ReportEnvConfig.from_kwargs.__kwdefaults__["max_rounds"] == default_budget  # keyword callers get the same
    env = make_env(TeamScript(), max_rounds=default_budget)
    policy = make_policy(env)
    assert sum(policy.schedule.values()) <= default_budget
    rounds, _ = run_pipeline(env, policy)
    assert env.trace.end["reason"] == "terminated"  # its own last plan ended the episode, not the budget
    assert len(rounds) <= default_budget
    assert any(r["collector"]["status"] == "appended" for r in rounds)
    assert env.report.sections and env.report.sections[0].title != ""
    assert [r["phase"] for r in rounds] == ["planning", "research", "drafting", "drafting"]


def test_without_fitting_the_default_budget_truncates_the_pipeline_before_it_writes():
    env = make_env(TeamScript(), max_rounds=4)
    rounds, _ = run_pipeline(env, make_policy(env, fit_budget=False))
    assert env.trace.end["reason"] == "truncated"
    assert not env.report.sections
