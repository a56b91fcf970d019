"""`report_writing_v0`: a team of LLM agents writes one sourced report per episode.

PettingZoo `ParallelEnv`. Each round every agent picks one of `5 + N` communication
actions (see `report_protocol.actions`); the joint action becomes a `RoundPlan`; the
round engine runs it; the Collector appends; the judge scores; the env emits the
reward at the round it is earned.

Spaces (all agents share them; agent order in `possible_agents` = team order = priority):

* action: `Discrete(5 + N)`.
* observation: `{"observation": Box(float32, (D,)), "action_mask": Box(0, 1, (5+N,), int8)}`
  with `D = R + N + 15 + 2A + S` (R roles, N agents, A = 5 + N actions, S = summary_dim),
  laid out as (see `observation_layout()`):

      role one-hot [R] | agent one-hot [N] |
      round/max, rounds left/max, terminate allowed |
      chars/length_target (<= 2), sections/10 (<= 2), report_score, length_score,
      rounds since append/max, report empty |
      episode tokens/token_scale, last round tokens/round_token_scale, own tokens/token_scale |
      RAG exhausted, objective set, own previous output exists |
      own last action one-hot [A] | others' last actions histogram / (N-1) [A] |
      progress-summary embedding [S] |
      [only with observe_comm_adjacency=True: comm_adjacency, flattened [N*N]]

  `observe_comm_adjacency=True` (off by default; then D grows by N*N and nothing before
  it moves) appends the last round's communication graph as the fixed-shape adjacency
  of the infos (`envs/report_infos.py`), row-major: element `j*N + i` is 1 when agent i
  received agent j's output in the round just run (sender row, receiver column, agent
  indices in `possible_agents` order; zeros after reset and on the diagonal). Every
  agent sees the same matrix. It is part of the one observation vector, so the
  learners, TorchRL's `PettingZooWrapper` and BenchMARL take it without change.

* `state()`: round, report and token features, flags, every agent's "has output" and
  last action one-hot, and the summary embedding. It is computed together with the
  observations, i.e. it is the state *before* the next step (the decision point).
* `comm_graph()`: the last round's message edges as int64 (2, E), row 0 sender.

Masks: no self-query; no broadcast/aggregate in a one-agent team; no terminate while
the report is empty or before `min_rounds_before_terminate` rounds. A masked choice is
not an error: it falls back to solo_process and is recorded (infos `denied`, trace).

Episode end: termination when at least half of the agents vote terminate; truncation at
`max_rounds`, when the token budget runs out, or when the LLM failed (reason `llm_error`:
the server could not be used, or no call of a round succeeded; `infos[...]["llm_error"]`
and the trace's `end.detail` give the cause) (`infos[...]["end_reason"]`). Every round's
infos count its LLM calls and failed calls (`llm_calls`, `llm_errors`). Stepping
after the end raises. The trace and report are kept whatever happens, including an
exception inside a round (the episode is then closed with reason "error" and the
exception re-raised).

RoundPlan extension: `step_plan(plan)` / `astep_plan(plan)` run a fixed policy's
`RoundPlan` (or a plain dict, `RoundPlan.from_dict`) through the same prompts, reward,
token accounting and trace; the return value is the same five dicts as `step`.

Shared resources (LLM backend, RAG store + embedding, judge) come from the config and are
built once per process, or can be passed in (`backend=`, `retriever=`, `embedding=`,
`judge=`); constructing and resetting an env is cheap.
"""
from __future__ import annotations

import json
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any, Mapping

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from agents_llm.backends import TokenBudgetExceeded, make_ledger
from agents_llm.engine import EngineSettings, EpisodeContext, RagRetriever, RoundEngine, action_mask, plan_from_actions
from agents_llm.judges import make_judge, make_reward_tracker
from agents_llm.referee import Referee, flag_counts, grounder_for, make_referee_config
from agents_llm.report_state import ReportState
from agents_llm.roles import DEFAULT_TEAM, ROLES, build_team
from report_protocol import ActionTable, RoundPlan
from agents_llm.sync import run_sync
from agents_llm.trace import ExecutionTrace

