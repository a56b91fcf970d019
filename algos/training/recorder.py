"""What one episode records, one round at a time: the one recorder of every rollout.

:class:`EpisodeRecorder` turns an episode's decision points and round outcomes into
what the learners need (an :class:`algos.buffer.Episode`) and what the logs show
(:class:`EpisodeStats`): return, length, per-agent action counts, and the env's
optional per-round numbers (``report_score``, ``length_score``, ``tokens``, ...; see
the env contract in ``envs/__init__.py``). The sequential rollout
(:func:`algos.training.rollout.run_episode`) and the concurrent one
(:class:`algos.training.vector_rollout.VectorRollout`) both drive it, so an episode is
recorded the same way whichever runs it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from envs import CallFailures, get_call_failures

from ..base import EnvSpec
from ..buffer import Episode

LAST_VALUE_INFOS = ("report_score", "length_score")  # logged as the episode's last value
# Per-round counts, summed over the episode. The prompt tokens the model computed and those it
# reused from earlier prompts' state (llamacpp prompt reuse) make an LLM run's cost readable per episode.
SUMMED_INFOS = ("tokens", "llm_calls", "llm_errors", "prompt_tokens_evaluated", "prompt_tokens_reused")
SUMMED_PREFIXES = ("referee/",)  # per-round counts by name prefix (the report env's referee flags), summed
PER_ROUND_EXTRAS = ("rounds_since_append", "tokens")  # stored with the episode: transforms, graph_pg's token cost


@dataclass
class EpisodeStats:
    ret: float
    length: int
    terminated: bool
    action_counts: np.ndarray  # [N, A]
    q_values: list[float] = field(default_factory=list)  # mean chosen Q per round (learners)
    infos: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    # the env's report on the episode's failed calls (envs.CallFailures; empty for an env without calls)
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


def lost_reason(failures: CallFailures) -> Optional[str]:
    """Why an episode is worth nothing: its calls failed and none succeeded (e.g. a server
    refusing connections past the backend's retries); None when it is worth learning from."""
    if failures.none_succeeded:
        return f"all LLM calls failed ({failures.failed}); first: {failures.cause}"
    return None


class EpisodeRecorder:
    """One episode's record: a decision point (:meth:`observe`), then the round's outcome
    (:meth:`outcome`), round after round; the final observation (:meth:`close`); then
    :meth:`finish`. ``env`` is the episode's env (its time-limit declaration is read);
    ``start``: when the episode began (``time.perf_counter()``; default now)."""

    def __init__(self, spec: EnvSpec, env: Any, *, start: Optional[float] = None):
        self.spec = spec
        N, A = spec.n_agents, spec.n_actions
        self.o: list[np.ndarray] = []  # observations [N, D], one per decision point
        self.m: list[np.ndarray] = []  # action masks [N, A]
        self.s: list[np.ndarray] = []  # global states
        self.g: list[np.ndarray] = []  # adjacency [N, N] of the communication graph
        self.a: list[np.ndarray] = []  # joint actions [N]
        self.r: list[float] = []  # team rewards
        self.extras: dict[str, list[float]] = {k: [] for k in PER_ROUND_EXTRAS}
        self.seen_extras: set[str] = set()
        self.counts = np.zeros((N, A), np.int64)
        self.info_last: dict[str, float] = {}
        self.info_sum: dict[str, float] = {}
        self.q_values: list[float] = []
        self.terminated = False
        self.truncated = False  # cut at a time limit (see Episode.truncated)
        # the env's declaration for that cut; a per-episode one in the last round's infos overrides it
        self.time_limit_observable: Optional[bool] = getattr(
            getattr(env, "unwrapped", env), "time_limit_observable", None
        )
        self.failures = CallFailures()
        self.start = time.perf_counter() if start is None else start

    @property
    def rounds(self) -> int:
        """Rounds recorded so far."""
        return len(self.a)

    def decision(self, o: dict, m: dict, state: np.ndarray, graph: np.ndarray) -> None:
        self.o.append(self.spec.stack_observations(o))
        self.m.append(self.spec.stack_masks(m))
        self.s.append(state)
        self.g.append(Episode.adjacency(graph, self.spec.n_agents))

    def observe(self, env: Any, obs: dict, graph: np.ndarray) -> tuple[dict, dict, np.ndarray]:
        """Record the decision point before a step; (observations, masks, state) to act on.
        The state is read now, before the step, and recorded with the observation."""
        o, m = split_observations(obs, self.spec)
        state = read_state(env, self.spec)
        self.decision(o, m, state, graph)
        return o, m, state

    def outcome(
        self,
        acting: list[str],
        actions: dict[str, int],
        step: tuple[dict, dict, dict, dict, dict],
        last_q: Any,
    ) -> tuple[dict[str, Any], bool]:
        """Record a round from its ``step`` result ``(obs, rewards, terms, truncs, infos)``;
        (the first acting agent's infos, whether the episode ended)."""
        _, rewards, terms, truncs, infos = step
        joint = np.zeros(self.spec.n_agents, np.int64)
        for i, a in enumerate(self.spec.agents):
            if a in actions:
                joint[i] = actions[a]
                self.counts[i, actions[a]] += 1
        self.a.append(joint)
        self.r.append(float(np.mean([rewards[a] for a in acting])) if acting else 0.0)
        if last_q is not None:
            self.q_values.append(float(np.mean(last_q)))
        info0: dict[str, Any] = next((infos[a] for a in acting if isinstance(infos.get(a), dict)), {})
        for k in LAST_VALUE_INFOS:
            if k in info0:
                self.info_last[k] = float(info0[k])
        for k in list(SUMMED_INFOS) + [k for k in info0 if k.startswith(SUMMED_PREFIXES)]:
            if k in info0:
                self.info_sum[k] = self.info_sum.get(k, 0.0) + float(info0[k])
        for k in PER_ROUND_EXTRAS:
            if k in info0:
                self.seen_extras.add(k)
            self.extras[k].append(float(info0.get(k, 0)))
        done = all(terms.get(a, False) or truncs.get(a, False) for a in acting)
        if done:
            self.terminated = all(terms.get(a, False) for a in acting)
            self.truncated = not self.terminated
            # a per-episode declaration in infos overrides the env attribute (envs/__init__.py)
            if "time_limit_observable" in info0:
                self.time_limit_observable = bool(info0["time_limit_observable"])
        return info0, done

    def close(self, env: Any, obs: dict, graph: np.ndarray) -> None:
        """Record the final observation (the bootstrap target of a truncated episode) and the
        env's report on the episode's failed calls."""
        o, m = split_observations(obs, self.spec) if obs else ({}, {})
        try:
            state = read_state(env, self.spec)
        except Exception:  # some envs refuse state() after the end
            state = np.zeros(self.spec.state_dim, np.float32)
        self.decision(o, m, state, graph)
        self.failures = get_call_failures(env)

    def finish(self) -> tuple[Episode, EpisodeStats]:
        spec, T = self.spec, len(self.a)
        episode = Episode(
            obs=np.stack(self.o),
            avail=np.stack(self.m),
            state=np.stack(self.s).reshape(T + 1, spec.state_dim),
            actions=np.stack(self.a) if T else np.zeros((0, spec.n_agents), np.int64),
            rewards=np.asarray(self.r, np.float32),
            terminated=self.terminated,
            adj=np.stack(self.g),
            extras={k: np.asarray(self.extras[k], np.float32) for k in self.seen_extras},
            truncated=self.truncated,
            time_limit_observable=self.time_limit_observable,
        ).validate()
        stats = EpisodeStats(
            ret=float(sum(self.r)),
            length=T,
            terminated=self.terminated,
            action_counts=self.counts,
            q_values=self.q_values,
            infos={**self.info_last, **self.info_sum},
            seconds=time.perf_counter() - self.start,
            failures=self.failures,
        )
        return episode, stats
