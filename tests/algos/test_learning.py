"""Learning on games with known answers (slow: about half a minute to a minute each).

The QMIX paper's two-step game, trained as in the paper with uniform exploration
(epsilon = 1 throughout), so every joint action is seen: QMIX's monotonic mixer can
represent state 2B's payoff and its greedy joint policy earns 8; VDN's additive
decomposition underestimates 2B's best cell (least squares gives it 6.5) and its greedy
policy settles for state 2A's 7.
"""

import numpy as np
import pytest

import algos
import envs
from algos.buffer import collate
from algos.training.rollout import run_episode

EPISODES = 500
CFG = {"epsilon_start": 1.0, "epsilon_finish": 1.0, "target_update_interval": 50, "gamma": 0.99}


def train_two_step(name, seed, episodes=EPISODES):
    env = envs.make("two_step_v0")
    spec = algos.EnvSpec.from_env(env)
    learner = algos.build(name, spec, CFG, seed=seed)
    for ep in range(episodes):
        episode, _ = run_episode(env, learner, spec, explore=True, seed=seed * 100_000 + ep)
        learner.observe(episode)
        learner.update()
    greedy, stats = run_episode(env, learner, spec, explore=False, seed=0)
    q_tot = learner.chosen_values(collate([greedy]))[0].tolist()
    return learner, greedy, stats, q_tot


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_qmix_learns_the_optimal_joint_value_8(seed):
    learner, greedy, stats, q_tot = train_two_step("qmix", seed)
    assert stats.ret == 8.0, f"seed {seed}: greedy actions {greedy.actions.tolist()}"
    assert greedy.actions[0, 0] == 1 and greedy.actions[1].tolist() == [1, 1]
    # Q_tot of the greedy joint action: 8 in state 2B, gamma * 8 in the first step
    assert q_tot[1] == pytest.approx(8.0, abs=0.5), q_tot
    assert q_tot[0] == pytest.approx(8.0, abs=0.5), q_tot
    assert learner.n_target_updates >= 5


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vdn_cannot_represent_2b_and_earns_7(seed):
    learner, greedy, stats, q_tot = train_two_step("vdn", seed)
    assert stats.ret == 7.0, f"seed {seed}: greedy actions {greedy.actions.tolist()}"
    assert greedy.actions[0, 0] == 0  # agent 0 picks state 2A
    assert q_tot[1] == pytest.approx(7.0, abs=0.5), q_tot
