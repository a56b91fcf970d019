"""Training stops on an episode's failed calls as the env reports them (``call_failures()``,
the env contract), and an env with no outside calls reports none."""

from __future__ import annotations

import pytest

import envs
from algos.training.llm_failures import LLMFailureStop, check_llm_failures
from envs import CallFailures, get_call_failures


def test_an_env_without_calls_reports_no_failure():
    env = envs.make("two_step_v0")
    env.reset(seed=0)
    assert get_call_failures(env) == CallFailures() and not CallFailures().none_succeeded


def test_training_stops_at_the_share_naming_the_setting_and_the_cause():
    failures = CallFailures(calls=4, failed=2, tokens=10, cause="LLMConnectionError: down")
    check_llm_failures(failures, episode=0, stop_share=0.75)  # 50 % < 75 %: goes on
    with pytest.raises(
        LLMFailureStop,
        match=r"episode 3: 2 of 4 LLM calls failed \(50% >= train.llm_error_share_stop=0.5\); cause: LLMConnectionError: down",
    ):
        check_llm_failures(failures, episode=2, stop_share=0.5)
    check_llm_failures(CallFailures(), episode=0, stop_share=0.01)  # no calls: nothing to stop on


def test_an_episode_none_of_whose_calls_succeeded_is_not_the_teams_work():
    assert CallFailures(calls=3, failed=3, tokens=0).none_succeeded
    assert not CallFailures(calls=3, failed=2, tokens=40).none_succeeded
