"""Rollouts on Ray actors, for when one process's CPU work (retrieval, embedding,
judging) is the limit: ``rollout.backend=ray rollout.workers=K``.

Each actor builds its own envs from the env config and its own copy of the
algorithm, and runs episodes ``num_envs`` at a time (:class:`VectorRollout`). The
learner stays in the driver: before each batch of episodes it sends the policy's
:meth:`~algos.base.Algorithm.acting_state` (put once in Ray's object store); episodes
come back as plain dicts of numpy arrays. An episode is run by whichever actor is
free, with the same seed and exploration stream as in-process, so for a deterministic
backend the results equal :class:`VectorRollout`'s.

An actor that dies (killed, out of memory, a crash inside an episode) loses the chunk
of episodes it was running: a new actor replaces it and the chunk is run again, up to
``episode_retries`` times, then its episodes are dropped with the reason logged. What
the learner already has is untouched: it lives in the driver.

Ray is an optional extra (``pip install -e '.[ray]'``), imported only when this runner
is built. ``ray.init()`` starts a local cluster unless ``address`` names one to attach to
(then the project must be installed on every node).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
from typing import Any, Mapping, Optional, Sequence

from ..base import Algorithm, EnvSpec
from ..buffer import Episode
from .rollout import EpisodeStats
from .vector_rollout import EpisodeFailure, EpisodeResult, RolloutResult, check_positive

log = logging.getLogger(__name__)

RAY_MISSING = (
    "rollout.backend=ray needs Ray, an optional extra: pip install -e '.[ray]' "
    "(or pip install 'ray==2.60.0'); or use rollout.backend=local"
)


def import_ray():
    """Ray, or an ImportError that says how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(RAY_MISSING) from None
    return ray


# -- plain data across processes ---------------------------------------------------------
def result_to_plain(r: EpisodeResult) -> dict[str, Any]:
    ep = {k: v for k, v in r.episode.__dict__.items()}
    st = dataclasses.asdict(r.stats)
    return {"index": r.index, "seed": r.seed, "episode": ep, "stats": st}


def result_from_plain(d: Mapping[str, Any]) -> EpisodeResult:
    return EpisodeResult(int(d["index"]), d["seed"], Episode(**d["episode"]).validate(), EpisodeStats(**d["stats"]))


class RolloutWorker:
    """The body of one Ray actor (wrapped with ``ray.remote`` by :class:`RayRollout`)."""

    def __init__(
        self,
        env_name: str,
        env_kwargs: dict,
        algo_name: str,
        algo_cfg: dict,
        spec: dict,
        seed: int,
        num_envs: int,
        max_rounds: int,
        plugins: Sequence[str],
        torch_threads: int = 1,
    ):
        import torch

        import algos
        import envs
        from algos.plugins import load_plugins

        from .vector_rollout import VectorRollout

        torch.set_num_threads(int(torch_threads))
        load_plugins(list(plugins))
        self.spec = EnvSpec(**spec)
        self.algo = algos.build(algo_name, self.spec, algo_cfg, seed=seed)
        pool = envs.ResourcePool()  # this worker's envs share one backend, store and judge
        self.runner = VectorRollout(
            lambda: pool.make(env_name, **env_kwargs), self.algo, self.spec, num_envs=num_envs, max_rounds=max_rounds
        )

    def pid(self) -> int:
        return os.getpid()

    def run(self, acting_state: Optional[dict], episodes: list[tuple[int, Optional[int]]], explore: bool) -> dict:
        if acting_state is not None:
            self.algo.load_acting_state(acting_state)
        done = self.runner.run_episodes(episodes, explore=explore)
        return {
            "results": [result_to_plain(r) for r in done.results],
            "failures": [dataclasses.asdict(f) for f in done.failures],
        }


