"""What the report env's agents observe and what the mixer sees as state.

The layout is declared once, as data: :data:`OBSERVATION_BLOCKS` and
:data:`STATE_BLOCKS` list each block's name, size and meaning. The gymnasium spaces,
``ReportWritingEnv.observation_layout()``, the table in ``envs/report/writing.py``'s
docstring (:func:`layout_doc`) and the vectors themselves (:class:`ReportFeatures`) all
come from these lists, so a new feature is one entry here plus its value in
:meth:`ReportFeatures.blocks`.

Sizes depend on the team: R roles known (``agents_llm.roles.ROLES``), N agents,
A = 5 + N actions, S = ``summary_dim``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from gymnasium import spaces

from report_protocol import ActionTable, RoundPlan


@dataclass(frozen=True)
class Dims:
    """The sizes a layout depends on."""

    roles: int  # R: roles the env knows (one-hot width)
    agents: int  # N
    actions: int  # A = 5 + N
    summary: int  # S: summary_dim
    comm: bool  # observe_comm_adjacency


@dataclass(frozen=True)
class Block:
    """One block of a feature vector: its name, its size for given dims, what it holds."""

    name: str
    size: Callable[[Dims], int]
    doc: str
    shown: Callable[[Dims], bool] = lambda d: True  # absent blocks take no room


# The scalar blocks' entries, in order (their meaning is the doc of their block).
ROUND_FEATURES = ("round/max", "rounds left/max", "terminate allowed")
REPORT_FEATURES = (
    "chars/length_target (<= 2)",
    "sections/10 (<= 2)",
    "report_score",
    "length_score",
    "rounds since append/max",
    "report empty",
)
TOKEN_FEATURES = ("episode tokens/token_scale", "last round tokens/round_token_scale", "own tokens/token_scale")
FLAG_FEATURES = ("RAG exhausted", "objective set", "own previous output exists")

OBSERVATION_BLOCKS: tuple[Block, ...] = (
    Block("role", lambda d: d.roles, "role one-hot [R]"),
    Block("agent", lambda d: d.agents, "agent one-hot [N]"),
    Block("round", lambda d: len(ROUND_FEATURES), ", ".join(ROUND_FEATURES)),
    Block("report", lambda d: len(REPORT_FEATURES), ", ".join(REPORT_FEATURES)),
    Block("tokens", lambda d: len(TOKEN_FEATURES), ", ".join(TOKEN_FEATURES)),
    Block("flags", lambda d: len(FLAG_FEATURES), ", ".join(FLAG_FEATURES)),
    Block("own_last_action", lambda d: d.actions, "own last action one-hot [A]"),
    Block("others_last_actions", lambda d: d.actions, "others' last actions histogram / (N-1) [A]"),
    Block("summary", lambda d: d.summary, "progress-summary embedding [S]"),
    Block(
        "comm_adjacency",
        lambda d: d.agents * d.agents,
        "only with observe_comm_adjacency=True: comm_adjacency, flattened [N*N]",
        shown=lambda d: d.comm,
    ),
)
# The state: the team's view without an agent's own parts (decision point: before the step).
STATE_BLOCKS: tuple[Block, ...] = (
    Block("round", lambda d: len(ROUND_FEATURES), ", ".join(ROUND_FEATURES)),
    Block("report", lambda d: len(REPORT_FEATURES), ", ".join(REPORT_FEATURES)),
    Block("tokens", lambda d: 2, ", ".join(TOKEN_FEATURES[:2])),
    Block("flags", lambda d: 2, ", ".join(FLAG_FEATURES[:2])),
    Block("has_output", lambda d: d.agents, "every agent's previous output exists [N]"),
    Block("last_actions", lambda d: d.agents * d.actions, "every agent's last action one-hot [N*A]"),
    Block("summary", lambda d: d.summary, "progress-summary embedding [S]"),
)


def layout(blocks: Sequence[Block], dims: Dims) -> list[tuple[str, int, int]]:
    """(name, start, stop) of each present block."""
    out, start = [], 0
    for block in blocks:
        if block.shown(dims):
            size = block.size(dims)
            out.append((block.name, start, start + size))
            start += size
    return out


def width(blocks: Sequence[Block], dims: Dims) -> int:
    spans = layout(blocks, dims)
    return spans[-1][2] if spans else 0


def layout_doc() -> str:
    """The observation and state layout as the env's docstring shows it."""

    def rows(blocks: Sequence[Block]) -> str:
        return "\n".join(f"      {b.name:<20} {b.doc}" for b in blocks)

    return (
        f"  observation, in order (`observation_layout()` gives the offsets):\n\n{rows(OBSERVATION_BLOCKS)}\n\n"
        f"  state(), in order:\n\n{rows(STATE_BLOCKS)}"
    )


