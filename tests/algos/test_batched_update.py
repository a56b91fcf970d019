"""The learner's batched forward and update compute the textbook QMIX/VDN/IQL update.

The textbook form here is the network as its docstring states it, one graph at a time:
``Linear(obs ++ id one-hot ++ action one-hot)``, torch-geometric's ``GraphConv`` (mean)
over the block-diagonal edge list of every episode's and round's graph, ``nn.GRUCell``
stepped round by round, the MLP head. The learner's update (one prepared batch shared by
the online and target networks, ``DenseGraphConv`` on the batch of adjacency matrices)
must give the same loss, the same gradients and the same parameters after the Adam step.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import algos
from algos.buffer import Episode, collate
from algos.networks import GNNRecurrentAgent, block_diagonal_edges


def textbook_qs(net: GNNRecurrentAgent, obs, last, adj) -> torch.Tensor:
    """obs [B, T1, N, D], last [B, T1, N], adj [B, T1, N, N] -> q [B, T1, N, A], the slow way."""
    from torch.func import functional_call
    from torch_geometric.nn import GraphConv

    B, T1, N, _ = obs.shape
    H, A = net.hidden_dim, net.n_actions
    parts = [obs, torch.eye(N).expand(B, T1, N, N)]
    if net.obs_last_action:
        parts.append(F.one_hot(last.clamp(min=0), A).float() * (last >= 0).unsqueeze(-1))
    h = F.relu(net.encoder(torch.cat(parts, -1))).reshape(-1, H)  # node ((b * T1) + t) * N + i
    ei = block_diagonal_edges(adj)
    for conv in net.convs:
        if net.dense_gnn:  # GraphConv's edge-list form, on the same parameters (same names)
            sparse = GraphConv(H, H, aggr="mean")
            out = functional_call(sparse, dict(conv.named_parameters()), (h, ei))
        else:
            out = conv(h, ei)
        h = h + F.relu(out)
    h = h.reshape(B, T1, N, H)
    hidden = h.new_zeros(B * N, H)
    qs = []
    for t in range(T1):
        hidden = net.rnn(h[:, t].reshape(B * N, H), hidden)
        qs.append(net.head(hidden).reshape(B, N, A))
    return torch.stack(qs, 1)


def random_batch(rng, B=5, T=6, N=3, D=4, A=6, S=5):
    """Episodes of different lengths (padding), random graphs, some actions masked."""
    eps = []
    for b in range(B):
        t = int(rng.integers(2, T + 1))
        avail = rng.random((t + 1, N, A)) < 0.7
        avail[..., 0] = True
        actions = np.array([[rng.choice(np.flatnonzero(avail[k, i])) for i in range(N)] for k in range(t)])
        eps.append(
            Episode(
                obs=rng.standard_normal((t + 1, N, D)).astype(np.float32),
                avail=avail,
                state=rng.standard_normal((t + 1, S)).astype(np.float32),
                actions=actions,
                rewards=rng.standard_normal(t).astype(np.float32),
                terminated=bool(b % 2),
                truncated=not b % 2,
                adj=rng.random((t + 1, N, N)) < 0.4,
            )
        )
    return collate(eps)


@pytest.mark.parametrize("gnn_layer,last_action", [("graphconv", True), ("graphconv", False), ("sage", True)])
def test_batched_forward_equals_the_textbook_one(gnn_layer, last_action):
    torch.manual_seed(0)
    B, T1, N, D, A, H = 3, 4, 4, 5, 9, 16
    net = GNNRecurrentAgent(D, N, A, hidden_dim=H, gnn_layer=gnn_layer, gnn_layers=2, obs_last_action=last_action)
    obs = torch.randn(B, T1, N, D)
    last = torch.randint(-1, A, (B, T1, N))
    adj = torch.rand(B, T1, N, N) < 0.4
    assert torch.allclose(net.forward_sequence(obs, last, adj), textbook_qs(net, obs, last, adj), atol=1e-5)


@pytest.mark.parametrize(
    "overrides",
    [
        {"mixer": "qmix"},
        {"mixer": "qmix", "gnn_layers": 2, "double_q": False},
        {"mixer": "vdn", "gnn_layer": "sage", "td_lambda": 0.6},
        {"mixer": "none", "gnn_layer": "none", "reward_spreading": "nstep"},
    ],
    ids=["qmix", "qmix-2layers-noDQ", "vdn-sage-lambda", "iql-nognn-nstep"],
)
def test_update_has_the_textbook_loss_gradients_and_step(overrides):
    rng = np.random.default_rng(0)
    batch = random_batch(rng)
    N, D, A, S = batch.obs.shape[2], batch.obs.shape[3], batch.avail.shape[-1], batch.state.shape[-1]
    spec = algos.EnvSpec(agents=[f"a{i}" for i in range(N)], obs_dim=D, n_actions=A, state_dim=S)
    cfg = {"batch_size": 5, "learning_starts": 5, "hidden_dim": 16, "mixing_embed_dim": 8, "hypernet_embed": 16}
    cfg.update(overrides)
    fast = algos.build("qmix", spec, cfg, seed=3)
    slow = algos.build("qmix", spec, cfg, seed=3)
    with torch.no_grad():  # a target network that differs from the online one
        for p in slow.target_agent.parameters():
            p.add_(0.1 * torch.randn_like(p))
        fast.target_agent.load_state_dict(slow.target_agent.state_dict())

    def textbook(net, b):
        last = torch.cat([torch.full_like(b.actions[:, :1], -1), b.actions], dim=1)
        return textbook_qs(net, b.obs, last, b.adj)

    slow._agent_inputs = lambda b: b  # the textbook forward reads the batch itself
    slow._agent_qs = textbook
    m_fast = fast.train_on_batch(batch)
    m_slow = slow.train_on_batch(batch)
    assert m_fast["loss"] == pytest.approx(m_slow["loss"], rel=1e-5)
    assert m_fast["q_taken_mean"] == pytest.approx(m_slow["q_taken_mean"], rel=1e-5, abs=1e-6)
    assert m_fast["target_mean"] == pytest.approx(m_slow["target_mean"], rel=1e-5, abs=1e-6)
    for (name, p), q in zip(fast.agent.named_parameters(), slow.agent.parameters()):
        assert torch.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-6), name
        assert torch.allclose(p, q, atol=1e-6), name  # the same Adam step
    for p, q in zip(fast.params, slow.params):
        assert torch.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-6)
