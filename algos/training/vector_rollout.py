"""Many episodes in flight in one process, on one event loop.

``VectorRollout`` keeps ``num_envs`` envs of one config busy. Whenever episodes finish a
round, it asks the policy for the next actions of all of them in one call
(:meth:`Algorithm.act_batch`: one batched forward pass for the learners, recurrent state
and graph kept per episode) and starts their next ``astep`` (or ``astep_plan`` for a
plan-emitting fixed policy); the episodes do not wait for each other at round ends, so
the LLM calls of all episodes are in flight at once against a batching server while one
episode's CPU work (judging, retrieval) runs. A finished episode's env takes the next
episode until the list asked for is done. Envs without ``astep`` (the matrix games) are
stepped synchronously.

Each episode is recorded by the recorder the sequential rollout uses
(:class:`algos.training.recorder.EpisodeRecorder`), so an episode's record does not depend
on which rollout ran it.

What must not depend on scheduling does not: episode ``i`` is reset with its own seed
and explores with its own random stream (seeded from the algorithm's seed and the
episode's), and the policy does not change while episodes run -- the caller learns
between calls (see ``experiments/train.py``: ``rollout.sync_every`` episodes per call).
So with a deterministic backend the episodes, and the parameters learnt from them in
episode order, are the same for any ``num_envs``.

The event loop lives as long as the runner (``asyncio.Runner``): HTTP clients built
once (an AsyncOpenAI client) stay usable across rounds and episodes.

An episode whose step raises, or whose env reports failed calls none of which succeeded
(``call_failures()``, the env contract: a server down past the backend's retries), is
dropped with its reason (:class:`EpisodeFailure`, logged); the others go on. ``algos``
imports no LLM code: the runner speaks only the env API.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, cast

import numpy as np

from envs import get_comm_graph

from ..base import Algorithm, EnvSpec, PlanPolicy
from ..buffer import Episode
from .recorder import (
    EpisodeRecorder,
    EpisodeStats,
    action_distribution,
    full_round_info,
    lost_reason,
    plan_actions,
)

log = logging.getLogger(__name__)


def check_positive(name: str, value: Any) -> int:
    """``value`` as an int >= 1, or a ValueError naming the setting."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def episode_rng(algo_seed: int, episode_seed: Optional[int], index: int) -> np.random.Generator:
    """The exploration stream of one episode: the same whatever else is in flight."""
    return np.random.default_rng(
        [int(algo_seed) & 0xFFFFFFFF, int(index if episode_seed is None else episode_seed) & 0xFFFFFFFFFFFF]
    )


@dataclass
class EpisodeResult:
    index: int  # the episode's number in the run (training episode, or evaluation episode)
    seed: Optional[int]  # the seed its env was reset with
    episode: Episode
    stats: EpisodeStats


@dataclass
class EpisodeFailure:
    index: int
    seed: Optional[int]
    reason: str  # "<ExceptionType>: message" (or why a worker was lost)


@dataclass
class RolloutResult:
    """Finished episodes in index order, and the ones dropped (with why)."""

    results: list[EpisodeResult] = field(default_factory=list)
    failures: list[EpisodeFailure] = field(default_factory=list)


@dataclass
class _Live:
    """One episode in flight in one env."""

    index: int
    seed: Optional[int]
    view: Algorithm
    recorder: EpisodeRecorder
    obs: dict
    infos: dict
    graph: np.ndarray
    rounds: int = 0


