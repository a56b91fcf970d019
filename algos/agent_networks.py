"""Agent networks: the per-agent Q network a value learner (QMIX, VDN, IQL) acts and learns with.

Registered by name, each with its settings as a dataclass; ``algo.network=<name>`` picks one:

* ``gnn_gru`` (the default): encoder -> message passing over the communication graph ->
  GRU over rounds -> Q head (:class:`algos.networks.GNNRecurrentAgent`);
* ``gru``: the same without message passing (each agent sees only its own observation);
* ``mlp``: encoder -> Q head, no memory and no message passing (:class:`MLPAgent`).

A network's settings come from the algo config: a field of its dataclass takes the value of
the ``algo`` key of the same name (``hidden_dim``, ``gnn_layer``, ``gnn_layers``,
``obs_last_action``), and ``algo.network_config`` (a mapping) sets any of them, including
ones the algo config does not have.

A new network is a module with the four methods :class:`AgentNetwork` names (parameters
shared by all agents, the agent id one-hot in its input) and one registration::

    @register_network("my_net", config_class=MyNetConfig)
    def build(obs_dim, n_agents, n_actions, cfg): return MyNet(...)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol

import torch
import torch.nn as nn
import torch.nn.functional as F

from report_protocol.registry import Registry

from .networks import AgentInputs, GNNRecurrentAgent


class AgentNetwork(Protocol):
    """What a value learner calls on its agent network (and on the target copy)."""

    def init_hidden(self, batch: int) -> torch.Tensor:
        """The state before an episode's first round, [batch, N, ...]."""
        ...

    def prepare(self, obs: torch.Tensor, last_action: torch.Tensor | None, adj: torch.Tensor) -> Any:
        """obs [B, T1, N, D], last_action [B, T1, N] (-1: none yet), adj [B, T1, N, N] -> the
        network's inputs, built once for the online and the target network."""
        ...

    def forward_prepared(self, inputs: Any, hidden: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """-> (q [B, T1, N, A], the state after the last round)."""
        ...

    def forward_step(
        self, obs: torch.Tensor, last_action: torch.Tensor | None, adj: torch.Tensor, hidden: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One round: obs [B, N, D], last_action [B, N], adj [B, N, N] -> (q [B, N, A], state)."""
        ...


NetworkFactory = Callable[[int, int, int, Any], nn.Module]

NETWORKS: Registry[NetworkFactory] = Registry(
    "agent network", hint="A plugin must be imported (e.g. `plugins=[my_pkg.my_net]`) before it can be used."
)


def register_network(
    name: str, factory: Optional[NetworkFactory] = None, *, config_class: type, overwrite: bool = False
) -> Any:
    """Register ``factory(obs_dim, n_agents, n_actions, cfg) -> network`` as ``name``
    (``algo.network=name``); without ``factory``, a decorator."""
    return NETWORKS.register(name, factory, config_class=config_class, overwrite=overwrite)


def build_network(name: str, obs_dim: int, n_agents: int, n_actions: int, cfg: Any = None) -> nn.Module:
    """Registered network ``name`` with ``cfg`` (its config dataclass or a mapping of its settings)."""
    return NETWORKS.get(name).factory(obs_dim, n_agents, n_actions, NETWORKS.config(name, cfg))


@dataclass
class GNNGRUConfig:
    hidden_dim: int = 64  # width of the encoder, GNN layers and GRU
    gnn_layer: str = "graphconv"  # torch-geometric layer over the comm graph: graphconv | sage | gatv2 | none
    gnn_layers: int = 1  # message-passing layers (residual)
    obs_last_action: bool = True  # feed each agent its own previous action (one-hot)


@dataclass
class GRUConfig:
    hidden_dim: int = 64  # width of the encoder and GRU
    obs_last_action: bool = True


@dataclass
class MLPConfig:
    hidden_dim: int = 64  # width of the encoder and the Q head's hidden layer
    obs_last_action: bool = True


@register_network("gnn_gru", config_class=GNNGRUConfig)
def _gnn_gru(obs_dim: int, n_agents: int, n_actions: int, cfg: GNNGRUConfig) -> nn.Module:
    return GNNRecurrentAgent(
        obs_dim, n_agents, n_actions, cfg.hidden_dim, cfg.gnn_layer, cfg.gnn_layers, cfg.obs_last_action
    )


@register_network("gru", config_class=GRUConfig)
def _gru(obs_dim: int, n_agents: int, n_actions: int, cfg: GRUConfig) -> nn.Module:
    return GNNRecurrentAgent(obs_dim, n_agents, n_actions, cfg.hidden_dim, "none", 0, cfg.obs_last_action)


class MLPAgent(nn.Module):
    """(observation ++ agent id one-hot ++ own previous action one-hot) -> Linear + ReLU ->
    Linear + ReLU -> Linear -> one Q value per action. No memory: its state is empty
    ([B, N, 0]); no message passing: the graph is ignored."""

    agent_ids: torch.Tensor

    def __init__(self, obs_dim: int, n_agents: int, n_actions: int, hidden_dim: int = 64, obs_last_action: bool = True):
        super().__init__()
        self.n_agents, self.n_actions, self.obs_last_action = n_agents, n_actions, obs_last_action
        in_dim = obs_dim + n_agents + (n_actions if obs_last_action else 0)
        self.encoder = nn.Linear(in_dim, hidden_dim)
        self.head = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, n_actions))
        self.register_buffer("agent_ids", torch.eye(n_agents), persistent=False)

    def init_hidden(self, batch: int) -> torch.Tensor:
        return self.encoder.weight.new_zeros(batch, self.n_agents, 0)

    def prepare(self, obs: torch.Tensor, last_action: torch.Tensor | None, adj: torch.Tensor) -> AgentInputs:
        B, T1, N, _ = obs.shape
        parts = [obs, self.agent_ids.to(obs.dtype).expand(B, T1, N, N)]
        if self.obs_last_action:
            if last_action is None:
                raise ValueError("obs_last_action=True needs last_action")
            parts.append(F.one_hot(last_action + 1, self.n_actions + 1)[..., 1:].to(obs.dtype))  # -1 -> zeros
        return AgentInputs(x=torch.cat(parts, -1), graph=None, steps=T1, batch=B)

    def forward_prepared(
        self, inputs: AgentInputs, hidden: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        q = self.head(F.relu(self.encoder(inputs.x)))  # [B, T1, N, A]
        return q, self.init_hidden(inputs.batch)

    def forward_step(
        self, obs: torch.Tensor, last_action: torch.Tensor | None, adj: torch.Tensor, hidden: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        last = None if last_action is None else last_action.unsqueeze(1)
        q, h = self.forward_prepared(self.prepare(obs.unsqueeze(1), last, adj.unsqueeze(1)), hidden)
        return q[:, 0], h


@register_network("mlp", config_class=MLPConfig)
def _mlp(obs_dim: int, n_agents: int, n_actions: int, cfg: MLPConfig) -> nn.Module:
    return MLPAgent(obs_dim, n_agents, n_actions, cfg.hidden_dim, cfg.obs_last_action)
