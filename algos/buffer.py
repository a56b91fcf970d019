"""Episodes and the episode replay buffer.

An :class:`Episode` holds one finished episode as numpy arrays, time-major, with the
observation, mask, state and graph of *every decision point plus the final one*
(``T + 1`` entries) and one action/reward per round (``T`` entries). ``terminated`` says
whether the last round ended the episode for real (no bootstrap); ``truncated`` that the
env cut it at a time limit, and ``time_limit_observable`` whether the env declared that
limit visible to the agents (see ``envs/__init__.py``). The learner turns an observable
cut into a terminal round and bootstraps from the final observation through any other.

The buffer samples whole episodes and collates them, padded to the longest, into a
:class:`Batch` of torch tensors with a ``filled`` mask over rounds.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import torch


@dataclass
class Episode:
    obs: np.ndarray  # [T+1, N, D] float32: observation at each decision point (+ final)
    avail: np.ndarray  # [T+1, N, A] bool: action masks
    state: np.ndarray  # [T+1, S] float32: env.state() recorded with each observation
    actions: np.ndarray  # [T, N] int64
    rewards: np.ndarray  # [T] float32: team reward (mean over agents) of each round
    terminated: bool  # True: the last round is terminal (no bootstrap)
    adj: np.ndarray  # [T+1, N, N] bool: adj[t, j, i] = edge j -> i of the graph visible at decision t
    extras: dict[str, np.ndarray] = field(default_factory=dict)  # per-round info arrays [T]
    truncated: bool = False  # the env cut the episode at a time limit (truncations), not a termination
    time_limit_observable: Optional[bool] = None  # the env's declaration for that cut (None: undeclared)

    def __len__(self) -> int:
        return int(self.actions.shape[0])

    def validate(self) -> "Episode":
        T = len(self)
        n = self.actions.shape[1] if self.actions.ndim == 2 else None
        checks = {
            "obs": (self.obs.shape[:2], (T + 1, n)),
            "avail": (self.avail.shape[:2], (T + 1, n)),
            "state": (self.state.shape[:1], (T + 1,)),
            "rewards": (self.rewards.shape, (T,)),
            "adj": (self.adj.shape, (T + 1, n, n)),
        }
        for key, (got, want) in checks.items():
            if tuple(got) != tuple(want):
                raise ValueError(f"Episode.{key}: expected leading shape {want}, got {tuple(got)}")
        return self

    @staticmethod
    def adjacency(graph: np.ndarray, n_agents: int) -> np.ndarray:
        """(2, E) edge list -> [N, N] bool adjacency (adj[src, dst])."""
        adj = np.zeros((n_agents, n_agents), dtype=bool)
        if graph.size:
            src, dst = graph
            if src.min() < 0 or dst.min() < 0 or src.max() >= n_agents or dst.max() >= n_agents:
                raise ValueError(f"comm_graph has agent indices outside [0, {n_agents}): {graph.tolist()}")
            adj[src, dst] = True
        return adj


@dataclass
class Batch:
    obs: torch.Tensor  # [B, T+1, N, D]
    avail: torch.Tensor  # [B, T+1, N, A] bool
    state: torch.Tensor  # [B, T+1, S]
    actions: torch.Tensor  # [B, T, N] long
    rewards: torch.Tensor  # [B, T]
    terminated: torch.Tensor  # [B, T] float: 1 at a terminal round
    filled: torch.Tensor  # [B, T] float: 1 where the round exists
    adj: torch.Tensor  # [B, T+1, N, N] bool
    # [B, T] float: 1 where a round ends a credit block -- an append (``rounds_since_append``
    # > 0), or every round of an episode that reports no appends. n-step targets reach to it.
    block_end: torch.Tensor | None = None

    @property
    def batch_size(self) -> int:
        return self.obs.shape[0]

    @property
    def max_t(self) -> int:
        return self.actions.shape[1]


def collate(episodes: list[Episode], device: str | torch.device = "cpu") -> Batch:
    """Pad episodes to the longest and stack them into a :class:`Batch`."""
    B = len(episodes)
    T = max(len(e) for e in episodes)
    N, D = episodes[0].obs.shape[1:]
    A = episodes[0].avail.shape[2]
    S = episodes[0].state.shape[1]
    obs = np.zeros((B, T + 1, N, D), np.float32)
    avail = np.ones((B, T + 1, N, A), bool)  # padding: all actions "available" keeps max() finite
    state = np.zeros((B, T + 1, S), np.float32)
    actions = np.zeros((B, T, N), np.int64)
    rewards = np.zeros((B, T), np.float32)
    terminated = np.zeros((B, T), np.float32)
    filled = np.zeros((B, T), np.float32)
    adj = np.zeros((B, T + 1, N, N), bool)
    block_end = np.ones((B, T), np.float32)
    for b, e in enumerate(episodes):
        t = len(e)
        obs[b, : t + 1] = e.obs
        avail[b, : t + 1] = e.avail
        state[b, : t + 1] = e.state
        actions[b, :t] = e.actions
        rewards[b, :t] = e.rewards
        filled[b, :t] = 1.0
        if e.terminated and t > 0:
            terminated[b, t - 1] = 1.0
        adj[b, : t + 1] = e.adj
        since = e.extras.get("rounds_since_append")
        if since is not None:
            block_end[b, :t] = np.asarray(since, np.float32) > 0
    # A row with no available action (e.g. agents' masks after termination) would make
    # max() -inf; those values are never used unmasked, so treat them as unrestricted.
    avail |= ~avail.any(-1, keepdims=True)
    as_t = lambda x: torch.from_numpy(x).to(device)  # noqa: E731
    return Batch(
        as_t(obs),
        as_t(avail),
        as_t(state),
        as_t(actions),
        as_t(rewards),
        as_t(terminated),
        as_t(filled),
        as_t(adj),
        as_t(block_end),
    )


class EpisodeBuffer:
    """FIFO buffer of whole episodes; uniform sampling without replacement within a batch."""

    def __init__(self, capacity: int, rng: Optional[np.random.Generator] = None):
        if capacity < 1:
            raise ValueError(f"buffer capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.episodes: deque[Episode] = deque(maxlen=capacity)
        self.rng = rng if rng is not None else np.random.default_rng()

    def __len__(self) -> int:
        return len(self.episodes)

    def add(self, episode: Episode) -> None:
        self.episodes.append(episode.validate())

    def can_sample(self, batch_size: int) -> bool:
        return len(self.episodes) >= batch_size

    def sample(self, batch_size: int, device: str | torch.device = "cpu") -> Batch:
        if not self.can_sample(batch_size):
            raise ValueError(f"buffer holds {len(self)} episodes, cannot sample {batch_size}")
        idx = self.rng.choice(len(self.episodes), size=batch_size, replace=False)
        return collate([self.episodes[i] for i in idx], device)

    def state_dict(self) -> dict[str, Any]:
        return {"capacity": self.capacity, "episodes": [e.__dict__.copy() for e in self.episodes]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.episodes = deque((Episode(**e) for e in state["episodes"]), maxlen=self.capacity)
