"""The value learners' arithmetic that needs no network: exploration (the epsilon schedule,
masked epsilon-greedy) and TD(lambda) targets with per-round lambda (``reward_spreading=nstep``)."""

from __future__ import annotations

import numpy as np
import torch

from .buffer import Batch


class LinearSchedule:
    def __init__(self, start: float, finish: float, steps: int):
        self.start, self.finish, self.steps = start, finish, max(int(steps), 0)

    def __call__(self, t: int) -> float:
        if self.steps == 0:
            return self.finish
        frac = min(max(t / self.steps, 0.0), 1.0)
        return self.start + frac * (self.finish - self.start)


def masked_epsilon_greedy(q: np.ndarray, mask: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """q [N, A], mask [N, A] bool -> actions [N]; never returns a masked action."""
    if not mask.any(-1).all():
        bad = np.flatnonzero(~mask.any(-1)).tolist()
        raise ValueError(f"agents at indices {bad} have no available action")
    greedy = np.where(mask, q, -np.inf).argmax(-1)
    explore = np.asarray(rng.random(q.shape[0]) < epsilon)
    if explore.any():
        for i in np.flatnonzero(explore):
            greedy[i] = rng.choice(np.flatnonzero(mask[i]))
    return greedy


def td_targets(
    rewards: torch.Tensor,
    terminated: torch.Tensor,
    filled: torch.Tensor,
    next_v: torch.Tensor,
    gamma: float,
    td_lambda: float,
    lam: torch.Tensor | None = None,
) -> torch.Tensor:
    """rewards/terminated/filled [B, T] (IQL: [B, T, N] after broadcasting), next_v = Q'_{t+1} same shape.

    ``lam`` (same shape, optional) is a per-round lambda_t: how much of y_{t+1} (rather
    than Q'_{t+1}) round t's target takes; default ``td_lambda`` everywhere."""
    if lam is None:
        if td_lambda == 0.0:
            return rewards + gamma * (1.0 - terminated) * next_v
        lam = torch.full_like(rewards, td_lambda)
    T = rewards.shape[1]
    ys: list[torch.Tensor] = []  # y_{T-1}, ..., y_0
    y_next = next_v[:, T - 1]
    for t in range(T - 1, -1, -1):
        boot = next_v[:, t]
        if t + 1 < T:
            last = filled[:, t + 1] == 0  # round t is the episode's last
            lam_t = lam[:, t]
            cont = torch.where(last, boot, (1 - lam_t) * boot + lam_t * y_next)
        else:
            cont = boot
        y_next = rewards[:, t] + gamma * (1.0 - terminated[:, t]) * cont
        ys.append(y_next)
    return torch.stack(ys[::-1], dim=1)


def block_lambda(batch: Batch, a_star: torch.Tensor, td_lambda: float, per_agent: bool) -> torch.Tensor:
    """lambda_t for ``reward_spreading=nstep``: 1 while round t is inside an append's
    credit block and round t+1's action is the online greedy one (Watkins's cut),
    ``td_lambda`` elsewhere. a_star [B, T+1, N, 1]."""
    greedy_next = torch.zeros_like(batch.actions, dtype=torch.bool)  # [B, T, N]
    greedy_next[:, :-1] = batch.actions[:, 1:] == a_star[:, 1:-1, :, 0]
    block_end = batch.block_end if batch.block_end is not None else torch.ones_like(batch.rewards)
    inside = (block_end == 0).unsqueeze(-1)  # [B, T, 1]
    follow = inside & (greedy_next if per_agent else greedy_next.all(-1, keepdim=True))
    lam = torch.where(follow, 1.0, td_lambda).to(batch.rewards.dtype)
    return lam if per_agent else lam.squeeze(-1)