from . import report_infos
from .tasks import Task, corpus_store, load_tasks

ROUND_FEATURES, REPORT_FEATURES, TOKEN_FEATURES, FLAG_FEATURES = 3, 6, 3, 3
DEFAULT_LLM = {"backend": "llamacpp", "model": "smollm2-135m"}
DEFAULT_JUDGE = {"kind": "reference"}


# -- shared resources (built once per process, keyed by config) -------------------------
_RES_LOCK = threading.RLock()
_BACKENDS: dict[str, Any] = {}
_JUDGES: dict[str, Any] = {}


def _plain(cfg: Any) -> Any:
    """A plain dict/list from an OmegaConf node, a dataclass or a dict (None stays None)."""
    from omegaconf import OmegaConf

    if cfg is None:
        return None
    if OmegaConf.is_config(cfg):
        return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    if hasattr(cfg, "__dataclass_fields__"):
        return OmegaConf.to_container(OmegaConf.structured(cfg), resolve=True, enum_to_str=True)
    if isinstance(cfg, Mapping):
        return {k: _plain(v) if isinstance(v, (Mapping, list)) or OmegaConf.is_config(v) else v for k, v in cfg.items()}
    if isinstance(cfg, list):
        return [_plain(v) for v in cfg]
    return cfg


def shared_backend(llm_cfg: dict) -> Any:
    from agents_llm.backends import make_backend

    key = json.dumps(llm_cfg, sort_keys=True, default=str)
    with _RES_LOCK:
        if key not in _BACKENDS:
            _BACKENDS[key] = make_backend(llm_cfg)
        return _BACKENDS[key]


def shared_judge(judge_cfg: dict, backend: Any, embedding: Any) -> Any:
    """One judge per config; a reference judge reuses the store's embedding when it is the same model."""
    kind = judge_cfg.get("kind", "reference")
    embed = None
    if kind == "reference" and embedding is not None:
        wanted = judge_cfg.get("embedding", "minilm")
        identity = str(getattr(embedding, "identity", ""))
        if (wanted == "hashing" and identity == f"hashing:{judge_cfg.get('hashing_dim', 384)}") or \
                (wanted == "minilm" and "minilm" in identity.lower()):
            embed = embedding
    key = json.dumps([judge_cfg, id(backend) if kind == "llm" else None, id(embed) if embed is not None else None],
                     sort_keys=True, default=str)
    with _RES_LOCK:
        if key not in _JUDGES:
            _JUDGES[key] = make_judge(judge_cfg, backend=backend if kind == "llm" else None, embed=embed)
        return _JUDGES[key]


def _action_of_plan(plan: RoundPlan, agents: list[str], table: ActionTable) -> dict[str, int]:
    """The discrete action closest to what each agent did in a hand-built plan (for observations)."""
    out = {}
    others = len(agents) - 1
    for i, a in enumerate(agents):
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


