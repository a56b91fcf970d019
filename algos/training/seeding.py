"""The random streams of a training run: seeding, per-episode seeds, and the RNG states
at the start of an episode (restored when the episode is abandoned, so that a resumed
run replays it exactly)."""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..base import Algorithm
from . import checkpoint as ckpt


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's and torch's global generators."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def episode_seed(run_seed: int, episode: int) -> int:
    """The env seed of training episode ``episode`` of a run seeded ``run_seed``."""
    return run_seed * 1_000_003 + episode


@dataclass
class EpisodeStartRNG:
    """The global RNG states and the algorithm's own as an episode starts (the learner
    itself changes only after the episode, so these are all a replay needs)."""

    global_state: dict[str, Any]
    algo_state: dict[str, Any]

    @classmethod
    def capture(cls, algo: Algorithm) -> "EpisodeStartRNG":
        return cls(ckpt.rng_state(), copy.deepcopy(dict(algo.rng.bit_generator.state)))

    def restore(self, algo: Algorithm) -> None:
        ckpt.set_rng_state(self.global_state)
        algo.rng.bit_generator.state = self.algo_state
