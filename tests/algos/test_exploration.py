import numpy as np
import pytest

import algos
from algos.value_learner import LinearSchedule, masked_epsilon_greedy

from .conftest import small_learner


@pytest.mark.parametrize("epsilon", [0.0, 0.5, 1.0])
def test_masked_epsilon_greedy_never_picks_a_masked_action(epsilon):
    rng = np.random.default_rng(0)
    n, a = 4, 9
    for _ in range(500):
        q = rng.standard_normal((n, a))
        mask = rng.random((n, a)) < 0.3
        mask[np.arange(n), rng.integers(0, a, n)] = True  # at least one allowed
        q[~mask] += 100.0  # masked actions look best: greedy must still avoid them
        acts = masked_epsilon_greedy(q, mask, epsilon, rng)
        assert mask[np.arange(n), acts].all()


def test_greedy_picks_best_available_and_random_covers_all_available():
    rng = np.random.default_rng(1)
    q = np.array([[5.0, 1.0, 3.0]])
    mask = np.array([[False, True, True]])
    assert masked_epsilon_greedy(q, mask, 0.0, rng)[0] == 2
    seen = {int(masked_epsilon_greedy(q, mask, 1.0, rng)[0]) for _ in range(200)}
    assert seen == {1, 2}


def test_no_available_action_is_an_error():
    with pytest.raises(ValueError, match="no available action"):
        masked_epsilon_greedy(np.zeros((2, 3)), np.array([[1, 0, 0], [0, 0, 0]], bool), 0.1, np.random.default_rng())


def test_linear_schedule():
    s = LinearSchedule(1.0, 0.1, 100)
    assert s(0) == 1.0 and s(100) == pytest.approx(0.1) and s(1000) == pytest.approx(0.1)
    assert s(50) == pytest.approx(0.55)


@pytest.mark.parametrize("name", ["qmix", "vdn", "iql", "graph_pg", "random"])
def test_algorithms_respect_masks_when_acting(name, two_step):
    _, spec = two_step
    algo = small_learner(name, spec) if name not in ("random", "graph_pg") else algos.build(name, spec)
    rng = np.random.default_rng(0)
    for explore in (True, False):
        algo.begin_episode()
        for _ in range(100):
            masks = {
                a: np.array([0, 1], np.int8) if rng.random() < 0.5 else np.array([1, 0], np.int8) for a in spec.agents
            }
            obs = {a: rng.random(spec.obs_dim).astype(np.float32) for a in spec.agents}
            acts = algo.act(obs, masks, explore)
            assert all(masks[a][acts[a]] == 1 for a in spec.agents)


def test_epsilon_follows_env_rounds(two_step):
    env, spec = two_step
    learner = small_learner("qmix", spec, epsilon_start=1.0, epsilon_finish=0.0, epsilon_anneal_steps=10)
    from algos.training.rollout import run_episode

    assert learner.current_epsilon() == 1.0
    for _ in range(3):  # 3 episodes x 2 rounds
        ep, _ = run_episode(env, learner, spec, explore=True)
        learner.observe(ep)
    assert learner.t_env == 6
    assert learner.current_epsilon() == pytest.approx(0.4)
