import numpy as np
import pytest
import torch

import algos
from algos.buffer import Episode, collate
from algos.networks import GNNRecurrentAgent, block_diagonal_edges
from algos.training.rollout import run_episode

from .conftest import one_step_episode, small_learner


def _params(learner):
    return torch.cat([p.detach().flatten().clone() for p in learner.params])


@pytest.mark.parametrize("name", ["qmix", "vdn", "iql"])
def test_terminal_round_is_in_the_loss(name, one_step):
    """Every episode of the one-step game is a single terminal round paying 8 for (0, 0).
    If the terminal transition were dropped from the loss, nothing would be learnt."""
    _, spec = one_step
    learner = small_learner(name, spec, lr=2e-2)
    for _ in range(8):
        learner.observe(one_step_episode((0, 0), 8.0))
    batch = collate([one_step_episode((0, 0), 8.0)])
    before = float(learner.chosen_values(batch)[0, 0])
    for _ in range(100):
        metrics = learner.update()
    after = float(learner.chosen_values(batch)[0, 0])
    assert abs(before - 8.0) > 5.0
    assert after == pytest.approx(8.0, abs=0.5), f"{name}: Q_tot of the terminal round is {after}, not the payoff 8"
    assert metrics["target_mean"] == pytest.approx(8.0)  # terminal: no bootstrap, the target is the reward


def test_td_targets_do_not_bootstrap_through_a_terminal_and_do_when_truncated(two_step):
    _, spec = two_step
    learner = small_learner("qmix", spec, gamma=0.5)
    r = torch.tensor([[1.0, 2.0]])
    nxt = torch.tensor([[10.0, 20.0]])
    filled = torch.ones(1, 2)
    terminal = learner.td_targets(r, torch.tensor([[0.0, 1.0]]), filled, nxt)
    truncated = learner.td_targets(r, torch.zeros(1, 2), filled, nxt)
    assert terminal.tolist() == [[1.0 + 0.5 * 10.0, 2.0]]
    assert truncated.tolist() == [[1.0 + 0.5 * 10.0, 2.0 + 0.5 * 20.0]]


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_td_lambda_matches_the_recursive_definition(two_step, lam):
    _, spec = two_step
    gamma = 0.9
    learner = small_learner("qmix", spec, gamma=gamma, td_lambda=lam)
    rng = np.random.default_rng(0)
    T = 6
    lengths = [6, 4]  # second episode padded; both terminal
    r = torch.tensor(rng.standard_normal((2, T)), dtype=torch.float32)
    v = torch.tensor(rng.standard_normal((2, T)), dtype=torch.float32)  # Q'_{t+1}
    filled = torch.zeros(2, T)
    term = torch.zeros(2, T)
    for b, n in enumerate(lengths):
        filled[b, :n] = 1
        term[b, n - 1] = 1
    got = learner.td_targets(r, term, filled, v)
    for b, n in enumerate(lengths):
        # reference: G_t = r_t + gamma (1 - d_t) [(1 - lam) V_{t+1} + lam G_{t+1}], G_n := 0 after a terminal
        g_next = 0.0
        for t in reversed(range(n)):
            d = float(term[b, t])
            cont = float(v[b, t]) if t == n - 1 else (1 - lam) * float(v[b, t]) + lam * g_next
            g = float(r[b, t]) + gamma * (1 - d) * cont
            assert float(got[b, t]) == pytest.approx(g, abs=1e-5)
            g_next = g
    if lam == 1.0:  # Monte-Carlo return of a terminated episode
        mc = sum(gamma**k * float(r[1, k]) for k in range(4))
        assert float(got[1, 0]) == pytest.approx(mc, abs=1e-5)


def test_hard_target_update_fires_at_the_interval(one_step):
    _, spec = one_step
    learner = small_learner("qmix", spec, target_update="hard", target_update_interval=3, lr=1e-2)
    for i in range(4):
        learner.observe(one_step_episode((i % 3, 0), float(i)))

    def same():
        return all(
            torch.equal(p, q) for p, q in zip(learner.agent.parameters(), learner.target_agent.parameters())
        ) and all(torch.equal(p, q) for p, q in zip(learner.mixer.parameters(), learner.target_mixer.parameters()))

    assert same()
    learner.update()
    learner.update()
    assert not same() and learner.n_target_updates == 0
    m = learner.update()
    assert same() and learner.n_target_updates == 1 and m["target_updates"] == 1


def test_soft_target_update_moves_by_tau(one_step):
    _, spec = one_step
    learner = small_learner("vdn", spec, target_update="soft", tau=0.25, lr=1e-2)
    for i in range(4):
        learner.observe(one_step_episode((i % 3, 1), float(i)))
    old_target = [p.clone() for p in learner.target_agent.parameters()]
    old_online = [p.clone() for p in learner.agent.parameters()]
    learner.update()
    # The update must have moved the online network, or the check below holds trivially.
    assert any(not torch.equal(p, old) for p, old in zip(learner.agent.parameters(), old_online))
    moved = False
    for p, tp, old in zip(learner.agent.parameters(), learner.target_agent.parameters(), old_target):
        assert torch.allclose(tp, old + 0.25 * (p - old), atol=1e-6)
        moved = moved or not torch.equal(tp, old)
    assert moved, "the soft update left the target network where it was"


def test_budget_check_rejects_a_target_that_would_never_update(one_step):
    _, spec = one_step
    learner = small_learner("qmix", spec, target_update_interval=200, learning_starts=32, batch_size=32)
    with pytest.raises(ValueError, match="target network would never update"):
        learner.check_budget(100)
    learner.check_budget(400)