class VectorRollout:
    """``num_envs`` envs, one event loop, one batched policy call for the episodes ready to act.

    ``make_env`` builds one env (called ``num_envs`` times, once each); to share
    resources (backend, store, judge) it builds them on one ``envs.ResourcePool``
    (``runners.make_runner`` does). ``loop``: an ``asyncio.Runner`` to share with other runners of
    the same run (the training and the evaluation envs), so that clients bound to a
    loop see one loop only; by default the runner has its own. Use as a context
    manager or call :meth:`close`.
    """

    def __init__(
        self,
        make_env: Callable[[], Any],
        algo: Algorithm,
        spec: EnvSpec,
        *,
        num_envs: int,
        max_rounds: int = 10_000,
        setting: str = "rollout.num_envs",
        loop: Optional[asyncio.Runner] = None,
    ):
        self.num_envs = check_positive(setting, num_envs)
        self.algo, self.spec, self.max_rounds = algo, spec, int(max_rounds)
        self.envs = [make_env() for _ in range(self.num_envs)]
        self.emits_plans = isinstance(algo, PlanPolicy)
        if self.emits_plans and not hasattr(self.envs[0], "step_plan"):
            raise TypeError(
                f"{type(algo).__name__} hands the env round plans, but {type(self.envs[0]).__name__} has "
                "no step_plan(plan); use an env that supports plans (report_writing_v0)"
            )
        self._owns_loop = loop is None
        self._runner: Optional[asyncio.Runner] = loop if loop is not None else asyncio.Runner()

    # -- public --------------------------------------------------------------------
    def run_episodes(self, episodes: Sequence[tuple[int, Optional[int]]], *, explore: bool) -> RolloutResult:
        """Run the episodes ``[(index, seed), ...]`` with the policy as it is now."""
        if self._runner is None:
            raise RuntimeError("VectorRollout is closed")
        return self._runner.run(self._run(list(episodes), explore))

    @property
    def loop(self) -> asyncio.Runner:
        """The event loop (an ``asyncio.Runner``) the episodes run on, e.g. to close a client on it."""
        if self._runner is None:
            raise RuntimeError("VectorRollout is closed")
        return self._runner

    def close(self) -> None:
        if self._runner is not None:
            for env in self.envs:
                close = getattr(env, "close", None)
                if callable(close):
                    close()
            if self._owns_loop:
                self._runner.close()
            self._runner = None

    def __enter__(self) -> "VectorRollout":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the round loop ------------------------------------------------------------
    def _start(self, env: Any, index: int, seed: Optional[int]) -> _Live:
        obs, infos = env.reset(seed=seed)
        view = self.algo.episode_view(episode_rng(self.algo.seed, seed, index))
        return _Live(index, seed, view, EpisodeRecorder(self.spec, env), obs, infos, get_comm_graph(env, infos))

    async def _run(self, todo: list[tuple[int, Optional[int]]], explore: bool) -> RolloutResult:
        out = RolloutResult()
        queue = list(reversed(todo))
        slots: list[Optional[_Live]] = [None] * self.num_envs
        running: dict[asyncio.Future, int] = {}  # an episode's step in flight -> its env slot
        waiting = list(range(self.num_envs))  # slots whose episode waits for a decision, or that are free
        try:
            while True:
                deciding = [(i, s) for i in waiting if (s := self._next_live(i, slots, queue, out)) is not None]
                if deciding:
                    # One batched policy call for the episodes ready now; each then steps on its own, so
                    # one episode's CPU work (judge, retrieval) overlaps the other episodes' LLM calls.
                    for (i, s), step in zip(deciding, self._decide(deciding, explore)):
                        running[asyncio.ensure_future(self._step(self.envs[i], s, step))] = i
                if not running:
                    break
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                ended = sorted((running.pop(task), task) for task in finished)
                waiting = [i for i, _ in ended]
                for i, task in ended:
                    s = slots[i]
                    assert s is not None
                    error = task.exception()
                    if error is not None:
                        if not isinstance(error, Exception):
                            raise error  # KeyboardInterrupt: not an episode's fault
                        reason = f"{type(error).__name__}: {error}"
                        log.warning(
                            "episode %d (seed %s) dropped after %d rounds: %s", s.index, s.seed, s.rounds, reason
                        )
                        out.failures.append(EpisodeFailure(s.index, s.seed, reason))
                        slots[i] = None
                    elif task.result():  # done
                        result = self._finish(self.envs[i], s)
                        lost = lost_reason(result.stats.failures)
                        if lost is None:
                            out.results.append(result)
                        else:
                            log.warning(
                                "episode %d (seed %s) dropped after %d rounds: %s", s.index, s.seed, s.rounds, lost
                            )
                            out.failures.append(EpisodeFailure(s.index, s.seed, lost))
                        slots[i] = None
        finally:
            for task in running:  # interrupted (KeyboardInterrupt, cancellation): stop the others' steps
                task.cancel()
        out.results.sort(key=lambda r: r.index)
        out.failures.sort(key=lambda f: f.index)
        return out

    def _next_live(
        self, i: int, slots: list[Optional[_Live]], queue: list[tuple[int, Optional[int]]], out: RolloutResult
    ) -> Optional[_Live]:
        """Slot ``i``'s episode that can act next: its current one, or the next from the queue
        (an episode with no live agent, or at the round cap, ends before acting). None: no work."""
        while True:
            if slots[i] is None:
                if not queue:
                    return None
                slots[i] = self._start(self.envs[i], *queue.pop())
            s = slots[i]
            assert s is not None  # filled just above
            if self.envs[i].agents and s.rounds < self.max_rounds:
                return s
            out.results.append(self._finish(self.envs[i], s))
            slots[i] = None

    def _decide(self, live: list[tuple[int, _Live]], explore: bool) -> list[tuple[list[str], Any]]:
        """Record every live episode's decision point; the plans or actions of this round."""
        inputs = []
        for i, s in live:
            env = self.envs[i]
            o, m, state = s.recorder.observe(env, s.obs, s.graph)
            inputs.append((list(env.agents), o, m, state))
        if self.emits_plans:
            return [
                (acting, cast(PlanPolicy, s.view).next_plan(full_round_info(self.envs[i], s.infos)))
                for (acting, *_), (i, s) in zip(inputs, live)
            ]
        views = [s.view for _, s in live]
        actions = self.algo.act_batch(
            views,
            [x[1] for x in inputs],
            [x[2] for x in inputs],
            explore,
            states=[x[3] for x in inputs],
            graphs=[s.graph for _, s in live],
        )
        return [(acting, a) for (acting, *_), a in zip(inputs, actions)]

    async def _step(self, env: Any, s: _Live, step: tuple[list[str], Any]) -> bool:
        acting, decision = step
        if self.emits_plans:
            fn = getattr(env, "astep_plan", None)
            result = await fn(decision) if fn is not None else env.step_plan(decision)
        else:
            joint = {a: decision[a] for a in acting}
            fn = getattr(env, "astep", None)
            result = await fn(joint) if fn is not None and inspect.iscoroutinefunction(fn) else env.step(joint)
        infos = result[4]
        actions = plan_actions(env, full_round_info(env, infos), acting) if self.emits_plans else decision
        s.graph = get_comm_graph(env, infos)
        _, done = s.recorder.outcome(acting, actions, result, s.view.last_q)
        s.obs, s.infos, s.rounds = result[0], infos, s.rounds + 1
        return done

    def _finish(self, env: Any, s: _Live) -> EpisodeResult:
        s.recorder.close(env, s.obs, s.graph)
        episode, stats = s.recorder.finish()
        return EpisodeResult(s.index, s.seed, episode, stats)