@dataclass
class DecisionPoint:
    """What the features are computed from: the episode as it is before the next step."""

    round: int
    max_rounds: int
    min_rounds_before_terminate: int
    chars: int
    sections: int
    report_empty: bool
    length_target: float
    report_score: float
    length_score: float
    last_append_round: int
    episode_tokens: int
    last_round_tokens: int
    own_tokens: Mapping[str, int]  # agent -> tokens spent this episode
    rag_exhausted: bool
    objective_set: bool
    has_output: Mapping[str, bool]
    last_actions: Mapping[str, int]
    adjacency: np.ndarray  # (N, N) float32 of the last round (envs.report.infos.adjacency)
    summary: np.ndarray  # (S,) float32


class ReportFeatures:
    """Builds the spaces and the observation/state vectors of one team."""

    def __init__(
        self,
        agents: Sequence[str],
        roles: Sequence[str],
        role_names: Sequence[str],
        table: ActionTable,
        *,
        summary_dim: int,
        observe_comm_adjacency: bool,
        token_scale: float,
        round_token_scale: float,
    ):
        self.agents = list(agents)
        self.agent_roles = list(roles)  # each agent's role name, in agent order
        self.role_names = list(role_names)
        self.table = table
        self.token_scale, self.round_token_scale = float(token_scale), float(round_token_scale)
        self.dims = Dims(
            roles=len(self.role_names),
            agents=len(self.agents),
            actions=table.size,
            summary=int(summary_dim),
            comm=bool(observe_comm_adjacency),
        )
        self.obs_dim = width(OBSERVATION_BLOCKS, self.dims)
        self.state_dim = width(STATE_BLOCKS, self.dims)
        self._projection: np.ndarray | None = None
        self._summary_cache: tuple[str, np.ndarray] = ("", np.zeros(self.dims.summary, dtype=np.float32))

    # -- spaces --------------------------------------------------------------------
    def observation_space(self) -> spaces.Dict:
        return spaces.Dict(
            {
                "observation": spaces.Box(-np.inf, np.inf, (self.obs_dim,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (self.table.size,), dtype=np.int8),
            }
        )

    def state_space(self) -> spaces.Box:
        return spaces.Box(-np.inf, np.inf, (self.state_dim,), dtype=np.float32)

    def observation_layout(self) -> list[tuple[str, int, int]]:
        return layout(OBSERVATION_BLOCKS, self.dims)

    # -- the summary embedding -----------------------------------------------------
    def reset_summary(self) -> None:
        self._summary_cache = ("", np.zeros(self.dims.summary, dtype=np.float32))

    def summary(self, text: str, embedding: Any) -> np.ndarray:
        """The progress summary embedded (projected to ``summary_dim`` when the model's size differs)."""
        dim = self.dims.summary
        if dim == 0:
            return np.zeros(0, dtype=np.float32)
        if not text.strip() or embedding is None:
            return np.zeros(dim, dtype=np.float32)
        cached = self._summary_cache
        if cached[0] == text:
            return cached[1]
        vec = np.asarray(embedding.embed_documents([text]), dtype=np.float32).reshape(-1)
        if vec.shape[0] != dim:
            if self._projection is None or self._projection.shape[0] != vec.shape[0]:
                # A fixed Gaussian projection (seed 0): the same summary maps to the same features in every run.
                rng = np.random.default_rng(0)
                self._projection = (rng.standard_normal((vec.shape[0], dim)) / np.sqrt(dim)).astype(np.float32)
            vec = vec @ self._projection
        vec = vec.astype(np.float32)
        self._summary_cache = (text, vec)
        return vec

    # -- the vectors ---------------------------------------------------------------
    def vectors(self, p: DecisionPoint) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Every agent's observation vector and the state, laid out as the blocks declare."""
        n, A = self.dims.agents, self.dims.actions
        rounds_since = (p.round - p.last_append_round) / p.max_rounds
        round_f = [
            p.round / p.max_rounds,
            (p.max_rounds - p.round) / p.max_rounds,
            float(p.round >= p.min_rounds_before_terminate),
        ]
        target = float(p.length_target) or 1.0
        report_f = [
            min(p.chars / target, 2.0),
            min(p.sections / 10.0, 2.0),
            p.report_score,
            p.length_score,
            rounds_since,
            float(p.report_empty),
        ]
        flags_common = [float(p.rag_exhausted), float(p.objective_set)]
        last = np.zeros((n, A), dtype=np.float32)
        for i, a in enumerate(self.agents):
            if a in p.last_actions:
                last[i, p.last_actions[a]] = 1.0
        has_output = [float(bool(p.has_output.get(a))) for a in self.agents]
        team_tokens = [p.episode_tokens / self.token_scale, p.last_round_tokens / self.round_token_scale]

        obs = {}
        for i, a in enumerate(self.agents):
            role = np.zeros(self.dims.roles, dtype=np.float32)
            role[self.role_names.index(self.agent_roles[i])] = 1.0
            agent = np.zeros(n, dtype=np.float32)
            agent[i] = 1.0
            values = {
                "role": role,
                "agent": agent,
                "round": round_f,
                "report": report_f,
                "tokens": team_tokens + [p.own_tokens.get(a, 0) / self.token_scale],
                "flags": flags_common + [has_output[i]],
                "own_last_action": last[i],
                "others_last_actions": (last.sum(axis=0) - last[i]) / max(n - 1, 1),
                "summary": p.summary,
                "comm_adjacency": p.adjacency.reshape(-1),
            }
            obs[a] = self._concat(OBSERVATION_BLOCKS, values)
        state = self._concat(
            STATE_BLOCKS,
            {
                "round": round_f,
                "report": report_f,
                "tokens": team_tokens,
                "flags": flags_common,
                "has_output": has_output,
                "last_actions": last.reshape(-1),
                "summary": p.summary,
            },
        )
        return obs, state

    def _concat(self, blocks: Sequence[Block], values: Mapping[str, Any]) -> np.ndarray:
        parts = [np.asarray(values[b.name]) for b in blocks if b.shown(self.dims)]
        for b, part in zip((b for b in blocks if b.shown(self.dims)), parts):
            if part.size != b.size(self.dims):  # a value out of step with its declared block
                raise AssertionError(f"feature block {b.name!r}: {part.size} values, declared {b.size(self.dims)}")
        return np.concatenate(parts).astype(np.float32)


def actions_of_plan(plan: RoundPlan, agents: list[str], table: ActionTable) -> dict[str, int]:
    """The discrete action closest to what each agent did in a hand-built plan (what the
    observation's last-action blocks record for a fixed policy's round)."""
    out = {}
    others = len(agents) - 1
    for a in agents:
        if a in plan.actions:
            out[a] = int(plan.actions[a])
            continue
        if a not in plan.acting:
            out[a] = table.terminate if plan.terminate else table.solo
            continue
        senders = {s for s, r in plan.message_edges if r == a and s != a}
        receivers = {r for s, r in plan.message_edges if s == a and r != a}
        if a in plan.appenders:
            out[a] = table.append
        elif others and len(senders) == others:
            out[a] = table.aggregate
        elif others and len(receivers) == others:
            out[a] = table.broadcast
        elif len(senders) == 1:
            out[a] = table.query(agents.index(next(iter(senders))))
        else:
            out[a] = table.solo
    return out
