"""The known-answer games: PettingZoo API, payoffs, relabelling, optima."""

import itertools

import numpy as np
import pytest

import envs
from tests.pettingzoo_api import strict_parallel_api_test, strict_parallel_seed_test
from envs.delayed_reward import APPEND, WORK, DelayedRewardGame
from envs.matrix_games import TwoStepGame
from envs.teammate_signal import QUERY, SILENT, TeammateSignalGame


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("two_step_v0", {"action_permutation_seed": 3, "payoff_scale": 10.0}),
        ("delayed_reward_v0", {}),
        ("teammate_signal_v0", {}),
    ],
)
def test_pettingzoo_api(name, kwargs):
    strict_parallel_api_test(envs.make(name, **kwargs), num_cycles=20)
    strict_parallel_seed_test(lambda: envs.make(name, **kwargs))


def _play_two_step(env, first, second):
    env.reset(seed=0)
    env.step(dict(zip(env.agents, first)))
    _, rew, term, _, _ = env.step(dict(zip(env.agents, second)))
    return rew["agent_0"], all(term.values())


@pytest.mark.parametrize("seed", range(6))
def test_permuted_two_step_pays_the_papers_table_under_its_relabelling(seed):
    env = TwoStepGame(action_permutation_seed=seed, payoff_scale=2.5)
    assert env.optimal_return == 20.0
    for a0, a1, b0, b1 in itertools.product(range(2), repeat=4):
        ret, done = _play_two_step(env, (a0, a1), (b0, b1))
        state = 1 if env.canonical_action(0, 0, a0) == 0 else 2
        table = TwoStepGame.PAYOFF_2A if state == 1 else TwoStepGame.PAYOFF_2B
        assert done and ret == 2.5 * table[env.canonical_action(state, 0, b0), env.canonical_action(state, 1, b1)]
    # the optimum, played through the labels
    best = _play_two_step(
        env, (env.labelled_action(0, 0, 1), 0), (env.labelled_action(2, 0, 1), env.labelled_action(2, 1, 1))
    )
    assert best == (20.0, True)


def test_relabelling_differs_between_agents_and_states_for_some_seed_and_is_seeded():
    perms = [TwoStepGame(action_permutation_seed=s).permutation for s in range(10)]
    assert any((p[2, 0] != p[2, 1]).any() for p in perms)  # the good action's index differs between agents in 2B
    assert any((p[0, 0] != p[2, 0]).any() for p in perms)  # and between the steps
    assert (TwoStepGame(action_permutation_seed=4).permutation == perms[4]).all()
    assert (TwoStepGame().permutation == np.arange(2)).all()  # no seed: the paper's labels
    with pytest.raises(ValueError, match="payoff_scale"):
        TwoStepGame(payoff_scale=0.0)


def _play_delayed(env, schedule):
    """schedule: per round, True = the team appends."""
    env.reset(seed=0)
    total, since, ends = 0.0, [], None
    for append in schedule:
        act = APPEND if append else WORK
        _, rew, term, trunc, infos = env.step({a: act for a in env.agents})
        total += rew["agent_0"]
        since.append(infos["agent_0"]["rounds_since_append"])
        ends = (all(term.values()), all(trunc.values()))
    return total, since, ends


def test_delayed_reward_payoffs_and_optimum():
    env = DelayedRewardGame()
    assert _play_delayed(env, [True] * 4) == (pytest.approx(3.2), [1, 1, 1, 1], (False, True))  # early, small
    assert _play_delayed(env, [False, False, False, True]) == (4.0, [0, 0, 0, 4], (False, True))  # late, large
    assert _play_delayed(env, [False, True, False, True])[0] == pytest.approx(3.4)
    returns = [_play_delayed(env, s)[0] for s in itertools.product([False, True], repeat=4)]
    assert max(returns) == env.optimal_return == 4.0
    assert sorted(returns)[-2] < 4.0 - 0.4  # the optimum is unique with a margin


def test_delayed_reward_needs_every_agent_to_append_and_the_budget_is_observed():
    env = DelayedRewardGame(n_agents=3)
    obs, _ = env.reset(seed=0)
    _, rew, _, _, infos = env.step({"agent_0": APPEND, "agent_1": APPEND, "agent_2": WORK})
    assert rew["agent_0"] == 0.0 and infos["agent_0"]["rounds_since_append"] == 0
    o = env.state()
    H = env.horizon
    assert o[1] == 1.0 and o[H + 1] == 1.0 and o[2 * H] == 1 / H and o[2 * H + 1] == (H - 1) / H
    assert DelayedRewardGame.time_limit_observable is True
    assert DelayedRewardGame(payoffs=[1, 3, 2]).optimal_return == 4.0  # e.g. work, append (3), append (1)
    with pytest.raises(ValueError, match="payoffs"):
        DelayedRewardGame(payoffs=[1.0])


def test_teammate_signal_rewards_the_teammates_bit_and_shows_queries_as_edges():
    env = TeammateSignalGame(query_cost=0.1)
    for b0, b1 in itertools.product((0, 1), repeat=2):
        obs, _ = env.reset(options={"bits": [b0, b1]})
        assert obs["agent_0"]["observation"][b0] == 1 and obs["agent_1"]["observation"][b1] == 1
        assert obs["agent_0"]["observation"][1 - b0] == 0  # agent 0 does not see agent 1's bit
        assert env.comm_graph().shape == (2, 0)
        _, rew, term, _, _ = env.step({"agent_0": QUERY, "agent_1": SILENT})
        assert rew["agent_0"] == pytest.approx(-0.1) and not any(term.values())
        assert env.comm_graph().tolist() == [[1], [0]]  # agent 1 -> agent 0
        _, rew, term, _, _ = env.step({"agent_0": b1, "agent_1": 1 - b0})
        assert rew["agent_0"] == 1.0 and all(term.values())
    assert env.optimal_return == pytest.approx(1.8)
    env.reset(options={"bits": [0, 1]})
    env.step({"agent_0": QUERY, "agent_1": QUERY})
    assert sorted(map(tuple, env.comm_graph().T.tolist())) == [(0, 1), (1, 0)]
    with pytest.raises(ValueError, match="bits"):
        env.reset(options={"bits": [0, 2]})


def test_teammate_signal_without_messages_cannot_beat_one():
    """Whatever fixed guesses the agents make from their own bit, the expected reward over
    the teammates' bits is 1: the teammate's bit is independent of what an agent sees."""
    env = TeammateSignalGame(query_cost=0.1)
    best = -np.inf
    for g0, g1 in itertools.product(itertools.product((0, 1), repeat=2), repeat=2):  # guess as a function of own bit
        total = 0.0
        for b0, b1 in itertools.product((0, 1), repeat=2):
            env.reset(options={"bits": [b0, b1]})
            env.step({"agent_0": SILENT, "agent_1": SILENT})
            _, rew, _, _, _ = env.step({"agent_0": g0[b0], "agent_1": g1[b1]})
            total += rew["agent_0"]
        best = max(best, total / 4)
    assert best == 1.0