def summarize(results: Sequence[EpisodeResult], spec: EnvSpec, episodes: int) -> dict[str, float]:
    """The metrics :func:`algos.training.rollout.evaluate` reports, from finished episodes."""
    rows = [r.stats for r in results]
    counts = np.zeros((spec.n_agents, spec.n_actions), np.int64)
    for s in rows:
        counts += s.action_counts
    rets = [s.ret for s in rows]
    out: dict[str, float] = {
        "return": float(np.mean(rets)) if rets else float("nan"),
        "return_std": float(np.std(rets)) if rets else float("nan"),
        "length": float(np.mean([s.length for s in rows])) if rows else float("nan"),
        "episodes": float(episodes),
    }
    if len(rows) < episodes:
        out["failed_episodes"] = float(episodes - len(rows))
    for k in sorted(set().union(*(s.infos for s in rows)) if rows else ()):
        out[k] = float(np.mean([s.infos[k] for s in rows if k in s.infos]))
    qs = [np.mean(s.q_values) for s in rows if s.q_values]
    if qs:
        out["q_chosen_mean"] = float(np.mean(qs))
    out.update(action_distribution(counts, spec.agents))
    return out


def evaluate_vectorized(runner: Any, spec: EnvSpec, episodes: int, *, seed: int = 0) -> dict[str, float]:
    """Greedy evaluation through a runner (:class:`VectorRollout` or the Ray one): the
    same episodes and seeds as :func:`algos.training.rollout.evaluate`."""
    done = runner.run_episodes([(i, seed + i) for i in range(episodes)], explore=False)
    return summarize(done.results, spec, episodes)
