"""`report_writing_v0`: a team of LLM agents writes one sourced report per episode.

PettingZoo `ParallelEnv`. Each round every agent picks one of `5 + N` communication
actions (see `report_protocol.actions`); the joint action becomes a `RoundPlan`; the
round engine runs it; the Collector appends; the judge scores; the env emits the
reward at the round it is earned.

Spaces (all agents share them; agent order in `possible_agents` = team order = priority):

* action: `Discrete(5 + N)`.
* observation: `{"observation": Box(float32, (D,)), "action_mask": Box(0, 1, (5+N,), int8)}`
  with `D = R + N + 15 + 2A + S` (R roles, N agents, A = 5 + N actions, S = summary_dim),
  laid out as `envs/report/features.py` declares (the table below is generated from it):

{layout}

  `observe_comm_adjacency=True` (off by default; then D grows by N*N and nothing before
  it moves) appends the last round's communication graph as the fixed-shape adjacency
  of the infos (`envs/report/infos.py`), row-major: element `j*N + i` is 1 when agent i
  received agent j's output in the round just run (sender row, receiver column, agent
  indices in `possible_agents` order; zeros after reset and on the diagonal). Every
  agent sees the same matrix. It is part of the one observation vector, so the
  learners, TorchRL's `PettingZooWrapper` and BenchMARL take it without change.

* `state()`: the blocks listed above. It is computed together with the observations,
  i.e. it is the state *before* the next step (the decision point).
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

Settings: `envs/report/config.py` (`ReportEnvConfig`: the keywords, checked). Shared
resources (LLM backend, RAG stores + embedding, judge): `envs/report/resources.py`
(`ReportResources`), passed as `resources=` (an entry point's `envs.ResourcePool`), or
built for this env alone from its config (and the ready-made `backend=`, `retriever=`,
`embedding=`, `judge_obj=` when given). Infos and the trace's round entry:
`envs/report/infos.py`. Constructing and resetting an env on given resources is cheap.
"""

from __future__ import annotations

import uuid
from typing import Any, Mapping

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from agents_llm.backends import TokenBudgetExceeded, make_ledger
from agents_llm.engine import EpisodeContext, plan_from_actions
from agents_llm.judges import make_reward_tracker
from agents_llm.referee import Referee, grounder_for
from agents_llm.report_state import ReportState
from agents_llm.roles import ROLES, build_team
from report_protocol import ActionTable, RoundPlan
from agents_llm.sync import run_sync
from agents_llm.trace import ExecutionTrace

from envs import CallFailures

from . import actions as report_actions
from . import assemble
from . import episode as report_episode
from . import features as report_features
from . import infos as report_infos
from .config import DEFAULT_JUDGE, DEFAULT_LLM, ReportEnvConfig  # noqa: F401 (re-exported)
from .features import DecisionPoint, ReportFeatures, actions_of_plan
from .outputs import EpisodeOutputs
from .resources import ReportResources
from .tasks import Task

__doc__ = (__doc__ or "").replace("{layout}", report_features.layout_doc())

StepResult = tuple[
    dict[str, dict[str, np.ndarray]], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]
]


