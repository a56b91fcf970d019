"""Run one episode of any algorithm on any env that follows the contract in ``envs``,
one round after another, and the greedy evaluation made of such episodes.

What an episode records (an :class:`algos.buffer.Episode` for the learners,
:class:`EpisodeStats` for the logs) is :class:`algos.training.recorder.EpisodeRecorder`'s
job, shared with the concurrent rollout (:mod:`algos.training.vector_rollout`).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Optional

import numpy as np

from envs import get_comm_graph

from ..base import Algorithm, EnvSpec, PlanPolicy
from ..buffer import Episode
from .recorder import (  # noqa: F401 (re-exported: the names rollout has always offered)
    LAST_VALUE_INFOS,
    PER_ROUND_EXTRAS,
    SUMMED_INFOS,
    SUMMED_PREFIXES,
    EpisodeRecorder,
    EpisodeStats,
    action_distribution,
    full_round_info,
    plan_actions,
    read_state,
    split_observations,
)


def run_episode(
    env: Any,
    algo: Algorithm,
    spec: EnvSpec,
    *,
    explore: bool,
    seed: Optional[int] = None,
    max_rounds: int = 10_000,
    on_round: Optional[Callable[[int, Mapping[str, Any]], None]] = None,
) -> tuple[Episode, EpisodeStats]:
    """``on_round(t, info)``, when given, is called after round ``t`` (0-based) with the
    first acting agent's infos (``tokens``, ``report_score``, ...): progress displays."""
    start = time.perf_counter()
    obs, infos = env.reset(seed=seed)
    recorder = EpisodeRecorder(spec, env, start=start)
    algo.begin_episode()
    graph = get_comm_graph(env, infos)
    planner = algo if isinstance(algo, PlanPolicy) else None
    if planner is not None and not hasattr(env, "step_plan"):
        raise TypeError(
            f"{type(algo).__name__} hands the env round plans, but {type(env).__name__} has no "
            "step_plan(plan); use an env that supports plans (report_writing_v0)"
        )
    for _ in range(max_rounds):
        if not env.agents:
            break
        o, m, state = recorder.observe(env, obs, graph)
        acting = list(env.agents)
        if planner is not None:  # a fixed policy with plans of its own; count the actions the env read them as
            step = env.step_plan(planner.next_plan(full_round_info(env, infos)))
            actions = plan_actions(env, full_round_info(env, step[4]), acting)
        else:
            actions = algo.act(o, m, explore, state=state, graph=graph)
            step = env.step({a: actions[a] for a in acting})
        obs, infos = step[0], step[4]
        graph = get_comm_graph(env, infos)
        info0, done = recorder.outcome(acting, actions, step, algo.last_q)
        if on_round is not None:
            on_round(recorder.rounds - 1, info0)
        if done:
            break
    recorder.close(env, obs, graph)  # the final observation (bootstrap target for a truncated episode)
    return recorder.finish()


def evaluate(
    env: Any, algo: Algorithm, spec: EnvSpec, episodes: int, *, seed: int = 0, progress: Any = None
) -> dict[str, float]:
    """Greedy evaluation over ``episodes`` episodes: mean metrics, pooled action distribution.
    ``progress`` (an :class:`algos.training.progress.RunProgress`) shows its rounds."""
    rows, counts = [], np.zeros((spec.n_agents, spec.n_actions), np.int64)
    for i in range(episodes):
        if progress is not None:
            progress.begin_episode("eval", i, episodes)
        _, st = run_episode(
            env, algo, spec, explore=False, seed=seed + i, on_round=progress.on_round if progress is not None else None
        )
        rows.append(st)
        counts += st.action_counts
    out: dict[str, float] = {
        "return": float(np.mean([s.ret for s in rows])),
        "return_std": float(np.std([s.ret for s in rows])),
        "length": float(np.mean([s.length for s in rows])),
        "episodes": float(episodes),
    }
    keys = set().union(*(s.infos for s in rows)) if rows else set()
    for k in sorted(keys):
        vals = [s.infos[k] for s in rows if k in s.infos]
        out[k] = float(np.mean(vals))
    qs = [np.mean(s.q_values) for s in rows if s.q_values]
    if qs:
        out["q_chosen_mean"] = float(np.mean(qs))
    out.update(action_distribution(counts, spec.agents))
    return out
