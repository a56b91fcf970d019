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

Speed (measured with experiments/bench_learner.py): ``graphconv`` runs as
torch-geometric's ``DenseGraphConv`` on the batch of small dense adjacency matrices --
the same parameters and arithmetic as ``GraphConv`` over the block-diagonal edge list,
without the gather/scatter over edges -- and the encoder adds the agent-id and
last-action columns of its weight by lookup instead of multiplying one-hot columns.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .pyg_codegen import generated_code_in_memory


# torch_geometric is imported when a layer is built (it takes seconds to import), so
# fixed policies and plugins that do not use the GNN start fast.
def _graphconv(d: int) -> nn.Module:
    # Dense form of GraphConv(d, d, aggr="mean"): identical parameters (lin_rel with bias,
    # lin_root without) and output; a batched matmul over [G, N, N] replaces the scatter.
    from torch_geometric.nn import DenseGraphConv

    return DenseGraphConv(d, d, aggr="mean")


def _sage(d: int) -> nn.Module:
    from torch_geometric.nn import SAGEConv

    return SAGEConv(d, d, aggr="mean")


def _gatv2(d: int) -> nn.Module:
    from torch_geometric.nn import GATv2Conv

    return GATv2Conv(d, d, heads=1, add_self_loops=False)


GNN_LAYERS = {"graphconv": _graphconv, "sage": _sage, "gatv2": _gatv2}
DENSE_LAYERS = ("graphconv",)  # layers that take (x [G, N, H], adj [G, N, N]) instead of an edge list


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
        self.obs_dim = obs_dim
        self.dense_gnn = gnn_layer in DENSE_LAYERS
        with generated_code_in_memory():  # torch-geometric would leave its generated code in /tmp
            self.convs = nn.ModuleList(GNN_LAYERS[gnn_layer](hidden_dim) for _ in range(n_layers))
        self.rnn = nn.GRUCell(hidden_dim, hidden_dim)
        self.head = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, n_actions))
        self.register_buffer("agent_ids", torch.eye(n_agents), persistent=False)

    def init_hidden(self, batch: int) -> torch.Tensor:
        return self.encoder.weight.new_zeros(batch, self.n_agents, self.hidden_dim)

    def _encode(self, obs: torch.Tensor, last_action: torch.Tensor | None) -> torch.Tensor:
        """relu(encoder(obs ++ agent id one-hot ++ own last action one-hot)), computed as
        obs @ W_obs + W_id[:, i] + W_act[:, a] (the one-hot columns are lookups).
        obs [..., N, D], last_action [..., N] long (-1 = none) -> [..., N, H]."""
        D, N = self.obs_dim, self.n_agents
        w = self.encoder.weight  # [H, D + N (+ A)]
        x = F.linear(obs, w[:, :D], self.encoder.bias) + w[:, D : D + N].t()  # ids broadcast over leading dims
        if self.obs_last_action:
            table = torch.cat([w.new_zeros(1, self.hidden_dim), w[:, D + N :].t()])  # row 0: no action yet
            x = x + F.embedding(last_action + 1, table)
        return F.relu(x)

    def _embed(self, obs: torch.Tensor, last_action: torch.Tensor | None, adj: torch.Tensor) -> torch.Tensor:
        """obs [..., N, D], adj [..., N, N] -> node embeddings [..., N, H] (one batched graph)."""
        lead = obs.shape[:-1]
        h = self._encode(obs, last_action).reshape(-1, self.hidden_dim)
        if len(self.convs):
            if self.dense_gnn:
                n = self.n_agents
                # DenseGraphConv reads adj[g, i, j] as j -> i; ours is adj[g, j, i]
                a = adj.reshape(-1, n, n).transpose(1, 2).to(h.dtype)
                h = h.reshape(-1, n, self.hidden_dim)
                for conv in self.convs:
                    h = h + F.relu(conv(h, a))
                h = h.reshape(-1, self.hidden_dim)
            else:
                edge_index = block_diagonal_edges(adj)
                for conv in self.convs:
                    h = h + F.relu(conv(h, edge_index))
        return h.reshape(*lead, self.hidden_dim)

    def forward_step(self, obs, last_action, adj, hidden):
        """One round. obs [B, N, D], last_action [B, N], adj [B, N, N], hidden [B, N, H]
        -> (q [B, N, A], hidden [B, N, H])."""
        e = self._embed(obs, last_action, adj)
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
        e = self._embed(obs, last_action, adj)  # [T1, B, N, H]
        T1, B, N, H = e.shape
        cell = self.rnn
        hs, _ = torch.gru(
            e.reshape(T1, B * N, H),
            e.new_zeros(1, B * N, H),
            [cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh],
            True,
            1,
            0.0,
            self.training,
            False,
            False,
        )  # [T1, B*N, H]
        q = self.head(hs.reshape(T1 * B * N, H))
        return q.reshape(T1, B, N, self.n_actions).transpose(0, 1)
