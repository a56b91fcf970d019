"""TorchRL trains on the project's envs: PettingZooWrapper, check_env_specs, QMixer + QMixerLoss."""

from __future__ import annotations

import numpy as np
import pytest

torchrl = pytest.importorskip("torchrl", reason="TorchRL interop needs the bench extra: pip install -e '.[bench]'")

import envs  # noqa: E402
from envs.torchrl_compat import TEAM_GROUP, torchrl_env  # noqa: E402
from tests.envs.interop.conftest import report_env  # noqa: E402

pytestmark = pytest.mark.slow  # imports torchrl (seconds) and trains


@pytest.mark.parametrize("name", ["two_step_v0", "one_step_3x3_v0"])
def test_matrix_games_pass_check_env_specs_as_one_team(name):
    from torchrl.envs.utils import check_env_specs

    env = torchrl_env(envs.make(name), seed=0)
    check_env_specs(env)
    assert env.group_map == {TEAM_GROUP: ["agent_0", "agent_1"]}
    assert env.observation_spec["state"].shape[-1] == envs.make(name).state_space.shape[0]


def test_report_env_passes_check_env_specs_with_its_team_in_one_group_and_the_graph_as_adjacency():
    import torch
    from torchrl.envs.utils import check_env_specs

    base = report_env()
    env = torchrl_env(base, seed=0)
    check_env_specs(env)
    agents = base.possible_agents
    assert env.group_map == {TEAM_GROUP: agents}  # role names, no _<index>: one group all the same
    td = env.rollout(3)
    n = len(agents)
    adj = td["next", TEAM_GROUP, "info", "comm_adjacency"]
    assert adj.shape == (td.batch_size[0], n, n, n)  # every agent sees the same (N, N) matrix
    last = adj[-1, 0].numpy()
    edges = base.comm_graph()
    assert sorted(zip(*np.nonzero(last))) == sorted(zip(edges[0], edges[1]))
    scores = td["next", TEAM_GROUP, "info", "report_score"]
    assert torch.all(scores >= 0) and torch.all(scores <= 1)
    assert td["next", TEAM_GROUP, "info", "episode_tokens"][-1, 0] > 0
    assert td["state"].shape[-1] == base.state_space.shape[0]
    assert td[TEAM_GROUP, "action_mask"].shape == (td.batch_size[0], n, base.action_space(agents[0]).n)

    full = torchrl_env  # a clear error where TorchRL could not stack the infos
    with pytest.raises(ValueError, match="infos='stackable'"):
        full(report_env(infos="full"))


def test_report_env_with_the_adjacency_observed_passes_check_env_specs_and_observes_the_infos_matrix():
    import torch
    from torchrl.envs.utils import check_env_specs

    base = report_env(observe_comm_adjacency=True)
    env = torchrl_env(base, seed=0)
    check_env_specs(env)
    obs_key = (TEAM_GROUP, "observation", "observation")
    n = len(base.possible_agents)
    assert env.observation_spec[obs_key].shape == (n, base.obs_dim)
    _, start, stop = base.observation_layout()[-1]

    def broadcast_then_query(td):  # LeadArchitect broadcasts, Reviewer asks DataAnalyst; the rest work alone
        action = torch.zeros(n, dtype=torch.int64)
        action[0], action[3] = base.table.broadcast, base.table.query(2)
        return td.set(env.action_key, action)

    td = env.rollout(2, policy=broadcast_then_query)
    seen = td[("next", *obs_key)][..., start:stop].reshape(td.batch_size[0], n, n, n)
    assert torch.equal(seen, td["next", TEAM_GROUP, "info", "comm_adjacency"])
    assert sorted(map(tuple, torch.nonzero(seen[-1, 0]).tolist())) == [(0, 1), (0, 2), (0, 3), (2, 3)]


def test_torchrl_qmixer_and_qmixer_loss_learn_the_two_step_optimum():
    """TorchRL's own QMIX pieces (QMixer, QMixerLoss, EGreedyModule, a collector and a
    replay buffer) on the wrapped two-step game: the greedy joint policy earns 8."""
    import torch
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer
    from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
    from torchrl.envs.utils import ExplorationType, set_exploration_type
    from torchrl.modules import EGreedyModule, MultiAgentMLP, QValueModule, SafeSequential
    from torchrl.modules.models.multiagent import QMixer
    from torchrl.objectives import SoftUpdate, ValueEstimators
    from torchrl.objectives.multiagent.qmixer import QMixerLoss

    torch.manual_seed(0)
    env = torchrl_env(envs.make("two_step_v0"), seed=0)
    n_agents = len(env.group_map[TEAM_GROUP])
    obs_key = (TEAM_GROUP, "observation", "observation")
    n_actions = env.full_action_spec[TEAM_GROUP, "action"].space.n
    net = MultiAgentMLP(
        n_agent_inputs=env.observation_spec[obs_key].shape[-1],
        n_agent_outputs=n_actions,
        n_agents=n_agents,
        centralised=False,
        share_params=True,
        depth=1,
        num_cells=32,
        activation_class=nn.ReLU,
    )
    qnet = SafeSequential(
        TensorDictModule(net, in_keys=[obs_key], out_keys=[(TEAM_GROUP, "action_value")]),
        QValueModule(
            action_value_key=(TEAM_GROUP, "action_value"),
            spec=env.full_action_spec,
            action_space=None,
            out_keys=[env.action_key, (TEAM_GROUP, "action_value"), (TEAM_GROUP, "chosen_action_value")],
        ),
    )
    frames = 1200
    explore = TensorDictSequential(
        qnet,
        EGreedyModule(
            eps_init=1.0,
            eps_end=0.05,
            annealing_num_steps=frames // 2,
            action_key=env.action_key,
            spec=env.full_action_spec,
        ),
    )
    mixer = TensorDictModule(
        QMixer(state_shape=env.observation_spec["state"].shape, mixing_embed_dim=16, n_agents=n_agents, device="cpu"),
        in_keys=[(TEAM_GROUP, "chosen_action_value"), "state"],
        out_keys=["chosen_action_value"],
    )
    loss = QMixerLoss(qnet, mixer, delay_value=True)
    loss.set_keys(
        action_value=(TEAM_GROUP, "action_value"),
        local_value=(TEAM_GROUP, "chosen_action_value"),
        global_value="chosen_action_value",
        action=env.action_key,
    )
    loss.make_value_estimator(ValueEstimators.TD0, gamma=0.99)
    target_update = SoftUpdate(loss, eps=0.95)
    optim = torch.optim.Adam(loss.parameters(), lr=5e-3)
    buffer = TensorDictReplayBuffer(storage=LazyTensorStorage(2000), sampler=SamplerWithoutReplacement(), batch_size=64)
    for data in Collector(env, explore, frames_per_batch=40, total_frames=frames):
        data.set(("next", "reward"), data.get(("next", TEAM_GROUP, "reward")).mean(-2))  # the team reward
        buffer.extend(data.reshape(-1))
        for _ in range(6):
            value = loss(buffer.sample())["loss"]
            optim.zero_grad()
            value.backward()
            optim.step()
            target_update.step()
        explore[-1].step(frames=data.numel())
    with set_exploration_type(ExplorationType.DETERMINISTIC), torch.no_grad():
        episode = env.rollout(max_steps=10, policy=qnet)
    assert episode["next", TEAM_GROUP, "reward"][..., 0, 0].sum().item() == pytest.approx(8.0)
    assert episode[TEAM_GROUP, "action"].tolist() == [[1, 1], [1, 1]]  # 2B, then the (1, 1) cell
