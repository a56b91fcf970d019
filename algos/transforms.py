"""Episode transforms the learners apply before storing an episode.

``spread_append_rewards``: the report env emits an append's reward at the round it is
earned and puts ``rounds_since_append = k`` (k >= 1) in that round's infos: the reward
was produced by the last k rounds. Spreading moves it evenly over those k rounds, so
the rounds that prepared an append share its credit (the original's step buffer).
Rounds after the last append keep their own reward (normally 0).

It is kept for replication (``reward_spreading: even``) and is BIASED under a max
target: the reward a round receives then depends on when the *next* append comes, i.e.
on later actions, so it is no longer a function of the round's state and action and
Q-learning's fixed point moves (measured on a delayed-reward game with optimum 4.0: QMIX,
VDN and IQL settled for the early 3.2 in 9 of 9 runs; ``delayed_reward_v0`` reproduces
that setting). The unbiased way to give the preparing rounds credit is
the learner's ``reward_spreading: nstep`` (n-step targets reaching to the append).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .buffer import Episode

ROUNDS_SINCE_APPEND = "rounds_since_append"
# The learners' ``reward_spreading`` choices (documented at ValueLearnerConfig.reward_spreading).
REWARD_SPREADING = ("none", "nstep", "even")


def spread_append_rewards(rewards: np.ndarray, rounds_since_append: np.ndarray) -> np.ndarray:
    """Return a copy of ``rewards`` [T] with each append's reward spread over its rounds.

    ``rounds_since_append[t] = k >= 1`` marks round t as an append covering rounds
    ``t-k+1 .. t`` (clipped at the episode start); 0 marks a round that is not an append.
    The episode's total reward is unchanged.
    """
    rewards = np.asarray(rewards, dtype=np.float32)
    k_all = np.asarray(rounds_since_append, dtype=np.int64)
    if k_all.shape != rewards.shape:
        raise ValueError(f"rounds_since_append shape {k_all.shape} != rewards shape {rewards.shape}")
    out = rewards.copy()
    for t in np.flatnonzero(k_all > 0):
        k = int(min(k_all[t], t + 1))
        r = rewards[t]
        out[t] -= r
        out[t - k + 1 : t + 1] += r / k
    return out


def apply_reward_spreading(episode: Episode) -> Episode:
    """The episode with spread rewards, or the same episode when it carries no append info."""
    k = episode.extras.get(ROUNDS_SINCE_APPEND)
    if k is None:
        return episode
    return dataclasses.replace(episode, rewards=spread_append_rewards(episode.rewards, k))
