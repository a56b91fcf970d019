"""A plugin env for the Ray fault tests: the two-step game, except that an episode
reset with a seed in ``crash_once`` kills its process mid-episode the first time (a
marker file in ``marker_dir`` remembers it), one in ``crash_always`` every time."""

import os
from pathlib import Path

import envs
from envs.matrix_games import TwoStepGame


class CrashingTwoStep(TwoStepGame):
    def __init__(self, crash_once=(), crash_always=(), marker_dir="."):
        super().__init__()
        self.crash_once, self.crash_always, self.marker_dir = set(crash_once), set(crash_always), Path(marker_dir)
        self.seed = None

    def reset(self, seed=None, options=None):
        self.seed = seed
        return super().reset(seed=seed, options=options)

    def step(self, actions):
        marker = self.marker_dir / f"crashed-{self.seed}"
        if self.seed in self.crash_always or (self.seed in self.crash_once and not marker.exists()):
            marker.touch()
            os._exit(1)  # the actor's process dies mid-episode
        return super().step(actions)


envs.register("crashing_two_step_v0", CrashingTwoStep, overwrite=True)
