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
    from envs.report.config import ReportEnvConfig

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


def test_the_classic_plan_unfitted_truncates_at_a_small_budget_before_it_writes():
    env = make_env(TeamScript(), max_rounds=4)
    policy = make_policy(env, schedule="classic", fit_budget=False)
    assert policy.schedule == hp.CLASSIC_ROUNDS
    rounds, _ = run_pipeline(env, policy)
    assert env.trace.end["reason"] == "truncated"
    assert not env.report.sections


def test_budget_rounds_fill_the_budget_in_the_documented_proportions():
    assert hp.budget_rounds(8) == {"planning": 1, "research": 2, "drafting": 4, "review": 1, "revision": 0}
    assert hp.budget_rounds(24) == hp.CLASSIC_ROUNDS  # the classic plan is the budget schedule at 24 rounds
    assert hp.budget_rounds(5) == {"planning": 1, "research": 1, "drafting": 2, "review": 1, "revision": 0}
    assert hp.budget_rounds(12) == {"planning": 1, "research": 4, "drafting": 4, "review": 1, "revision": 2}
    assert hp.budget_rounds(2) == {"planning": 0, "research": 0, "drafting": 2, "review": 0, "revision": 0}
    for budget in range(1, 80):
        rounds = hp.budget_rounds(budget)
        assert sum(rounds.values()) == budget
        assert rounds["drafting"] % 2 == 0 and rounds["revision"] % 2 == 0  # whole sections, whole corrections
        assert rounds["planning"] <= 2 and rounds["review"] <= 2
        if budget >= 2:
            assert rounds["drafting"] >= 2
        if budget >= 5:
            assert all(rounds[p] >= 1 for p in ("planning", "research", "drafting", "review"))
    for bad in (0, -3, 2.5, True):
        with pytest.raises(hp.PhaseConfigError, match="round budget"):
            hp.budget_rounds(bad)
    with pytest.raises(hp.PhaseConfigError, match="algo.schedule"):
        hp.schedule_rounds("fast", 8)


def test_explicit_rounds_replace_the_schedule_phase_by_phase():
    env = make_env(TeamScript(), max_rounds=8)
    policy = make_policy(env, rounds={"research": 0, "drafting": 6})
    assert policy.schedule == {"planning": 1, "research": 0, "drafting": 6, "review": 1, "revision": 0}


def _outline(n):
    return "\n".join(f"{i + 1}. Part {chr(65 + i)} of sorting networks" for i in range(n))


@pytest.mark.parametrize("budget", [5, 8, 12, 25])
def test_at_any_budget_the_pipeline_runs_every_scheduled_phase_and_ends_itself(budget):
    # An outline long enough that drafting never runs out of sections before its rounds do.
    env = make_env(TeamScript({("LeadArchitect", "PLANNING"): _outline(8)}), max_rounds=budget)
    policy = make_policy(env)
    assert policy.schedule == hp.budget_rounds(budget)
    rounds, _ = run_pipeline(env, policy)
    assert env.trace.end["reason"] == "terminated"  # its own last plan ended the episode, within the budget
    assert len(rounds) <= budget
    ran = [r["phase"] for r in rounds]
    for phase, n in policy.schedule.items():
        if n:
            assert phase in ran, f"{phase} never ran at a budget of {budget}: {ran}"
    assert [p for p in dict.fromkeys(ran)] == [p for p in hp.PHASE_ORDER if policy.schedule[p]]  # in order
    appended = sum(r["collector"]["status"] == "appended" for r in rounds)
    assert appended == policy.schedule["drafting"] // 2  # one section per pair of drafting rounds
