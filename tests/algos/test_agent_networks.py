"""Agent networks and mixers are registry entries with their own config dataclass: picked by
``algo.network`` / ``algo.mixer``, their settings read from the algo config's keys of the same
name and from ``algo.network_config`` / ``algo.mixer_config``."""

import numpy as np
import pytest
import torch

import algos
from algos.agent_networks import NETWORKS, MLPAgent
from algos.mixers import MIXERS, QMixer
from algos.networks import GNNRecurrentAgent
from algos.training.rollout import run_episode

from .conftest import small_learner


def test_the_builtin_networks_and_mixers_are_registered_with_their_settings():
    assert {"gnn_gru", "gru", "mlp"} <= set(NETWORKS.available())
    assert {"qmix", "vdn"} <= set(MIXERS.available())
    assert {"hidden_dim", "gnn_layer", "gnn_layers", "obs_last_action"} == set(
        NETWORKS.config("gnn_gru").__dataclass_fields__
    )
    assert {"mixing_embed_dim", "hypernet_layers", "hypernet_embed"} == set(MIXERS.config("qmix").__dataclass_fields__)


@pytest.mark.parametrize("network", ["gru", "mlp"])
def test_a_network_other_than_the_gnn_trains(two_step, network):
    env, spec = two_step
    learner = small_learner("qmix", spec, network=network)
    if network == "mlp":
        assert isinstance(learner.agent, MLPAgent)
    else:  # a GRU and no message passing
        assert isinstance(learner.agent, GNNRecurrentAgent) and len(learner.agent.convs) == 0
    before = [p.detach().clone() for p in learner.agent.parameters()]
    for _ in range(6):
        ep, _ = run_episode(env, learner, spec, explore=True)
        learner.observe(ep)
        metrics = learner.update()
    assert np.isfinite(metrics["loss"]) and learner.n_updates > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, learner.agent.parameters()))
    # A checkpoint of it loads into a fresh learner of the same config.
    fresh = small_learner("qmix", spec, seed=1, network=network)
    fresh.load_state_dict(learner.state_dict())
    assert all(torch.equal(a, b) for a, b in zip(fresh.agent.parameters(), learner.agent.parameters()))


def test_the_mlp_has_no_memory_and_ignores_the_graph():
    torch.manual_seed(0)
    net = MLPAgent(obs_dim=3, n_agents=2, n_actions=4, hidden_dim=8)
    obs, last = torch.randn(1, 2, 3), torch.tensor([[0, 1]])
    h = net.init_hidden(1)
    q1, h = net.forward_step(obs, last, torch.zeros(1, 2, 2, dtype=torch.bool), h)
    q2, _ = net.forward_step(obs, last, torch.ones(1, 2, 2, dtype=torch.bool), h)
    assert q1.shape == (1, 2, 4) and torch.equal(q1, q2)


def test_default_config_builds_the_gnn_gru_and_the_qmixer_from_the_algo_keys(two_step):
    _, spec = two_step
    learner = small_learner("qmix", spec, mixing_embed_dim=8, hypernet_layers=1)
    assert learner.cfg.network == "gnn_gru" and isinstance(learner.agent, GNNRecurrentAgent)
    assert len(learner.agent.convs) == 1
    assert isinstance(learner.mixer, QMixer) and learner.mixer.embed_dim == 8
    assert isinstance(learner.mixer.hyper_w1, torch.nn.Linear)  # hypernet_layers=1: one layer


def test_component_config_overrides_the_algo_key_and_a_wrong_key_is_named(two_step):
    _, spec = two_step
    learner = small_learner("qmix", spec, mixing_embed_dim=8, mixer_config={"mixing_embed_dim": 4})
    assert learner.mixer.embed_dim == 4
    learner = small_learner("qmix", spec, network_config={"gnn_layers": 2})
    assert len(learner.agent.convs) == 2
    with pytest.raises(ValueError, match=r"algo\.mixer_config: mixer 'qmix' has no setting 'embed'"):
        small_learner("qmix", spec, mixer_config={"embed": 4})
    with pytest.raises(ValueError, match=r"algo\.network_config: agent network 'mlp' has no setting 'gnn_layers'"):
        small_learner("qmix", spec, network="mlp", network_config={"gnn_layers": 2})
    with pytest.raises(ValueError, match=r"algo\.network must be one of .*gnn_gru"):
        small_learner("qmix", spec, network="transformer")


def test_a_registered_mixer_gets_its_own_settings(two_step):
    from dataclasses import dataclass

    @dataclass
    class HalfSumConfig:
        factor: float = 0.5

    @algos.register_mixer("half_sum_test", overwrite=True)
    class HalfSum(algos.Mixer):
        needs_state = False
        config_class = HalfSumConfig

        def __init__(self, n_agents, state_dim, factor=0.5):
            super().__init__(n_agents, state_dim)
            self.factor = factor

        @classmethod
        def from_config(cls, n_agents, state_dim, cfg):
            return cls(n_agents, state_dim, cfg.factor)

        def mix(self, agent_qs, state):
            return self.factor * agent_qs.sum(-1, keepdim=True)

    _, spec = two_step
    learner = small_learner("vdn", spec, mixer="half_sum_test", mixer_config={"factor": 0.25})
    assert isinstance(learner.mixer, HalfSum) and learner.mixer.factor == 0.25
    assert float(learner.mixer(torch.ones(1, 2), None)) == 0.5