class ReportWritingEnv(EpisodeOutputs, ParallelEnv):  # EpisodeOutputs: save/artifacts/render
    metadata = {"name": "report_writing_v0", "render_modes": ["human", "ansi"], "is_parallelizable": True}
    # The round budget is in the observation (round/max, rounds left), so reaching it is
    # terminal for value targets (envs/__init__.py contract). A token-budget cut is
    # observable only when tokens are scaled by that budget (see `time_limit_observable` in infos).
    time_limit_observable = True

    def __init__(
        self,
        config: ReportEnvConfig | None = None,
        *,
        resources: ReportResources | None = None,
        backend: Any = None,
        retriever: Any = None,
        embedding: Any = None,
        judge_obj: Any = None,
        **settings: Any,
    ):
        """``config``, or its keywords (``ReportEnvConfig.from_kwargs``: the keys of
        ``conf/env/report_writing.yaml``); ``resources``: what to run on (module docstring),
        else built for this env from the config and the ready-made objects given."""
        if config is not None and settings:
            raise TypeError(f"give a ReportEnvConfig or its keywords, not both (got {sorted(settings)})")
        cfg = config if config is not None else ReportEnvConfig.from_kwargs(**settings)
        self.config = cfg
        self.render_mode = cfg.render_mode  # PettingZoo's attribute (its AEC conversion reads it)
        self.team = build_team(cfg.team)
        self.possible_agents = [m.name for m in self.team]
        # Each agent's part in the handcrafted pipeline, as its role declares it (algos reads it from EnvSpec).
        self.pipeline_parts = {m.name: str(m.role.pipeline_part) for m in self.team}
        self.agents: list[str] = []
        self.n = len(self.team)
        self.table = ActionTable(self.n)
        self.tasks: list[Task] = assemble.env_tasks(cfg)
        given = {"backend": backend, "retriever": retriever, "embedding": embedding, "judge_obj": judge_obj}
        self.resources = assemble.resolve_resources(cfg, resources, given)
        self.backend = self.resources.backend
        self.engine: Any = assemble.make_engine(cfg, self.team, self.backend)
        self.features = ReportFeatures(
            self.possible_agents,
            [m.role.name for m in self.team],
            list(ROLES),
            self.table,
            summary_dim=cfg.summary_dim,
            observe_comm_adjacency=cfg.observe_comm_adjacency,
            token_scale=cfg.token_scale,
            round_token_scale=cfg.round_token_scale,
        )
        self._obs_space = self.features.observation_space()
        self._act_spaces = {a: spaces.Discrete(self.table.size) for a in self.possible_agents}
        self.state_space = self.features.state_space()
        self.obs_dim, self.state_dim = self.features.obs_dim, self.features.state_dim

        self._last_info: dict[str, dict[str, Any]] = {}
        self.np_random = np.random.default_rng()
        self._episode = 0
        self._last_graph = np.zeros((2, 0), dtype=np.int64)
        self._artifacts: dict[str, str] = {}
        self.trace: ExecutionTrace | None = None
        self.report: ReportState | None = None
        self.task: Task | None = None
        self._ended: str | None = None

    # Settings read from outside the env (the rest are in ``self.config``): the round budget, which
    # algos.EnvSpec hands to fixed policies that plan a schedule and BenchMARL takes as max_steps,
    # and the infos' form, which the TorchRL adapter checks.
    @property
    def max_rounds(self) -> int:
        return self.config.max_rounds

    @property
    def info_mode(self) -> str:
        return self.config.infos

    # -- spaces --------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        self._check_agent(agent)
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_spaces[agent]

    def _check_agent(self, agent: str) -> None:
        if agent not in self._act_spaces:
            raise KeyError(agent)

    def observation_layout(self) -> list[tuple[str, int, int]]:
        """(name, start, stop) of each block of the observation vector (the last one,
        ``comm_adjacency``, only with ``observe_comm_adjacency=True``)."""
        return self.features.observation_layout()

    def action_names(self) -> list[str]:
        return self.table.names(self.possible_agents)

    # -- episode -------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
            for i, a in enumerate(self.possible_agents):
                self._act_spaces[a].seed(seed + i)
        options = dict(options or {})
        task = self._pick_task(options, seed)
        self.engine.retriever = self.resources.retriever(task.corpus)
        if self.config.extractive_team:
            self.engine.begin_episode(task.key_terms)

        self._episode += 1
        self.task = task
        self.report = ReportState(topic=task.topic, key_terms=list(task.key_terms))
        self.ledger = make_ledger(self.config.llm)
        self.ctx = EpisodeContext(report=self.report, ledger=self.ledger, episode_seed=seed)
        judge = self.resources.judge()
        grounder = grounder_for(judge, self.resources.embedding)
        self.tracker = make_reward_tracker(judge, self.config.judge, grounder=grounder)
        self.referee = Referee(self.config.referee, grounder=grounder)
        self.round = 0
        self._last_append_round = 0
        self._report_score = 0.0
        self._length_score = float(self.tracker.length_score(0))
        self._last_round_tokens = 0
        self._last_actions: dict[str, int] = {}
        self.features.reset_summary()
        self._last_graph = np.zeros((2, 0), dtype=np.int64)
        self._ended = None
        self._artifacts = {}
        self.agents = list(self.possible_agents)
        self.episode_id = f"{self._episode:05d}-{uuid.uuid4().hex[:6]}"
        self.trace = ExecutionTrace(report_episode.trace_header(self, seed))
        obs = self._observe()
        base = report_infos.stackable({"length_score": self._length_score}, {}, self._last_graph, self.agents, self.n)
        return obs, self._emit_infos(base, {a: {"task_id": task.id, "topic": task.topic} for a in self.agents})

    def _emit_infos(self, base: dict[str, dict], extra: dict[str, dict]) -> dict[str, dict]:
        """Keep the full infos for last_round_info(); return the form `infos` asks for."""
        self._last_info = {a: {**base[a], **extra.get(a, {})} for a in base}
        if self.config.infos == "full":
            return {a: dict(v) for a, v in self._last_info.items()}
        return base

    def call_failures(self) -> CallFailures:
        """The last episode's LLM calls and failures (the env contract's failure report)."""
        return report_infos.call_failures(self.trace)

    def last_round_info(self) -> dict[str, dict[str, Any]]:
        """The last reset's or step's infos in full (text and nested data included)."""
        return {a: dict(v) for a, v in self._last_info.items()}

    def _pick_task(self, options: dict, seed: int | None = None) -> Task:
        return assemble.pick_task(self.tasks, options, seed, self.config.task_sampling, self.np_random)

    def _masks(self) -> dict[str, tuple[np.ndarray, dict[int, str]]]:
        assert self.report is not None  # reset() ran
        return report_actions.action_masks(
            self.table, self.possible_agents, self.round, self.config.min_rounds_before_terminate, self.report.is_empty
        )

    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        """Observations and the state, computed together (the state before the next step)."""
        assert self.report is not None  # reset() ran
        rep, ledger = self.report, self.ledger
        self._current_masks = self._masks()
        point = DecisionPoint(
            round=self.round,
            max_rounds=self.config.max_rounds,
            min_rounds_before_terminate=self.config.min_rounds_before_terminate,
            chars=rep.chars,
            sections=len(rep.sections),
            report_empty=rep.is_empty,
            length_target=float(self.tracker.length_target),
            report_score=self._report_score,
            length_score=self._length_score,
            last_append_round=self._last_append_round,
            episode_tokens=ledger.total.total,
            last_round_tokens=self._last_round_tokens,
            own_tokens={a: ledger.by_caller[a].total for a in self.possible_agents if a in ledger.by_caller},
            rag_exhausted=bool(self.ctx.rag_exhausted),
            objective_set=bool(self.ctx.objective),
            has_output={a: bool(self.ctx.memory.get(a)) for a in self.possible_agents},
            last_actions=self._last_actions,
            adjacency=report_infos.adjacency(self._last_graph, self.n),
            summary=self.features.summary(rep.progress_summary, self.resources.embedding),
        )
        vectors, self._state = self.features.vectors(point)
        return {a: {"observation": vectors[a], "action_mask": self._current_masks[a][0].copy()} for a in self.agents}

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

    def step(self, actions: Mapping[str, Any]):
        return run_sync(self.astep(actions))

    async def astep(self, actions: Mapping[str, Any]):
        """`step` as a coroutine: many episodes can be in flight against one server."""
        self._check_live()
        joint = report_actions.joint_action(actions, self.agents, self.possible_agents, self.table)
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
        return await self._execute(plan, source="plan", joint=actions_of_plan(plan, self.possible_agents, self.table))

    async def _execute(self, plan: RoundPlan, *, source: str, joint: dict[str, int]):
        report, trace = self.report, self.trace
        assert report is not None and trace is not None  # _check_live() ran
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
                step = await self.tracker.after_append(report, self.ledger)
            except TokenBudgetExceeded as e:
                self.ctx.budget_exhausted = self.ctx.budget_exhausted or e.reason
            else:
                reward = float(step.reward)
                self._report_score, self._length_score = float(step.report_score), float(step.length_score)
                step_info = step.as_dict()
                rounds_since = self.round - self._last_append_round
                self._last_append_round = self.round
        flags = self.referee.review_round(
            report,
            outputs=result.outputs,
            scored=step_info or None,
            changed_section=result.collector.section_id if result.appended else None,
        )
        reward = self.referee.adjust(reward, flags)
        self._last_round_tokens = result.tokens
        self._last_actions = {
            a: (self.table.terminate if a in plan.terminate_votes else joint[a]) for a in self.possible_agents
        }
        index = {a: i for i, a in enumerate(self.possible_agents)}
        edges = [(index[s], index[r]) for s, r in plan.message_edges if s != r]
        self._last_graph = (
            np.asarray(edges, dtype=np.int64).T.reshape(2, -1) if edges else np.zeros((2, 0), dtype=np.int64)
        )

        llm_failure = result.llm_failure
        budget = self.ctx.budget_exhausted
        end = report_episode.round_end(
            terminate=bool(plan.terminate),
            llm_failure=llm_failure,
            budget=budget,
            round=self.round,
            max_rounds=self.config.max_rounds,
        )
        terminated, truncated, end_reason = end.terminated, end.truncated, end.reason

        outcome = report_infos.RoundOutcome(
            round=self.round,
            source=source,
            plan=plan,
            result=result,
            reward=reward,
            report_score=self._report_score,
            length_score=self._length_score,
            rounds_since_append=rounds_since,
            scores=step_info,
            flags=flags,
            last_actions=self._last_actions,
            episode_tokens=self.ledger.total.total,
            chars=report.chars,
            sections=[list(s) for s in report.list_sections()],
            rag_exhausted=self.ctx.rag_exhausted,
            budget_exhausted=budget,
            end_reason=end_reason,
            truncated=truncated,
            time_limit_observable=not budget or self.config.time_limit_matches_budget,
            graph=self._last_graph,
            episode_prompt_tokens=(self.ctx.prompt_tokens_evaluated, self.ctx.prompt_tokens_reused),
        )
        trace.add_round(report_infos.trace_round(outcome, report))
        agents_now = list(self.agents)
        stackable, full = report_infos.round_infos(outcome, agents_now, self.possible_agents, self.table)
        infos = self._emit_infos(stackable, full)
        rewards = {a: reward for a in agents_now}
        terminations = {a: terminated for a in agents_now}
        truncations = {a: truncated for a in agents_now}
        obs = self._observe()
        if terminated or truncated:
            self._finish(end_reason, end.detail)
        return obs, rewards, terminations, truncations, infos

    def _finish(self, reason: str, detail: str) -> None:
        self._ended = reason
        self.agents = []
        if self.trace is not None and self.report is not None:
            self.trace.finish(reason, detail, self.report.to_markdown(), self.report.to_dict())
            if self.config.save_episodes and self.config.output_dir is not None:
                self.save(self.config.output_dir / f"episode_{self.episode_id}")

    def close(self) -> None:
        return None


def parallel_env(**cfg: Any) -> ReportWritingEnv:
    """PettingZoo's factory convention; `envs.make("report_writing_v0", **cfg)` calls it."""
    return ReportWritingEnv(**cfg)


env = parallel_env
