"""The hooks the rollouts and the trainer call are declared on the algorithm bases
(algos/base.py), so a new algorithm gets a working default or a clear error, never an
attribute lookup that silently skips it."""

from dataclasses import dataclass

import numpy as np
import pytest

import algos
from algos.base import AlgoConfig, Capabilities, FixedPolicy, PlanPolicy
from algos.training.rollout import run_episode


def test_emitting_plans_without_the_plan_base_is_refused_at_class_definition():
    with pytest.raises(TypeError, match="subclass algos.base.PlanPolicy"):

        class Planner(FixedPolicy):  # noqa: F841 - the class statement itself must fail
            capabilities = Capabilities(learns=False, emits_plans=True)

            def act(self, obs, masks, explore, *, state=None, graph=None):
                return {}


def test_a_plan_policy_must_implement_next_plan_and_cannot_act(two_step):
    _, spec = two_step

    class NoPlan(PlanPolicy):
        pass

    with pytest.raises(TypeError, match="next_plan"):
        NoPlan(spec, AlgoConfig(name="no_plan"))

    class Ends(PlanPolicy):
        def next_plan(self, round_info=None):
            return {"acting": [], "terminate": True}

    ends = Ends(spec, AlgoConfig(name="ends"))
    assert ends.capabilities.emits_plans and not ends.capabilities.learns
    with pytest.raises(TypeError, match="emits round plans"):
        ends.act({}, {}, False)


def test_a_plan_policy_on_an_env_without_step_plan_is_named(two_step):
    env, spec = two_step

    class Ends(PlanPolicy):
        def next_plan(self, round_info=None):
            return {"acting": [], "terminate": True}

    with pytest.raises(TypeError, match="has no step_plan"):
        run_episode(env, Ends(spec, AlgoConfig(name="ends")), spec, explore=False)


def test_declared_defaults_of_the_trainer_hooks(two_step):
    _, spec = two_step
    policy = algos.build("random", spec)
    assert isinstance(policy, FixedPolicy) and policy.last_q is None
    policy.check_budget(1)  # any budget is fine for a policy that learns nothing
    assert AlgoConfig(name="x").validate() is None


def test_a_learner_reports_the_q_values_of_its_chosen_actions(two_step):
    env, spec = two_step
    learner = algos.build("qmix", spec, {"epsilon_start": 0.0, "epsilon_finish": 0.0}, seed=0)
    _, stats = run_episode(env, learner, spec, explore=False, seed=0)
    assert learner.last_q is not None and learner.last_q.shape == (spec.n_agents,)
    assert len(stats.q_values) == stats.length and np.isfinite(stats.q_values).all()


def test_stacking_puts_agents_in_spec_order_and_fills_the_absent_ones(two_step):
    _, spec = two_step
    first, second = spec.agents
    obs = spec.stack_observations({second: np.full(spec.obs_dim, 2.0)})
    assert obs.dtype == np.float32 and obs.shape == (2, spec.obs_dim)
    assert (obs[0] == 0).all() and (obs[1] == 2).all()
    masks = spec.stack_masks({first: np.eye(spec.n_actions, dtype=np.int8)[0]})
    assert masks.dtype == bool and masks[0].tolist() == [True] + [False] * (spec.n_actions - 1)
    assert masks[1].all()  # an agent that does not act forbids nothing


@dataclass
class _BudgetConfig(AlgoConfig):
    name: str = "budget_test"


class _RefusesBudget(FixedPolicy):
    config_class = _BudgetConfig

    def act(self, obs, masks, explore, *, state=None, graph=None):
        raise AssertionError("no episode may run before the budget check")

    def check_budget(self, total_episodes):
        raise ValueError(f"budget of {total_episodes} episodes refused")


def test_check_budget_is_called_by_the_trainer_before_any_episode(tmp_path):
    from hydra import compose, initialize_config_dir

    import experiments.train as train_script

    algos.register("budget_test", _RefusesBudget, overwrite=True)
    with initialize_config_dir(config_dir=str(train_script.ROOT / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=["algo=budget_test", "env=two_step", "logger=csv", "train.episodes=3"])
    with pytest.raises(ValueError, match="budget of 3 episodes refused"):
        train_script.train(cfg, run_dir=tmp_path)
    assert not (tmp_path / "train.csv").exists()