def test_zero_rewards_give_different_parameters_than_real_rewards(two_step):
    """Agent-Q-Mix's learner ended with identical parameters with and without rewards."""
    env, spec = two_step
    real = small_learner("qmix", spec, seed=3)
    zero = small_learner("qmix", spec, seed=3)
    assert torch.equal(_params(real), _params(zero))
    rollout_policy = algos.build("random", spec, seed=0)
    for i in range(12):
        ep, _ = run_episode(env, rollout_policy, spec, explore=True, seed=i)
        real.observe(ep)
        zeroed = Episode(**{**ep.__dict__, "rewards": np.zeros_like(ep.rewards)})
        zero.observe(zeroed)
        real.update()
        zero.update()
    assert real.n_updates == zero.n_updates > 0
    assert not torch.allclose(_params(real), _params(zero), atol=1e-4)


def test_step_by_step_acting_matches_the_batched_training_forward():
    torch.manual_seed(0)
    B, T1, N, D, A = 3, 6, 4, 5, 9
    net = GNNRecurrentAgent(D, N, A, hidden_dim=16)
    obs = torch.randn(B, T1, N, D)
    last = torch.randint(-1, A, (B, T1, N))
    adj = torch.rand(B, T1, N, N) < 0.4
    q_seq = net.forward_sequence(obs, last, adj)
    h = net.init_hidden(B)
    steps = []
    for t in range(T1):
        q, h = net.forward_step(obs[:, t], last[:, t], adj[:, t], h)
        steps.append(q)
    assert torch.allclose(torch.stack(steps, 1), q_seq, atol=1e-5)


def test_graph_batching_has_no_cross_episode_edges_and_the_graph_matters():
    torch.manual_seed(0)
    B, T1, N, D, A = 4, 3, 4, 5, 9
    net = GNNRecurrentAgent(D, N, A, hidden_dim=16)
    obs = torch.randn(B, T1, N, D)
    last = torch.full((B, T1, N), -1)
    adj = torch.rand(B, T1, N, N) < 0.5
    ei = block_diagonal_edges(adj)
    assert ((ei[0] // N) == (ei[1] // N)).all()  # every edge stays inside its own graph
    batched = net.forward_sequence(obs, last, adj)
    for b in range(B):  # one episode alone gives the same Q values as inside the batch
        alone = net.forward_sequence(obs[b : b + 1], last[b : b + 1], adj[b : b + 1])
        assert torch.allclose(alone[0], batched[b], atol=1e-5)
    no_graph = net.forward_sequence(obs, last, torch.zeros_like(adj))
    assert not torch.allclose(no_graph, batched)


@pytest.mark.parametrize("name", ["qmix", "vdn", "iql"])
def test_checkpoint_round_trip_gives_identical_parameters_and_behaviour(name, two_step, tmp_path):
    from algos.training import checkpoint as ckpt

    env, spec = two_step
    learner = small_learner(name, spec, seed=1)
    for i in range(6):
        ep, _ = run_episode(env, learner, spec, explore=True, seed=i)
        learner.observe(ep)
        learner.update()
    path = ckpt.save_atomic({"algo": learner.state_dict()}, tmp_path / "c.pt")
    assert not list(tmp_path.glob(".*tmp*"))
    fresh = small_learner(name, spec, seed=99)
    assert not torch.equal(_params(fresh), _params(learner))
    fresh.load_state_dict(ckpt.load(path)["algo"])
    assert torch.equal(_params(fresh), _params(learner))
    for a, b in zip(fresh.target_agent.parameters(), learner.target_agent.parameters()):
        assert torch.equal(a, b)
    assert (fresh.t_env, fresh.n_updates, fresh.current_epsilon()) == (
        learner.t_env,
        learner.n_updates,
        learner.current_epsilon(),
    )
    assert len(fresh.buffer) == len(learner.buffer)
    # same RNG streams: the next exploratory episode and update are identical
    ep_a, _ = run_episode(env, learner, spec, explore=True, seed=50)
    ep_b, _ = run_episode(env, fresh, spec, explore=True, seed=50)
    assert np.array_equal(ep_a.actions, ep_b.actions)
    learner.observe(ep_a)
    fresh.observe(ep_b)
    assert learner.update()["loss"] == fresh.update()["loss"]
    assert torch.equal(_params(fresh), _params(learner))


@pytest.mark.parametrize("target_update", ["hard", "soft"])
def test_budget_check_rejects_a_run_without_gradient_updates(one_step, target_update):
    """Soft targets used to skip the check, so a run shorter than learning_starts trained nothing, silently."""
    _, spec = one_step
    learner = small_learner(
        "qmix", spec, target_update=target_update, target_update_interval=1, learning_starts=32, batch_size=32
    )
    with pytest.raises(ValueError, match=r"0 gradient updates.*algo\.learning_starts=32.*train\.episodes=31"):
        learner.check_budget(31)
    learner.check_budget(32)  # one update: allowed at min_updates=1
    strict = small_learner("qmix", spec, target_update=target_update, learning_starts=32, batch_size=32, min_updates=5)
    with pytest.raises(ValueError, match=r"1 gradient updates \(algo\.min_updates=5\)"):
        strict.check_budget(32)
    collect_only = small_learner("qmix", spec, target_update="soft", learning_starts=32, batch_size=32, min_updates=0)
    collect_only.check_budget(1)
