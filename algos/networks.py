"""The per-agent Q network shared by QMIX, VDN and IQL.

input (observation ++ agent id one-hot ++ own previous action one-hot)
  -> Linear + ReLU encoder
  -> message passing over the communication graph (torch-geometric layers, residual)
  -> GRUCell (memory across rounds)
  -> MLP -> one Q value per action.

Parameters are shared by all agents; the agent id one-hot tells them apart.

Batching: the GNN does not depend on the recurrent state, so for training it runs
*once* over every episode, round and agent of a batch: B x (T+1) graphs of N nodes
become one block-diagonal graph (node index ``((b * T1) + t) * N + i``). Only the GRU
steps through time.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .pyg_codegen import generated_code_in_memory


# torch_geometric is imported when a layer is built (it takes seconds to import), so
# fixed policies and plugins that do not use the GNN start fast.
def _graphconv(d: int) -> nn.Module:
    from torch_geometric.nn import GraphConv

    return GraphConv(d, d, aggr="mean")


def _sage(d: int) -> nn.Module:
    from torch_geometric.nn import SAGEConv

    return SAGEConv(d, d, aggr="mean")


def _gatv2(d: int) -> nn.Module:
    from torch_geometric.nn import GATv2Conv

    return GATv2Conv(d, d, heads=1, add_self_loops=False)


GNN_LAYERS = {"graphconv": _graphconv, "sage": _sage, "gatv2": _gatv2}


def block_diagonal_edges(adj: torch.Tensor) -> torch.Tensor:
    """adj [..., N, N] bool (adj[..., j, i] = edge j -> i) -> edge_index [2, E] over the
    flattened nodes, graph g owning nodes ``g * N .. g * N + N - 1``."""
    n = adj.shape[-1]
    flat = adj.reshape(-1, n, n)
    g, src, dst = flat.nonzero(as_tuple=True)
    return torch.stack([g * n + src, g * n + dst])


class GNNRecurrentAgent(nn.Module):
    def __init__(
        self,
        obs_dim: int,
        n_agents: int,
        n_actions: int,
        hidden_dim: int = 64,
        gnn_layer: str = "graphconv",
        gnn_layers: int = 1,
        obs_last_action: bool = True,
    ):
        super().__init__()
        if gnn_layer != "none" and gnn_layer not in GNN_LAYERS:
            raise ValueError(f"unknown gnn_layer {gnn_layer!r}; choose one of {['none', *GNN_LAYERS]}")
        self.n_agents, self.n_actions, self.hidden_dim = n_agents, n_actions, hidden_dim
        self.obs_last_action = obs_last_action
        in_dim = obs_dim + n_agents + (n_actions if obs_last_action else 0)
        self.encoder = nn.Linear(in_dim, hidden_dim)
        n_layers = 0 if gnn_layer == "none" else gnn_layers
        with generated_code_in_memory():  # torch-geometric would leave its generated code in /tmp
            self.convs = nn.ModuleList(GNN_LAYERS[gnn_layer](hidden_dim) for _ in range(n_layers))
        self.rnn = nn.GRUCell(hidden_dim, hidden_dim)
        self.head = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, n_actions))
        self.register_buffer("agent_ids", torch.eye(n_agents), persistent=False)

    def init_hidden(self, batch: int) -> torch.Tensor:
        return self.encoder.weight.new_zeros(batch, self.n_agents, self.hidden_dim)

    def _features(self, obs: torch.Tensor, last_action: torch.Tensor | None) -> torch.Tensor:
        """obs [..., N, D], last_action [..., N] long (-1 = none) -> inputs [..., N, F]."""
        ids = self.agent_ids.expand(*obs.shape[:-1], self.n_agents)
        parts = [obs, ids]
        if self.obs_last_action:
            la = last_action.clamp(min=0)
            onehot = F.one_hot(la, self.n_actions).to(obs.dtype) * (last_action >= 0).unsqueeze(-1).to(obs.dtype)
            parts.append(onehot)
        return torch.cat(parts, dim=-1)

    def _embed(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        """x [..., N, F], adj [..., N, N] -> node embeddings [..., N, H] (one batched graph)."""
        lead = x.shape[:-1]
        h = F.relu(self.encoder(x)).reshape(-1, self.hidden_dim)
        if len(self.convs):
            edge_index = block_diagonal_edges(adj)
            for conv in self.convs:
                h = h + F.relu(conv(h, edge_index))
        return h.reshape(*lead, self.hidden_dim)

    def forward_step(self, obs, last_action, adj, hidden):
        """One round. obs [B, N, D], last_action [B, N], adj [B, N, N], hidden [B, N, H]
        -> (q [B, N, A], hidden [B, N, H])."""
        e = self._embed(self._features(obs, last_action), adj)
        B, N, H = e.shape
        h = self.rnn(e.reshape(B * N, H), hidden.reshape(B * N, H))
        return self.head(h).reshape(B, N, self.n_actions), h.reshape(B, N, H)

    def forward_sequence(self, obs, last_action, adj) -> torch.Tensor:
        """Whole episodes. obs [B, T1, N, D], last_action [B, T1, N], adj [B, T1, N, N]
        -> q [B, T1, N, A].

        Time-major inside: the GNN runs once over all T1*B graphs, then the GRUCell's
        weights run over the sequence through torch's fused GRU (the same arithmetic
        as stepping the cell; the input projection is one matmul for all rounds)."""
        obs, last_action, adj = obs.transpose(0, 1), last_action.transpose(0, 1), adj.transpose(0, 1)
        e = self._embed(self._features(obs, last_action), adj)  # [T1, B, N, H]
        T1, B, N, H = e.shape
        cell = self.rnn
        hs, _ = torch.gru(
            e.reshape(T1, B * N, H), e.new_zeros(1, B * N, H),
            [cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh],
            True, 1, 0.0, self.training, False, False,
        )  # [T1, B*N, H]
        q = self.head(hs.reshape(T1 * B * N, H))
        return q.reshape(T1, B, N, self.n_actions).transpose(0, 1)
