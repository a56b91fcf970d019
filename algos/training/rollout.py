"""Run one episode of any algorithm on any env that follows the contract in ``envs``.

Records what the learners need (an :class:`algos.buffer.Episode`) and what the logs
show (:class:`EpisodeStats`): return, length, per-agent action counts, and the env's
optional per-round numbers (``report_score``, ``length_score``, ``tokens``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

import numpy as np

from envs import CallFailures, get_call_failures, get_comm_graph

from ..base import Algorithm, EnvSpec, PlanPolicy
from ..buffer import Episode

LAST_VALUE_INFOS = ("report_score", "length_score")  # logged as the episode's last value
SUMMED_INFOS = ("tokens", "llm_calls", "llm_errors")  # per-round counts, summed over the episode
SUMMED_PREFIXES = ("referee/",)  # per-round counts by name prefix (the report env's referee flags), summed
PER_ROUND_EXTRAS = ("rounds_since_append",)  # stored with the episode for transforms


@dataclass
class EpisodeStats:
    ret: float
    length: int
    terminated: bool
    action_counts: np.ndarray  # [N, A]
    q_values: list[float] = field(default_factory=list)  # mean chosen Q per round (learners)
    infos: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    # the env's report on the episode's failed calls (envs.CallFailures; none for an env without calls)
    failures: CallFailures = field(default_factory=CallFailures)

    def __post_init__(self) -> None:
        if isinstance(self.failures, dict):  # plain data from another process (algos.training.ray_rollout)
            self.failures = CallFailures(**self.failures)

    def as_metrics(self, agents: list[str], prefix: str = "") -> dict[str, float]:
        m = {f"{prefix}return": self.ret, f"{prefix}length": float(self.length), f"{prefix}time_s": self.seconds}
        for k, v in self.infos.items():
            m[f"{prefix}{k}"] = v
        if self.q_values:
            m[f"{prefix}q_chosen_mean"] = float(np.mean(self.q_values))
        m.update(action_distribution(self.action_counts, agents, prefix))
        return m


def action_distribution(counts: np.ndarray, agents: list[str], prefix: str = "") -> dict[str, float]:
    """Per-agent action frequencies ``act/<agent>/<a>`` plus the share of the most frequent
    action ``act/<agent>/top`` (1.0 = the agent always does the same thing: collapsed)."""
    out: dict[str, float] = {}
    for i, agent in enumerate(agents):
        total = counts[i].sum()
        freqs = counts[i] / total if total else np.zeros_like(counts[i], dtype=float)
        for a, f in enumerate(freqs):
            out[f"{prefix}act/{agent}/{a}"] = float(f)
        out[f"{prefix}act/{agent}/top"] = float(freqs.max()) if total else 0.0
    return out


def split_observations(obs: dict, spec: EnvSpec) -> tuple[dict, dict]:
    """Per-agent (observation, action mask) from a step's observations: the contract's
    ``{"observation", "action_mask"}`` dicts, or plain arrays (every action allowed)."""
    o, m = {}, {}
    for a, v in obs.items():
        if isinstance(v, dict):
            o[a] = np.asarray(v["observation"], np.float32).reshape(-1)
            m[a] = np.asarray(v.get("action_mask", np.ones(spec.n_actions, np.int8)), np.int8)
        else:
            o[a], m[a] = np.asarray(v, np.float32).reshape(-1), np.ones(spec.n_actions, np.int8)
    return o, m


def read_state(env: Any, spec: EnvSpec) -> np.ndarray:
    """``env.state()`` flattened to ``spec.state_dim`` (empty for an env without a state)."""
    if spec.state_dim == 0:
        return np.zeros(0, np.float32)
    return np.asarray(env.state(), np.float32).reshape(spec.state_dim)


def plan_actions(env: Any, infos: dict, acting: list[str]) -> dict[str, int]:
    """The discrete action each agent's part in a plan amounts to (``infos[agent]["action"]``:
    its index, or its name as in ``env.action_names()``)."""
    names_of = getattr(env, "action_names", None)
    index = {n: i for i, n in enumerate(names_of())} if callable(names_of) else {}
    out = {}
    for a in acting:
        action = (infos.get(a) or {}).get("action")
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            out[a] = int(action)
        elif action in index:
            out[a] = index[action]
    return out


def full_round_info(env: Any, infos: dict) -> dict:
    """The last round's full infos, text and nested data included: ``env.last_round_info()``
    where the env keeps them out of ``step``'s infos (so that TorchRL can stack those)."""
    full = getattr(env, "last_round_info", None)
    return full() if callable(full) else infos


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
    N, A = spec.n_agents, spec.n_actions
    obs, infos = env.reset(seed=seed)
    algo.begin_episode()
    graph = get_comm_graph(env, infos)
    o_list, m_list, s_list, g_list, a_list, r_list = [], [], [], [], [], []
    extras: dict[str, list[float]] = {k: [] for k in PER_ROUND_EXTRAS}
    seen_extras: set[str] = set()
    counts = np.zeros((N, A), np.int64)
    info_last: dict[str, float] = {}
    info_sum: dict[str, float] = {}
    q_values: list[float] = []
    terminated = truncated = False
    limit_observable: Optional[bool] = getattr(getattr(env, "unwrapped", env), "time_limit_observable", None)
    planner = algo if isinstance(algo, PlanPolicy) else None
    if planner is not None and not hasattr(env, "step_plan"):
        raise TypeError(
            f"{type(algo).__name__} hands the env round plans, but {type(env).__name__} has no "
            "step_plan(plan); use an env that supports plans (report_writing_v0)"
        )

    def record(o, m, s, g):
        o_list.append(spec.stack_observations(o))
        m_list.append(spec.stack_masks(m))
        s_list.append(s)
        g_list.append(Episode.adjacency(g, N))

    for _ in range(max_rounds):
        if not env.agents:
            break
        o, m = split_observations(obs, spec)
        state = read_state(env, spec)  # recorded with the observation, before the step
        record(o, m, state, graph)
        acting = list(env.agents)
        if planner is not None:  # a fixed policy with plans of its own; count the actions the env read them as
            obs, rewards, terms, truncs, infos = env.step_plan(planner.next_plan(full_round_info(env, infos)))
            actions = plan_actions(env, full_round_info(env, infos), acting)
        else:
            actions = algo.act(o, m, explore, state=state, graph=graph)
            obs, rewards, terms, truncs, infos = env.step({a: actions[a] for a in acting})
        graph = get_comm_graph(env, infos)
        joint = np.zeros(N, np.int64)
        for i, a in enumerate(spec.agents):
            if a in actions:
                joint[i] = actions[a]
                counts[i, actions[a]] += 1
        a_list.append(joint)
        r_list.append(float(np.mean([rewards[a] for a in acting])) if acting else 0.0)
        q = algo.last_q
        if q is not None:
            q_values.append(float(np.mean(q)))
        info0: dict[str, Any] = next((infos[a] for a in acting if isinstance(infos.get(a), dict)), {})
        for k in LAST_VALUE_INFOS:
            if k in info0:
                info_last[k] = float(info0[k])
        for k in list(SUMMED_INFOS) + [k for k in info0 if k.startswith(SUMMED_PREFIXES)]:
            if k in info0:
                info_sum[k] = info_sum.get(k, 0.0) + float(info0[k])
        for k in PER_ROUND_EXTRAS:
            if k in info0:
                seen_extras.add(k)
            extras[k].append(float(info0.get(k, 0)))
        if on_round is not None:
            on_round(len(a_list) - 1, info0)
        done = {a: terms.get(a, False) or truncs.get(a, False) for a in acting}
        if all(done.values()):
            terminated = all(terms.get(a, False) for a in acting)
            truncated = not terminated
            # a per-episode declaration in infos overrides the env attribute (envs/__init__.py)
            if "time_limit_observable" in info0:
                limit_observable = bool(info0["time_limit_observable"])
            break
    # the final observation (bootstrap target for a truncated episode)
    o, m = split_observations(obs, spec) if obs else ({}, {})
    try:
        state = read_state(env, spec)
    except Exception:  # some envs refuse state() after the end
        state = np.zeros(spec.state_dim, np.float32)
    record(o, m, state, graph)

    T = len(a_list)
    episode = Episode(
        obs=np.stack(o_list),
        avail=np.stack(m_list),
        state=np.stack(s_list).reshape(T + 1, spec.state_dim),
        actions=np.stack(a_list) if T else np.zeros((0, N), np.int64),
        rewards=np.asarray(r_list, np.float32),
        terminated=terminated,
        adj=np.stack(g_list),
        extras={k: np.asarray(extras[k], np.float32) for k in seen_extras},
        truncated=truncated,
        time_limit_observable=limit_observable,
    ).validate()
    stats = EpisodeStats(
        ret=float(sum(r_list)),
        length=T,
        terminated=terminated,
        action_counts=counts,
        q_values=q_values,
        infos={**info_last, **info_sum},
        seconds=time.perf_counter() - start,
        failures=get_call_failures(env),
    )
    return episode, stats


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
