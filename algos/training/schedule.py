"""The training episodes of a run, in order, from the sequential loop or a concurrent runner.

The trainer sees one stream of :class:`ScheduledEpisode` whichever way they were played:
the sequential loop plays one episode at a time with the policy as it is; a concurrent
runner collects ``episodes_per_sync`` episodes with the policy as it is, then hands them
over one by one, as the sequential loop would have made them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from ..base import Algorithm, EnvSpec
from ..buffer import Episode
from .progress import RunProgress
from .rollout import EpisodeStats, run_episode
from .seeding import EpisodeStartRNG, episode_seed


@dataclass
class ScheduledEpisode:
    """One training episode: its number, what it recorded, and its wall time. A concurrent
    runner may drop an episode (``episode`` and ``stats`` None, ``failure`` the reason)."""

    index: int
    episode: Optional[Episode]
    stats: Optional[EpisodeStats]
    seconds: float
    failure: Optional[str] = None


class EpisodeSchedule:
    """Episodes ``start .. total - 1`` of a run seeded ``run_seed``, each seeded by
    :func:`algos.training.seeding.episode_seed`.

    ``start_rng`` holds the RNG states as the current sequential episode started, until
    :meth:`episode_done`: an interrupt or a stop inside that episode restores them, so a
    resumed run replays it exactly. It stays None for a concurrent runner, whose episodes
    draw from streams of their own.
    """

    def __init__(
        self,
        *,
        env: Any,
        algo: Algorithm,
        spec: EnvSpec,
        runner: Any,
        run_seed: int,
        start: int,
        total: int,
        max_rounds: int,
        block: int,
        progress: RunProgress,
    ):
        self.env, self.algo, self.spec, self.runner = env, algo, spec, runner
        self.run_seed, self.start, self.total = run_seed, start, total
        self.max_rounds, self.block, self.progress = max_rounds, block, progress
        self.start_rng: Optional[EpisodeStartRNG] = None

    def episode_done(self) -> None:
        """The current episode has been learnt from: an interrupt no longer replays it."""
        self.start_rng = None

    def __iter__(self) -> Iterator[ScheduledEpisode]:
        return self._sequential() if self.runner is None else self._concurrent()

    def _sequential(self) -> Iterator[ScheduledEpisode]:
        for ep in range(self.start, self.total):
            self.start_rng = EpisodeStartRNG.capture(self.algo)
            t0 = time.perf_counter()
            self.progress.begin_episode("train")
            episode, stats = run_episode(
                self.env,
                self.algo,
                self.spec,
                explore=True,
                seed=episode_seed(self.run_seed, ep),
                max_rounds=self.max_rounds,
                on_round=self.progress.on_round,
            )
            yield ScheduledEpisode(ep, episode, stats, time.perf_counter() - t0)

    def _concurrent(self) -> Iterator[ScheduledEpisode]:
        for first in range(self.start, self.total, self.block):
            t0 = time.perf_counter()
            wanted = [(ep, episode_seed(self.run_seed, ep)) for ep in range(first, min(first + self.block, self.total))]
            done = self.runner.run_episodes(wanted, explore=True)
            per_episode = (time.perf_counter() - t0) / len(wanted)
            if not done.results:
                raise RuntimeError(
                    f"every episode of {wanted[0][0]}..{wanted[-1][0]} failed; first: {done.failures[0].reason}"
                )
            by_index = {r.index: r for r in done.results}
            reasons = {f.index: f.reason for f in done.failures}
            for ep, _ in wanted:
                self.progress.begin_episode("train")
                if ep in by_index:
                    yield ScheduledEpisode(ep, by_index[ep].episode, by_index[ep].stats, per_episode)
                else:
                    yield ScheduledEpisode(ep, None, None, per_episode, failure=reasons.get(ep, "lost"))
