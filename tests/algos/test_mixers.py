import pytest
import torch

from algos.mixers import QMixer, VDNMixer


def test_qmix_is_monotonic_in_every_agent_q():
    torch.manual_seed(0)
    mixer = QMixer(n_agents=4, state_dim=6, embed_dim=8, hypernet_embed=16)
    qs = torch.randn(64, 4, requires_grad=True)
    state = torch.randn(64, 6)
    q_tot = mixer(qs, state)
    (grad,) = torch.autograd.grad(q_tot.sum(), qs)
    assert grad.shape == (64, 4)
    assert (grad >= 0).all(), "dQ_tot/dQ_i must be non-negative"
    assert (grad > 0).any()
    # raising one agent's Q never lowers Q_tot, for every state
    bumped = qs.detach().clone()
    bumped[:, 2] += 1.0
    assert (mixer(bumped, state) >= mixer(qs.detach(), state) - 1e-6).all()


def test_qmix_depends_on_state_through_hypernetworks_and_v():
    torch.manual_seed(0)
    mixer = QMixer(n_agents=2, state_dim=3, embed_dim=4, hypernet_embed=8)
    qs = torch.zeros(2, 2)
    states = torch.tensor([[1.0, 0, 0], [0, 0, 1.0]])
    out = mixer(qs, states)
    assert out[0] != out[1]  # with zero Qs only V(s) and the biases speak


def test_mixer_keeps_leading_dims():
    mixer = QMixer(n_agents=3, state_dim=5)
    out = mixer(torch.randn(7, 11, 3), torch.randn(7, 11, 5))
    assert out.shape == (7, 11)


def test_vdn_is_the_sum():
    qs = torch.randn(5, 9, 4)
    assert torch.allclose(VDNMixer(4, 0)(qs, None), qs.sum(-1))


@pytest.mark.parametrize(
    "qs_shape, state_shape, match",
    [
        ((8, 3), (8, 5), r"agent_qs must have shape \[\.\.\., n_agents=4\], got \(8, 3\)"),
        ((8, 4), (8, 6), r"state must have shape \[\.\.\., state_dim=5\], got \(8, 6\)"),
        ((8, 4), (9, 5), r"leading dims of agent_qs \(8,\) and state \(9,\) differ"),
    ],
)
def test_mixer_shape_errors_name_the_problem(qs_shape, state_shape, match):
    mixer = QMixer(n_agents=4, state_dim=5)
    with pytest.raises(ValueError, match=match):
        mixer(torch.randn(*qs_shape), torch.randn(*state_shape))


def test_qmix_requires_state():
    with pytest.raises(ValueError, match="needs the global state"):
        QMixer(n_agents=2, state_dim=3)(torch.randn(4, 2), None)
