"""The per-agent Q network shared by QMIX, VDN and IQL.

input (observation ++ agent id one-hot ++ own previous action one-hot)
  -> Linear + ReLU encoder
  -> message passing over the communication graph (torch-geometric layers, residual)
  -> GRUCell (memory across rounds)
  -> MLP -> one Q value per action.

Parameters are shared by all agents; the agent id one-hot tells them apart.

Batching: the GNN does not depend on the recurrent state, so for training it runs
*once* over every episode, round and agent of a batch: B x (T+1) graphs of N nodes
become one block-diagonal graph. Only the GRU steps through time.

One batch, two networks: :meth:`GNNRecurrentAgent.prepare` builds what depends on the
batch alone -- the encoder's input rows (observation ++ id one-hot ++ last-action
one-hot, time-major: row ``((t * B) + b) * N + i``), the batch of adjacency matrices or
the block-diagonal edge list -- once; the online and the target network both run on it
(:meth:`GNNRecurrentAgent.forward_prepared`).

Written the plain way: torch's ``nn.GRUCell`` stepped over the rounds and
torch-geometric's layers called as they are (``graphconv`` is ``DenseGraphConv(mean)``,
the same parameters and function as ``GraphConv(mean)``, on the batch of small
adjacency matrices). A hand-written GRU with its own backward pass was measured
(issue 29, docs/benchmark/learner/README.md): no faster than ``nn.GRUCell`` on the
learner's shapes, and the learner update is a negligible share of a report-env
episode, so it was removed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .pyg_codegen import generated_code_in_memory


# torch_geometric is imported when a layer is built (it takes seconds to import), so
# fixed policies and plugins that do not use the GNN start fast.
def _graphconv(d: int) -> nn.Module:
    # GraphConv(d, d, aggr="mean") in its dense form: the same parameters under the same
    # names (lin_rel with bias, lin_root without), run on the batch of [N, N] matrices.
    from torch_geometric.nn import DenseGraphConv

    return DenseGraphConv(d, d, aggr="mean")


def _sage(d: int) -> nn.Module:
    from torch_geometric.nn import SAGEConv

    return SAGEConv(d, d, aggr="mean")


def _gatv2(d: int) -> nn.Module:
    from torch_geometric.nn import GATv2Conv

    return GATv2Conv(d, d, heads=1, add_self_loops=False)


GNN_LAYERS = {"graphconv": _graphconv, "sage": _sage, "gatv2": _gatv2}
DENSE_LAYERS = ("graphconv",)  # layers that run on the batch of dense [N, N] matrices instead of an edge list


def block_diagonal_edges(adj: torch.Tensor) -> torch.Tensor:
    """adj [..., N, N] bool (adj[..., j, i] = edge j -> i) -> edge_index [2, E] over the
    flattened nodes, graph g owning nodes ``g * N .. g * N + N - 1``."""
    n = adj.shape[-1]
    flat = adj.reshape(-1, n, n)
    g, src, dst = flat.nonzero(as_tuple=True)
    return torch.stack([g * n + src, g * n + dst])


def dense_adjacency(adj: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """adj [..., N, N] bool (adj[..., j, i] = edge j -> i) -> [G, N, N] in the form dense
    torch-geometric layers take: row i holds i's in-neighbours."""
    n = adj.shape[-1]
    return adj.reshape(-1, n, n).transpose(1, 2).to(dtype)


@dataclass(frozen=True)
class AgentInputs:
    """What one batch gives the network, built once (:meth:`GNNRecurrentAgent.prepare`)
    and shared by every network of the same architecture (online and target)."""

    x: torch.Tensor  # [T1 * B * N, in_dim] encoder input, time-major rows ((t * B) + b) * N + i
    # dense layers: [T1 * B, N, N] adjacency (row i: in-neighbours); others: edge_index [2, E]; no GNN: None
    graph: torch.Tensor | None
    steps: int  # T1
    batch: int  # B


class GNNRecurrentAgent(nn.Module):
    agent_ids: torch.Tensor  # [N, N] identity, a buffer

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

    # --- inputs -----------------------------------------------------------------------
    def prepare(self, obs: torch.Tensor, last_action: torch.Tensor | None, adj: torch.Tensor) -> AgentInputs:
        """obs [B, T1, N, D], last_action [B, T1, N] long (-1 = none yet), adj [B, T1, N, N]
        bool (adj[..., j, i] = edge j -> i) -> the network's inputs, time-major."""
        B, T1, N, _ = obs.shape
        obs_t = obs.transpose(0, 1)
        parts = [obs_t, self.agent_ids.to(obs.dtype).expand(T1, B, N, N)]
        if self.obs_last_action:
            if last_action is None:
                raise ValueError("obs_last_action=True needs last_action")
            one_hot = F.one_hot(last_action.transpose(0, 1) + 1, self.n_actions + 1)[..., 1:]  # -1 -> all zeros
            parts.append(one_hot.to(obs.dtype))
        x = torch.cat(parts, -1).reshape(T1 * B * N, -1)
        graph: torch.Tensor | None = None
        if len(self.convs):
            adj_t = adj.transpose(0, 1)
            graph = dense_adjacency(adj_t, obs.dtype) if self.dense_gnn else block_diagonal_edges(adj_t)
        return AgentInputs(x=x, graph=graph, steps=T1, batch=B)

    # --- forward ----------------------------------------------------------------------
    def _embed(self, inputs: AgentInputs) -> torch.Tensor:
        """Encoder and message passing -> node embeddings [T1 * B * N, H]."""
        h = F.relu(self.encoder(inputs.x))
        if len(self.convs):
            assert inputs.graph is not None
            for conv in self.convs:
                if self.dense_gnn:
                    out = conv(h.view(-1, self.n_agents, self.hidden_dim), inputs.graph).view(-1, self.hidden_dim)
                else:
                    out = conv(h, inputs.graph)
                h = h + F.relu(out)
        return h

    def forward_prepared(
        self, inputs: AgentInputs, hidden: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """-> (q [B, T1, N, A], the hidden state after the last round [B, N, H]); ``hidden``
        [B, N, H] is the state before the first round (zeros when None)."""
        T1, B, N, H = inputs.steps, inputs.batch, self.n_agents, self.hidden_dim
        e = self._embed(inputs).view(T1, B * N, H)
        h = e.new_zeros(B * N, H) if hidden is None else hidden.reshape(B * N, H)
        hs = []
        for t in range(T1):  # only the GRU steps through time
            h = self.rnn(e[t], h)
            hs.append(h)
        q = self.head(torch.stack(hs))  # [T1, B * N, A]
        return q.view(T1, B, N, self.n_actions).transpose(0, 1), h.view(B, N, H)

    def forward_step(
        self, obs: torch.Tensor, last_action: torch.Tensor | None, adj: torch.Tensor, hidden: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One round. obs [B, N, D], last_action [B, N], adj [B, N, N], hidden [B, N, H]
        -> (q [B, N, A], hidden [B, N, H])."""
        last = None if last_action is None else last_action.unsqueeze(1)
        q, h = self.forward_prepared(self.prepare(obs.unsqueeze(1), last, adj.unsqueeze(1)), hidden)
        return q[:, 0], h

    def forward_sequence(self, obs: torch.Tensor, last_action: torch.Tensor | None, adj: torch.Tensor) -> torch.Tensor:
        """Whole episodes from a zero state. obs [B, T1, N, D], last_action [B, T1, N],
        adj [B, T1, N, N] -> q [B, T1, N, A]."""
        return self.forward_prepared(self.prepare(obs, last_action, adj))[0]
