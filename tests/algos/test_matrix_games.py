import itertools

import numpy as np
import pytest

import envs
from tests.pettingzoo_api import strict_parallel_api_test, strict_parallel_seed_test
from envs.matrix_games import OneStep3x3Game, TwoStepGame


@pytest.mark.parametrize("name", ["two_step_v0", "one_step_3x3_v0"])
def test_pettingzoo_api(name):
    strict_parallel_api_test(envs.make(name), num_cycles=20)
    strict_parallel_seed_test(lambda: envs.make(name))


def _play(env, joints):
    env.reset(seed=0)
    total, states = 0.0, [env.state()]
    for joint in joints:
        _, rew, term, trunc, _ = env.step(dict(zip(env.agents, joint)))
        total += rew["agent_0"]
        states.append(env.state())
    return total, term, states


def test_two_step_payoffs():
    env = envs.make("two_step_v0")
    for a0, b0, b1 in itertools.product(range(2), repeat=3):
        for first_agent1 in range(2):  # agent 1's first action has no effect
            ret, term, states = _play(env, [(a0, first_agent1), (b0, b1)])
            table = TwoStepGame.PAYOFF_2A if a0 == 0 else TwoStepGame.PAYOFF_2B
            assert ret == table[b0, b1]
            assert all(term.values())
            assert states[1].argmax() == (1 if a0 == 0 else 2)
    assert TwoStepGame.PAYOFF_2A.tolist() == [[7, 7], [7, 7]]
    assert TwoStepGame.PAYOFF_2B.tolist() == [[0, 1], [1, 8]]


def test_one_step_payoffs():
    env = envs.make("one_step_3x3_v0")
    expected = [[8, -12, -12], [-12, 0, 0], [-12, 0, 0]]
    for a, b in itertools.product(range(3), repeat=2):
        ret, term, _ = _play(env, [(a, b)])
        assert ret == expected[a][b] and all(term.values())
    with pytest.raises(ValueError, match="3x3"):
        OneStep3x3Game(payoff=[[1, 2], [3, 4]])


def test_observation_contract_and_no_graph():
    env = envs.make("two_step_v0")
    obs, infos = env.reset(seed=0)
    for a in env.agents:
        assert obs[a]["observation"].dtype == np.float32
        assert obs[a]["action_mask"].dtype == np.int8
        assert env.observation_space(a).contains(obs[a])
    assert env.state().dtype == np.float32 and env.state().shape == env.state_space.shape
    assert envs.get_comm_graph(env, infos).shape == (2, 0)


def test_get_comm_graph_reads_method_then_infos():
    class WithMethod:
        def comm_graph(self):
            return [[0, 1], [1, 2]]

    assert envs.get_comm_graph(WithMethod()).tolist() == [[0, 1], [1, 2]]
    infos = {"a": {"comm_graph": np.array([[2], [0]])}}
    assert envs.get_comm_graph(object(), infos).tolist() == [[2], [0]]
    with pytest.raises(ValueError, match=r"shape \(2, E\)"):
        envs.get_comm_graph(object(), {"a": {"comm_graph": np.zeros((3, 1))}})