class ReportWritingEnv(ParallelEnv):
    metadata = {"name": "report_writing_v0", "render_modes": ["human", "ansi"], "is_parallelizable": True}
    # The round budget is in the observation (round/max, rounds left), so reaching it is
    # terminal for value targets (envs/__init__.py contract). A token-budget cut is
    # observable only when tokens are scaled by that budget (see `time_limit_observable` in infos).
    time_limit_observable = True

    def __init__(self, *, team: Any = DEFAULT_TEAM, max_rounds: int = 4, min_rounds_before_terminate: int = 2,
                 split: str = "train", tasks: Any = None, task_id: str | None = None, corpus: str | None = None,
                 store_path: str | None = None, llm: Any = None, judge: Any = None, rag: Any = None,
                 engine: Any = None, summary_dim: int = 32, token_scale: float | None = None,
                 round_token_scale: float = 4000.0, output_dir: str | None = None, save_episodes: bool = False,
                 render_mode: str | None = None, backend: Any = None, retriever: Any = None, embedding: Any = None,
                 judge_obj: Any = None, referee: Any = None, name: str | None = None,
                 infos: str = "stackable", observe_comm_adjacency: bool = False):
        # `name` may arrive from a Hydra env group; the registry already used it.
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if int(max_rounds) < 1:
            raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
        if int(min_rounds_before_terminate) < 0:
            raise ValueError(f"min_rounds_before_terminate must be >= 0, got {min_rounds_before_terminate}")
        if int(summary_dim) < 0:
            raise ValueError(f"summary_dim must be >= 0, got {summary_dim}")
        if not isinstance(observe_comm_adjacency, (bool, np.bool_)):
            raise ValueError(f"observe_comm_adjacency must be true or false, got {observe_comm_adjacency!r}")
        # The last round's (N, N) comm_adjacency as the observation's last block (module docstring).
        self.observe_comm_adjacency = bool(observe_comm_adjacency)
        self.render_mode = render_mode
        # stackable: fixed numeric keys only (TorchRL/BenchMARL); full: plus the round's text
        # and nested data. last_round_info() always has the full form (envs/report_infos.py).
        self.info_mode = report_infos.check_mode(infos)
        self._last_info: dict[str, dict[str, Any]] = {}
        self.max_rounds = int(max_rounds)
        self.min_rounds_before_terminate = int(min_rounds_before_terminate)
        self.summary_dim = int(summary_dim)
        self.round_token_scale = float(round_token_scale)
        self.output_dir = Path(output_dir).expanduser() if output_dir else None
        self.save_episodes = bool(save_episodes)

        self.team = build_team(list(_plain(team) if not isinstance(team, (list, tuple)) else team))
        self.possible_agents = [m.name for m in self.team]
        self.agents: list[str] = []
        self.n = len(self.team)
        self.table = ActionTable(self.n)

        self.llm_cfg = dict(DEFAULT_LLM, **(_plain(llm) or {}))
        self.judge_cfg = dict(DEFAULT_JUDGE, **(_plain(judge) or {}))
        self.rag_cfg = _plain(rag) or {}
        self.referee_cfg = make_referee_config(_plain(referee))  # flags and penalty: agents_llm.referee
        engine_cfg = _plain(engine) or {}
        self.settings = EngineSettings(**engine_cfg)
        # Sampling follows the llm config unless the engine config says otherwise.
        for key in ("temperature", "seed"):
            if key not in engine_cfg and key in self.llm_cfg:
                setattr(self.settings, key, self.llm_cfg[key])
        budget = self.llm_cfg.get("episode_token_budget")
        self.token_scale = float(token_scale or budget or 20000)
        make_ledger(self.llm_cfg)  # validates the budget now, not at the first reset

        raw_tasks = _plain(tasks) if tasks is not None and not isinstance(tasks, (str, Path)) else tasks
        self.split = split
        self.tasks: list[Task] = load_tasks(raw_tasks, split=split)
        if corpus is not None:
            self.tasks = [Task(t.id, t.topic, t.split, str(corpus), t.key_terms) for t in self.tasks]
        if task_id is not None:
            chosen = [t for t in self.tasks if t.id == task_id]
            if not chosen:
                raise ValueError(f"task_id {task_id!r} not in split {split!r}: {[t.id for t in self.tasks]}")
            self.tasks = chosen
        self.store_path = store_path

        # Shared resources: passed in, or built once per process from the config.
        # llm.backend=extractive is no model: the extractive team's engine (agents_llm.extractive).
        self.extractive = self.llm_cfg.get("backend") == "extractive"
        if self.extractive and self.judge_cfg.get("kind") == "llm":
            raise ValueError("judge.kind=llm needs a language model, and llm=extractive has none; "
                             "use judge=reference with the extractive team")
        self.backend = backend if backend is not None or self.extractive else shared_backend(self.llm_cfg)
        self._retriever_override = retriever
        self._retrievers: dict[str, Any] = {}
        self._embedding = embedding
        self._judge_obj = judge_obj
        self._projection: np.ndarray | None = None

        if self.extractive:
            from agents_llm.extractive import ExtractiveEngine

            self.engine = ExtractiveEngine(self.team, settings=self.settings,
                                           tokenizer_model=self.llm_cfg.get("tokenizer_model", "smollm2-135m"))
        else:
            self.engine = RoundEngine(self.team, self.backend, retriever=None, settings=self.settings)
        self._build_spaces()

        self.np_random = np.random.default_rng()
        self._episode = 0
        self._last_graph = np.zeros((2, 0), dtype=np.int64)
        self._artifacts: dict[str, str] = {}
        self.trace: ExecutionTrace | None = None
        self.report: ReportState | None = None
        self.task: Task | None = None
        self._ended: str | None = None

    # -- spaces --------------------------------------------------------------------
    def _build_spaces(self) -> None:
        self.role_names = list(ROLES)
        A = self.table.size
        self.obs_dim = (len(self.role_names) + self.n + ROUND_FEATURES + REPORT_FEATURES + TOKEN_FEATURES
                        + FLAG_FEATURES + 2 * A + self.summary_dim
                        + (self.n * self.n if self.observe_comm_adjacency else 0))
        self.state_dim = ROUND_FEATURES + REPORT_FEATURES + 2 + 2 + self.n + self.n * A + self.summary_dim
        obs_box = spaces.Box(-np.inf, np.inf, (self.obs_dim,), dtype=np.float32)
        mask_box = spaces.Box(0, 1, (A,), dtype=np.int8)
        self._obs_space = spaces.Dict({"observation": obs_box, "action_mask": mask_box})
        self._act_spaces = {a: spaces.Discrete(A) for a in self.possible_agents}
        self._obs_spaces = {a: self._obs_space for a in self.possible_agents}
        self.state_space = spaces.Box(-np.inf, np.inf, (self.state_dim,), dtype=np.float32)

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_spaces[agent]

    def observation_layout(self) -> list[tuple[str, int, int]]:
        """(name, start, stop) of each block of the observation vector (the last one,
        ``comm_adjacency``, only with ``observe_comm_adjacency=True``)."""
        A, blocks, start = self.table.size, [], 0
        sizes = [("role", len(self.role_names)), ("agent", self.n), ("round", ROUND_FEATURES),
                 ("report", REPORT_FEATURES), ("tokens", TOKEN_FEATURES), ("flags", FLAG_FEATURES),
                 ("own_last_action", A), ("others_last_actions", A), ("summary", self.summary_dim)]
        if self.observe_comm_adjacency:
            sizes.append(("comm_adjacency", self.n * self.n))
        for name, size in sizes:
            blocks.append((name, start, start + size))
            start += size
        return blocks

    def action_names(self) -> list[str]:
        return self.table.names(self.possible_agents)

    # -- resources -----------------------------------------------------------------
    def _retriever_for(self, corpus: str) -> Any:
        if self._retriever_override is not None:
            return self._retriever_override
        if corpus not in self._retrievers:
            store = corpus_store(corpus, self.rag_cfg, self.store_path)
            top_k = int((self.rag_cfg.get("query") or {}).get("top_k", 3))
            self._retrievers[corpus] = RagRetriever(store, top_k=min(top_k, 3))
            if self._embedding is None:
                self._embedding = store.embedding
        return self._retrievers[corpus]

    def _judge(self) -> Any:
        if self._judge_obj is None:
            self._judge_obj = shared_judge(self.judge_cfg, self.backend, self._embedding)
        return self._judge_obj

    def _summary_features(self, text: str) -> np.ndarray:
        if self.summary_dim == 0:
            return np.zeros(0, dtype=np.float32)
        if not text.strip() or self._embedding is None:
            return np.zeros(self.summary_dim, dtype=np.float32)
        cached = self._summary_cache
        if cached[0] == text:
            return cached[1]
        vec = np.asarray(self._embedding.embed_documents([text]), dtype=np.float32).reshape(-1)
        if vec.shape[0] != self.summary_dim:
            if self._projection is None or self._projection.shape[0] != vec.shape[0]:
                # A fixed Gaussian projection (seed 0): the same summary maps to the same features in every run.
                rng = np.random.default_rng(0)
                self._projection = (rng.standard_normal((vec.shape[0], self.summary_dim)) /
                                    np.sqrt(self.summary_dim)).astype(np.float32)
            vec = vec @ self._projection
        vec = vec.astype(np.float32)
        self._summary_cache = (text, vec)
        return vec

    # -- episode -------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
            for i, a in enumerate(self.possible_agents):
                self._act_spaces[a].seed(seed + i)
        options = dict(options or {})
        task = self._pick_task(options)
        retriever = self._retriever_for(task.corpus)
        self.engine.retriever = retriever
        if self.extractive:
            self.engine.begin_episode(task.key_terms)

        self._episode += 1
        self.task = task
        self.report = ReportState(topic=task.topic, key_terms=list(task.key_terms))
        self.ledger = make_ledger(self.llm_cfg)
        self.ctx = EpisodeContext(report=self.report, ledger=self.ledger)
        self.tracker = make_reward_tracker(self._judge(), self.judge_cfg)
        self.referee = Referee(self.referee_cfg, grounder=grounder_for(self._judge(), self._embedding))
        self.round = 0
        self._last_append_round = 0
        self._report_score = 0.0
        self._length_score = float(self.tracker.length_score(0))
        self._last_round_tokens = 0
        self._last_actions: dict[str, int] = {}
        self._summary_cache: tuple[str, np.ndarray] = ("", np.zeros(self.summary_dim, dtype=np.float32))
        self._last_graph = np.zeros((2, 0), dtype=np.int64)
        self._ended = None
        self._artifacts = {}
        self.agents = list(self.possible_agents)
        self.episode_id = f"{self._episode:05d}-{uuid.uuid4().hex[:6]}"
        self.trace = ExecutionTrace({
            "env": self.metadata["name"], "episode_id": self.episode_id, "seed": seed, "task": task.as_dict(),
            "team": [{"name": m.name, "role": m.role.name, "index": m.index} for m in self.team],
            "action_names": self.action_names(),
            "config": {"max_rounds": self.max_rounds, "min_rounds_before_terminate": self.min_rounds_before_terminate,
                       "llm": self.llm_cfg, "judge": self.judge_cfg, "engine": vars(self.settings)}})
        obs = self._observe()
        base = report_infos.stackable({"length_score": self._length_score}, {}, self._last_graph, self.agents, self.n)
        return obs, self._emit_infos(base, {a: {"task_id": task.id, "topic": task.topic} for a in self.agents})

    def _emit_infos(self, base: dict[str, dict], extra: dict[str, dict]) -> dict[str, dict]:
        """Keep the full infos for last_round_info(); return the form `infos` asks for."""
        self._last_info = {a: {**base[a], **extra.get(a, {})} for a in base}
        if self.info_mode == "full":
            return {a: dict(v) for a, v in self._last_info.items()}
        return base

    def last_round_info(self) -> dict[str, dict[str, Any]]:
        """The last reset's or step's infos in full (text and nested data included)."""
        return {a: dict(v) for a, v in self._last_info.items()}

    def _pick_task(self, options: dict) -> Task:
        if "task" in options or "topic" in options:
            raw = options.get("task") or {"id": "custom", "topic": options.get("topic")}
            if isinstance(raw, Task):
                return raw
            if isinstance(raw, str):
                raw = {"id": "custom", "topic": raw}
            return Task.from_dict(dict(raw), "reset(options)")
        return self.tasks[int(self.np_random.integers(len(self.tasks)))]

    def _masks(self) -> dict[str, tuple[np.ndarray, dict[int, str]]]:
        return {a: action_mask(self.table, i, round_index=self.round,
                               min_rounds_before_terminate=self.min_rounds_before_terminate,
                               report_empty=self.report.is_empty)
                for i, a in enumerate(self.possible_agents)}

    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        """Observations and the state, computed together (the state before the next step)."""
        A, rep = self.table.size, self.report
        self._current_masks = self._masks()
        rounds_since = (self.round - self._last_append_round) / self.max_rounds
        round_f = [self.round / self.max_rounds, (self.max_rounds - self.round) / self.max_rounds,
                   float(self.round >= self.min_rounds_before_terminate)]
        target = float(self.tracker.length_target) or 1.0
        report_f = [min(rep.chars / target, 2.0), min(len(rep.sections) / 10.0, 2.0), self._report_score,
                    self._length_score, rounds_since, float(rep.is_empty)]
        episode_tokens = self.ledger.total.total
        flags_common = [float(self.ctx.rag_exhausted), float(bool(self.ctx.objective))]
        summary = self._summary_features(rep.progress_summary)
        last = np.zeros((self.n, A), dtype=np.float32)
        for i, a in enumerate(self.possible_agents):
            if a in self._last_actions:
                last[i, self._last_actions[a]] = 1.0
        has_output = [float(bool(self.ctx.memory.get(a))) for a in self.possible_agents]
        graph = ([report_infos.adjacency(self._last_graph, self.n).reshape(-1)]
                 if self.observe_comm_adjacency else [])

        obs = {}
        for i, member in enumerate(self.team):
            a = member.name
            role = np.zeros(len(self.role_names), dtype=np.float32)
            role[self.role_names.index(member.role.name)] = 1.0
            agent = np.zeros(self.n, dtype=np.float32)
            agent[i] = 1.0
            own_tokens = self.ledger.by_caller[a].total if a in self.ledger.by_caller else 0
            token_f = [episode_tokens / self.token_scale, self._last_round_tokens / self.round_token_scale,
                       own_tokens / self.token_scale]
            others = (last.sum(axis=0) - last[i]) / max(self.n - 1, 1)
            vec = np.concatenate([role, agent, round_f, report_f, token_f, flags_common + [has_output[i]],
                                  last[i], others, summary, *graph]).astype(np.float32)
            obs[a] = {"observation": vec, "action_mask": self._current_masks[a][0].copy()}
        self._state = np.concatenate([round_f, report_f, [episode_tokens / self.token_scale,
                                                          self._last_round_tokens / self.round_token_scale],
                                      flags_common, has_output, last.reshape(-1), summary]).astype(np.float32)
        return {a: obs[a] for a in self.agents}

    def state(self) -> np.ndarray:
        return self._state.copy()

    def comm_graph(self) -> np.ndarray:
        return self._last_graph.copy()

    # -- stepping ------------------------------------------------------------------
    def _check_live(self) -> None:
        if self.report is None:
            raise RuntimeError("step() before reset(): call reset() first")
        if self._ended is not None or not self.agents:
            raise RuntimeError(f"step() on a finished episode (ended: {self._ended}); call reset() to start a new one")

    def _validate_actions(self, actions: Mapping[str, Any]) -> dict[str, int]:
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions must be a dict {{agent: int}}, got {type(actions).__name__}")
        unknown = [a for a in actions if a not in self.possible_agents]
        if unknown:
            raise KeyError(f"unknown agent name(s) {unknown}; agents are {self.possible_agents}")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise KeyError(f"missing action(s) for {missing}; every live agent acts each round")
        joint = {}
        for a in self.agents:
            raw = actions[a]
            try:
                value = int(np.asarray(raw).item())
            except (TypeError, ValueError):
                raise ValueError(f"action for {a} must be an integer, got {raw!r}") from None
            if not 0 <= value < self.table.size or float(np.asarray(raw).item()) != value:
                raise ValueError(f"action {raw!r} for {a} is out of range: Discrete({self.table.size}) "
                                 f"takes 0..{self.table.size - 1} ({', '.join(self.action_names())})")
            joint[a] = value
        return joint

    def step(self, actions: Mapping[str, Any]):
        return run_sync(self.astep(actions))

    async def astep(self, actions: Mapping[str, Any]):
        """`step` as a coroutine: many episodes can be in flight against one server."""
        self._check_live()
        joint = self._validate_actions(actions)
        plan = plan_from_actions(self.possible_agents, joint, masks=self._current_masks)
        return await self._execute(plan, source="actions", joint=joint)

    def step_plan(self, plan: RoundPlan | Mapping[str, Any]):
        """Run a fixed policy's `RoundPlan` (or its dict form) as this round."""
        return run_sync(self.astep_plan(plan))

    async def astep_plan(self, plan: RoundPlan | Mapping[str, Any]):
        self._check_live()
        if not isinstance(plan, RoundPlan):
            plan = RoundPlan.from_dict(plan)
        plan.validate(self.possible_agents)
        return await self._execute(plan, source="plan", joint=_action_of_plan(plan, self.possible_agents, self.table))

    async def _execute(self, plan: RoundPlan, *, source: str, joint: dict[str, int]):
        try:
            result = await self.engine.run(plan, self.ctx)
        except BaseException as e:
            # The round broke (a bug, a cancelled task): close the episode with what it has, then raise.
            self._finish("error", f"round {self.round + 1}: {type(e).__name__}: {e}")
            raise
        self.round += 1

        reward, rounds_since, step_info = 0.0, 0, {}
        if result.appended:
            try:
                step = await self.tracker.after_append(self.report, self.ledger)
            except TokenBudgetExceeded as e:
                self.ctx.budget_exhausted = self.ctx.budget_exhausted or e.reason
            else:
                reward = float(step.reward)
                self._report_score, self._length_score = float(step.report_score), float(step.length_score)
                step_info = step.as_dict()
                rounds_since = self.round - self._last_append_round
                self._last_append_round = self.round
        flags = self.referee.review_round(self.report, outputs=result.outputs, scored=step_info or None,
                                          changed_section=result.collector.section_id if result.appended else None)
        reward = self.referee.adjust(reward, flags)
        self._last_round_tokens = result.tokens
        self._last_actions = {a: (self.table.terminate if a in plan.terminate_votes else joint[a])
                              for a in self.possible_agents}
        index = {a: i for i, a in enumerate(self.possible_agents)}
        edges = [(index[s], index[r]) for s, r in plan.message_edges if s != r]
        self._last_graph = (np.asarray(edges, dtype=np.int64).T.reshape(2, -1) if edges
                            else np.zeros((2, 0), dtype=np.int64))

        llm_failure = result.llm_failure
        terminated = bool(plan.terminate) and llm_failure is None
        budget = self.ctx.budget_exhausted
        truncated = not terminated and (self.round >= self.max_rounds or budget is not None
                                        or llm_failure is not None)
        end_reason = ("llm_error" if llm_failure else "terminated" if terminated else
                      "budget_exhausted" if budget else "truncated" if truncated else "")

        record = {"round": self.round, "source": source, **result.record,
                  "tokens": {"round": result.tokens, "episode": self.ledger.total.total},
                  "reward": reward, "report_score": self._report_score, "length_score": self._length_score,
                  "rounds_since_append": rounds_since, "scores": step_info,
                  "referee": [f.as_dict() for f in flags],
                  "report": self._report_snapshot(result.collector.section_id)}
        self.trace.add_round(record)

        denied = {d.agent: d.reason for d in plan.denied}
        agents_now = list(self.agents)
        common = {"report_score": self._report_score, "length_score": self._length_score, "tokens": result.tokens,
                  "rounds_since_append": rounds_since, "appended": result.appended,
                  "collector": result.collector.status, "terminate_votes": len(plan.terminate_votes),
                  "round": self.round, "chars": self.report.chars, "rag_exhausted": self.ctx.rag_exhausted,
                  "judge_flagged": bool(step_info.get("judge_flagged", False)),
                  "delta_score": float(step_info.get("delta_score", 0.0)),
                  "delta_length": float(step_info.get("delta_length", 0.0)),
                  "llm_calls": result.llm_calls, "llm_errors": result.llm_errors,
                  "referee": [f.as_dict() for f in flags], **flag_counts(flags)}
        if llm_failure:
            common["llm_error"] = llm_failure
        if result.gate_passed is not None:
            common["gate_passed"] = result.gate_passed
        # What a plan-emitting fixed policy (algos.handcrafted) reads back: plain data only.
        common["round_outputs"] = dict(result.outputs)
        common["collector_section"] = result.collector.section_id
        common["sections"] = [list(s) for s in self.report.list_sections()]
        common["feedback"] = result.feedback.to_dict()  # the engine's reading of the outputs (report_protocol)
        if budget:
            common["budget_exhausted"] = budget
        if end_reason:
            common["end_reason"] = end_reason
        if truncated:
            episode_budget = self.llm_cfg.get("episode_token_budget")
            common["time_limit_observable"] = not budget or (episode_budget is not None and float(episode_budget) == self.token_scale)
        infos = {a: dict(common, action=self.table.name(self._last_actions[a], self.possible_agents),
                         effective_action=plan.effective.get(a, "acting" if a in plan.acting else "idle"),
                         denied=denied.get(a, ""), agent_tokens=sum(
                             c["prompt_tokens"] + c["completion_tokens"] for c in result.calls if c["agent"] == a))
                 for a in agents_now}
        team = {**common, "episode_tokens": self.ledger.total.total, "gate_checked": result.gate_passed is not None,
                "gate_passed": bool(result.gate_passed), "out_of_budget": bool(budget), "llm_failed": bool(llm_failure)}
        per_agent = {a: {"action_index": self._last_actions[a], "agent_tokens": infos[a]["agent_tokens"],
                         "was_denied": bool(denied.get(a))} for a in agents_now}
        infos = self._emit_infos(report_infos.stackable(team, per_agent, self._last_graph, agents_now, self.n), infos)
        rewards = {a: reward for a in agents_now}
        terminations = {a: terminated for a in agents_now}
        truncations = {a: truncated for a in agents_now}
        obs = self._observe()
        if terminated or truncated:
            detail = llm_failure or budget or ("majority voted terminate" if terminated
                                               else f"round budget {self.max_rounds}")
            self._finish(end_reason, detail)
        return obs, rewards, terminations, truncations, infos

    def _report_snapshot(self, changed: str | None) -> dict:
        rep = self.report
        snap = {"chars": rep.chars, "progress_summary": rep.progress_summary,
                "sections": [{"id": s.id, "title": s.title, "chars": s.chars, "revision": s.revision,
                              "sources": [r.label() for r in s.sources]} for s in rep.sections],
                "changed_section": None}
        if changed:
            s = rep.get(changed)
            # Its text is the round's collector.content: not copied here a second time.
            snap["changed_section"] = {"id": s.id, "title": s.title,
                                       "sources": [{"source": r.source, "page": r.page, "chunk_id": r.chunk_id}
                                                   for r in s.sources]}
        return snap

    def _finish(self, reason: str, detail: str) -> None:
        self._ended = reason
        self.agents = []
        if self.trace is not None and self.report is not None:
            self.trace.finish(reason, detail, self.report.to_markdown())
            if self.save_episodes and self.output_dir is not None:
                self.save(self.output_dir / f"episode_{self.episode_id}")

    # -- outputs -------------------------------------------------------------------
    def save(self, folder: str | Path) -> dict[str, str]:
        """Write the report (markdown) and the trace (JSON) of the current/last episode."""
        if self.trace is None or self.report is None:
            raise RuntimeError("nothing to save: no episode has started")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if self._ended is None:  # mid-episode: the trace says so and carries the report so far
            self.trace.report_markdown = self.report.to_markdown()
        report_path = folder / "report.md"
        tmp = report_path.with_suffix(".md.tmp")
        tmp.write_text(self.report.to_markdown(), encoding="utf-8")
        tmp.replace(report_path)
        trace_path = self.trace.save(folder / "trace.json")
        self._artifacts = {"report": str(report_path), "trace": str(trace_path)}
        return dict(self._artifacts)

    def artifacts(self) -> dict[str, str]:
        """{name: path} of the last episode's report and trace (written now if needed)."""
        if self.trace is None:
            return {}
        if not self._artifacts or self._ended is None:
            base = self.output_dir or Path(tempfile.gettempdir()) / "qmix-report-gym"
            self.save(base / f"episode_{self.episode_id}")
        return dict(self._artifacts)

    def render(self):
        if self.report is None:
            return None
        text = self.report.to_markdown()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        return None


def parallel_env(**cfg: Any) -> ReportWritingEnv:
    """PettingZoo's factory convention; `envs.make("report_writing_v0", **cfg)` calls it."""
    return ReportWritingEnv(**cfg)


env = parallel_env
