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
one-hot, time-major: row ``((t * B) + b) * N + i``), the mean-normalised adjacency or
the block-diagonal edge list -- once; the online and the target network both run on it
(:meth:`GNNRecurrentAgent.forward_prepared`).

Speed (measured with experiments/bench_learner.py), each with the same parameters and
the same function as the textbook form (tests/algos/test_learner.py checks both, and a
whole update's loss and gradients):

* ``graphconv`` is torch-geometric's ``GraphConv(mean)`` computed densely on the batch
  of small adjacency matrices (the arithmetic of ``DenseGraphConv``, whose parameters it
  holds): ``lin_rel(mean_j x_j) + lin_root(x_i)`` as ``A_norm @ (x W_rel^T) + x W_root^T
  + b`` in one ``baddbmm``, with ``A_norm`` normalised once per batch;
* the GRU keeps ``nn.GRUCell``'s parameters (checkpoints load unchanged) and runs a
  whole sequence through :func:`gru_sequence`: the input projection is one matmul for all
  rounds, and the recurrence is a custom autograd function whose backward runs the
  rounds in one loop and forms the weight gradients with one matmul each, instead of an
  autograd graph of a dozen nodes per round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.nn as nn
import torch.nn.functional as F

from .pyg_codegen import generated_code_in_memory


# torch_geometric is imported when a layer is built (it takes seconds to import), so
# fixed policies and plugins that do not use the GNN start fast.
def _graphconv(d: int) -> nn.Module:
    # Holds GraphConv(d, d, aggr="mean")'s parameters under its names (lin_rel with bias,
    # lin_root without); the forward is _dense_graphconv below.
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


def mean_adjacency(adj: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """adj [..., N, N] bool (adj[..., j, i] = edge j -> i) -> [G, N, N] with row i the
    mean over i's in-neighbours (all zeros for a node without any)."""
    n = adj.shape[-1]
    a = adj.reshape(-1, n, n).transpose(1, 2).to(dtype)
    return a / a.sum(-1, keepdim=True).clamp(min=1)


def _dense_graphconv(conv: Any, h: torch.Tensor, a_norm: torch.Tensor) -> torch.Tensor:
    """GraphConv(mean) on a batch of small graphs: h [G, N, H], a_norm [G, N, N] ->
    lin_rel(mean_j h_j) + lin_root(h_i), the mean taken after lin_rel's weight (they
    commute), so the aggregation is one baddbmm."""
    rel = F.linear(h, conv.lin_rel.weight)
    root = F.linear(h, conv.lin_root.weight, conv.lin_rel.bias)
    return torch.baddbmm(root, a_norm, rel)


# --- the GRU over a sequence --------------------------------------------------------
def _gru_loop(
    gi: torch.Tensor, h0: torch.Tensor, w_hh: torch.Tensor, b_hh: torch.Tensor, keep: bool
) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
    """nn.GRUCell's recurrence over gi [T, R, 3H] (the input projections W_ih x_t + b_ih)
    from h0 [R, H] -> (hs [T, R, H], what the backward needs when ``keep``):

        r, z = sigmoid(gi_rz + W_hh_rz h + b_hh_rz);  n = tanh(gi_n + r * (W_hn h + b_hn))
        h' = (1 - z) * n + z * h  (= lerp(n, h, z))
    """
    T, R, _ = gi.shape
    H = h0.shape[-1]
    w_t = w_hh.t()
    hs = gi.new_empty(T, R, H)
    gh_all = gi.new_empty(T, R, 3 * H) if keep else None
    rz_all = gi.new_empty(T, R, 2 * H) if keep else None
    n_all = gi.new_empty(T, R, H) if keep else None
    h = h0
    for t in range(T):
        g = gi[t]
        gh = torch.addmm(b_hh, h, w_t) if gh_all is None else torch.addmm(b_hh, h, w_t, out=gh_all[t])
        if rz_all is None:
            rz = torch.add(g[:, : 2 * H], gh[:, : 2 * H])
        else:
            rz = torch.add(g[:, : 2 * H], gh[:, : 2 * H], out=rz_all[t])
        rz.sigmoid_()
        if n_all is None:
            n = torch.addcmul(g[:, 2 * H :], rz[:, :H], gh[:, 2 * H :])
        else:
            n = torch.addcmul(g[:, 2 * H :], rz[:, :H], gh[:, 2 * H :], out=n_all[t])
        n.tanh_()
        h = torch.lerp(n, h, rz[:, H:], out=hs[t])
    if gh_all is None or rz_all is None or n_all is None:
        return hs, ()
    return hs, (gh_all, rz_all, n_all)


class _GRUSequence(torch.autograd.Function):
    """The recurrence of :func:`_gru_loop` with a hand-written backward: one loop back
    over the rounds carrying dL/dh, then the weight gradients as one matmul over all
    rounds."""

    @staticmethod
    def forward(ctx: Any, gi: torch.Tensor, h0: torch.Tensor, w_hh: torch.Tensor, b_hh: torch.Tensor) -> torch.Tensor:
        hs, (gh, rz, n) = _gru_loop(gi, h0, w_hh, b_hh, keep=True)
        ctx.save_for_backward(h0, w_hh, hs, gh, rz, n)
        return hs

    @staticmethod
    def backward(ctx: Any, d_hs: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        h0, w_hh, hs, gh, rz_all, n_all = ctx.saved_tensors
        T, R, H = hs.shape
        d_hs = d_hs.contiguous()
        d_gi = d_hs.new_empty(T, R, 3 * H)  # [dL/d(r, z) pre-sigmoid, dL/d(n) pre-tanh]
        d_ghn = d_hs.new_empty(T, R, H)  # dL/d(W_hn h + b_hn) = d(n pre-tanh) * r
        w_rz, w_n = w_hh[: 2 * H], w_hh[2 * H :]
        carry: torch.Tensor | None = None  # dL/dh_t through the rounds after t
        for t in range(T - 1, -1, -1):
            dh = d_hs[t] if carry is None else d_hs[t] + carry
            rz, n = rz_all[t], n_all[t]
            h_prev = hs[t - 1] if t > 0 else h0
            d_rz, d_an = d_gi[t, :, : 2 * H], d_gi[t, :, 2 * H :]
            dhz = dh * rz[:, H:]  # straight through to h_{t-1}
            torch.mul(dh - dhz, 1 - n * n, out=d_an)  # (1 - z) dh through tanh
            torch.mul(d_an, gh[t, :, 2 * H :], out=d_rz[:, :H])  # -> r
            torch.mul(dh, h_prev - n, out=d_rz[:, H:])  # -> z
            d_rz.mul_(rz - rz * rz)  # through the sigmoids
            torch.mul(d_an, rz[:, :H], out=d_ghn[t])
            carry = torch.addmm(dhz, d_rz, w_rz).addmm_(d_ghn[t], w_n)
        h_prev_all = torch.cat([h0.unsqueeze(0), hs[:-1]]).reshape(T * R, H)
        d_rz_all = d_gi[:, :, : 2 * H].reshape(T * R, 2 * H)
        d_ghn_all = d_ghn.reshape(T * R, H)
        d_w = d_b = None
        if ctx.needs_input_grad[2]:
            d_w = torch.cat([d_rz_all.t() @ h_prev_all, d_ghn_all.t() @ h_prev_all])
        if ctx.needs_input_grad[3]:
            d_b = torch.cat([d_rz_all.sum(0), d_ghn_all.sum(0)])
        d_h0 = carry if ctx.needs_input_grad[1] else None
        return d_gi, d_h0, d_w, d_b


def gru_sequence(cell: nn.GRUCell, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """``cell`` stepped over x [T, R, in] from h0 [R, H] -> hs [T, R, H], the same
    function as ``h = cell(x[t], h)`` in a loop (and the same gradients)."""
    T, R, _ = x.shape
    gi = F.linear(x.reshape(T * R, -1), cell.weight_ih, cell.bias_ih).view(T, R, -1)
    w_hh, b_hh = cell.weight_hh, cell.bias_hh
    if torch.is_grad_enabled() and any(v.requires_grad for v in (gi, h0, w_hh, b_hh)):
        out: torch.Tensor = _GRUSequence.apply(gi, h0, w_hh, b_hh)
        return out
    return _gru_loop(gi, h0, w_hh, b_hh, keep=False)[0]


@dataclass(frozen=True)
class AgentInputs:
    """What one batch gives the network, built once (:meth:`GNNRecurrentAgent.prepare`)
    and shared by every network of the same architecture (online and target)."""

    x: torch.Tensor  # [T1 * B * N, in_dim] encoder input, time-major rows ((t * B) + b) * N + i
    graph: torch.Tensor | None  # dense layers: [T1 * B, N, N] mean adjacency; others: edge_index [2, E]; no GNN: None
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
            graph = mean_adjacency(adj_t, obs.dtype) if self.dense_gnn else block_diagonal_edges(adj_t)
        return AgentInputs(x=x, graph=graph, steps=T1, batch=B)

    # --- forward ----------------------------------------------------------------------
    def _embed(self, inputs: AgentInputs) -> torch.Tensor:
        """Encoder and message passing -> node embeddings [T1 * B * N, H]."""
        h = F.relu(F.linear(inputs.x, self.encoder.weight, self.encoder.bias), inplace=True)
        if len(self.convs):
            assert inputs.graph is not None
            if self.dense_gnn:
                h = h.view(-1, self.n_agents, self.hidden_dim)
                for conv in self.convs:
                    h = h + F.relu(_dense_graphconv(conv, h, inputs.graph), inplace=True)
                h = h.view(-1, self.hidden_dim)
            else:
                for conv in self.convs:
                    h = h + F.relu(conv(h, inputs.graph))
        return h

    def forward_prepared(
        self, inputs: AgentInputs, hidden: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """-> (q [B, T1, N, A], the hidden state after the last round [B, N, H]); ``hidden``
        [B, N, H] is the state before the first round (zeros when None)."""
        T1, B, N, H = inputs.steps, inputs.batch, self.n_agents, self.hidden_dim
        e = self._embed(inputs).view(T1, B * N, H)
        h0 = e.new_zeros(B * N, H) if hidden is None else hidden.reshape(B * N, H)
        hs = gru_sequence(self.rnn, e, h0)  # [T1, B * N, H]
        first, last = cast(nn.Linear, self.head[0]), cast(nn.Linear, self.head[2])
        z = F.relu(F.linear(hs.view(T1 * B * N, H), first.weight, first.bias), inplace=True)
        q = F.linear(z, last.weight, last.bias)
        return q.view(T1, B, N, self.n_actions).transpose(0, 1), hs[-1].view(B, N, H)

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