class RayRollout:
    """``workers`` Ray actors running episodes for a learner in this process.

    Same ``run_episodes(episodes, explore=...)`` as :class:`VectorRollout`.
    """

    def __init__(
        self,
        env_name: str,
        env_kwargs: Mapping[str, Any],
        algo: Algorithm,
        spec: EnvSpec,
        *,
        algo_name: str,
        algo_cfg: Mapping[str, Any],
        num_envs: int,
        workers: int,
        max_rounds: int = 10_000,
        address: Optional[str] = None,
        worker_cpus: float = 1.0,
        episode_retries: int = 1,
        plugins: Sequence[str] = (),
        torch_threads: int = 1,
    ):
        self.workers = check_positive("rollout.workers", workers)
        self.num_envs = check_positive("rollout.num_envs", num_envs)
        if episode_retries < 0:
            raise ValueError(f"rollout.episode_retries must be >= 0, got {episode_retries}")
        if worker_cpus <= 0:
            raise ValueError(f"rollout.worker_cpus must be > 0, got {worker_cpus}")
        ray = self.ray = import_ray()
        self.algo, self.spec, self.episode_retries = algo, spec, int(episode_retries)
        self._started_cluster = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = dict(include_dashboard=False, logging_level=logging.WARNING, log_to_driver=True)
            if address:
                kwargs["address"] = address
            else:  # a local cluster big enough for every actor, so none waits for a CPU forever
                kwargs["num_cpus"] = max(os.cpu_count() or 1, math.ceil(self.workers * worker_cpus))
                kwargs["object_store_memory"] = 256 * 1024 * 1024
            ray.init(**kwargs)
            self._started_cluster = True
        available = ray.cluster_resources().get("CPU", 0)
        if available < self.workers * worker_cpus:
            log.warning(
                "rollout.workers=%d x rollout.worker_cpus=%s needs %s CPUs but the Ray cluster has %s: "
                "some actors will wait for a CPU",
                self.workers,
                worker_cpus,
                self.workers * worker_cpus,
                available,
            )
        self._actor_cls = ray.remote(num_cpus=worker_cpus)(RolloutWorker)
        self._worker_args = (
            env_name,
            dict(env_kwargs),
            algo_name,
            dict(algo_cfg),
            dataclasses.asdict(spec),
            algo.seed,
            self.num_envs,
            int(max_rounds),
            list(plugins),
            int(torch_threads),
        )
        self.actors = [self._new_actor() for _ in range(self.workers)]
        self.lost_workers = 0

    def _new_actor(self):
        return self._actor_cls.remote(*self._worker_args)

    def run_episodes(self, episodes: Sequence[tuple[int, Optional[int]]], *, explore: bool) -> RolloutResult:
        ray = self.ray
        from ray.exceptions import RayActorError, WorkerCrashedError

        state_ref = ray.put(self.algo.acting_state()) if self.algo.capabilities.learns else None
        todo = [list(episodes[i : i + self.num_envs]) for i in range(0, len(episodes), self.num_envs)]
        tries = {i: 0 for i in range(len(todo))}
        queue = list(range(len(todo)))[::-1]
        running: dict[Any, tuple[int, int]] = {}  # ref -> (actor slot, chunk)
        out = RolloutResult()
        idle = list(range(len(self.actors)))[::-1]
        while queue or running:
            while queue and idle:
                slot, chunk = idle.pop(), queue.pop()
                running[self.actors[slot].run.remote(state_ref, todo[chunk], explore)] = (slot, chunk)
            ready, _ = ray.wait(list(running), num_returns=1)
            ref = ready[0]
            slot, chunk = running.pop(ref)
            try:
                done = ray.get(ref)
            except (RayActorError, WorkerCrashedError) as e:
                self.lost_workers += 1
                reason = f"rollout worker {slot} died ({type(e).__name__}: {str(e).splitlines()[0][:200]})"
                self.actors[slot] = self._new_actor()  # a fresh actor takes its place
                tries[chunk] += 1
                if tries[chunk] <= self.episode_retries:
                    log.warning(
                        "%s; re-running its %d episode(s) %s (try %d of %d)",
                        reason,
                        len(todo[chunk]),
                        [i for i, _ in todo[chunk]],
                        tries[chunk],
                        self.episode_retries,
                    )
                    queue.append(chunk)
                else:
                    log.warning(
                        "%s; dropping episode(s) %s after %d retries",
                        reason,
                        [i for i, _ in todo[chunk]],
                        self.episode_retries,
                    )
                    out.failures.extend(EpisodeFailure(i, s, reason) for i, s in todo[chunk])
                idle.append(slot)
                continue
            out.results.extend(result_from_plain(r) for r in done["results"])
            out.failures.extend(EpisodeFailure(**f) for f in done["failures"])
            idle.append(slot)
        out.results.sort(key=lambda r: r.index)
        out.failures.sort(key=lambda f: f.index)
        return out

    def worker_pids(self) -> list[int]:
        return self.ray.get([a.pid.remote() for a in self.actors])

    def close(self) -> None:
        for a in getattr(self, "actors", []):
            try:
                self.ray.kill(a)
            except Exception:  # already gone
                pass
        self.actors = []
        if getattr(self, "_started_cluster", False):
            self.ray.shutdown()
            self._started_cluster = False

    def __enter__(self) -> "RayRollout":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
