"""The report env's settings: one typed, checked object built from the factory's keywords.

``ReportWritingEnv(**kwargs)`` and ``envs.make("report_writing_v0", **kwargs)`` take the
keys of ``conf/env/report_writing.yaml``; :meth:`ReportEnvConfig.from_kwargs` turns them
into this object (OmegaConf nodes and dataclasses become plain data; defaults filled;
every range checked with the key's name). The shared objects a config needs (backend,
store, embedding, judge) are not settings: they live in
:class:`envs.report.resources.ReportResources`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from agents_llm.backends import make_ledger
from agents_llm.engine import EngineSettings
from agents_llm.extractive.settings import ExtractiveSettings
from agents_llm.referee import RefereeConfig, make_referee_config
from agents_llm.roles import DEFAULT_TEAM

from . import infos as report_infos

DEFAULT_LLM: dict[str, Any] = {"backend": "llamacpp", "model": "smollm2-135m"}
DEFAULT_JUDGE: dict[str, Any] = {"kind": "reference"}
RENDER_MODES = ("human", "ansi")


def plain(cfg: Any) -> Any:
    """A plain dict/list from an OmegaConf node, a dataclass or a dict (None stays None)."""
    from omegaconf import OmegaConf

    if cfg is None:
        return None
    if OmegaConf.is_config(cfg):
        return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    if hasattr(cfg, "__dataclass_fields__"):
        return OmegaConf.to_container(OmegaConf.structured(cfg), resolve=True, enum_to_str=True)
    if isinstance(cfg, Mapping):
        return {k: plain(v) if isinstance(v, (Mapping, list)) or OmegaConf.is_config(v) else v for k, v in cfg.items()}
    if isinstance(cfg, list):
        return [plain(v) for v in cfg]
    return cfg


def llm_config(llm: Any) -> dict[str, Any]:
    """The llm config with the env's defaults (embedded SmolLM2) under the user's keys."""
    return dict(DEFAULT_LLM, **(plain(llm) or {}))


def judge_config(judge: Any) -> dict[str, Any]:
    """The judge config with the env's default (the reference judge) under the user's keys."""
    return dict(DEFAULT_JUDGE, **(plain(judge) or {}))


TASK_SAMPLING = ("random", "by_seed")


@dataclass
class ReportEnvConfig:
    """Every setting of one report env (the keys of ``conf/env/report_writing.yaml``)."""

    team: list[str] = field(default_factory=lambda: list(DEFAULT_TEAM))  # role names, order = priority
    max_rounds: int = 4  # truncation after this many rounds
    min_rounds_before_terminate: int = 2  # terminate is masked before this many rounds
    split: str = "train"  # task split: train | holdout | all
    tasks: Any = None  # None = envs/report/tasks.json; a shipped set by name (heldout_pool); a JSON path; or a list of topics/task dicts
    task_id: str | None = None  # pin one task of the split
    # random: reset(seed) draws a task (with replacement); by_seed: tasks[seed % n], so n
    # consecutive seeds play every task once (evaluate.py's default on a report env)
    task_sampling: str = "random"
    corpus: str | None = None  # one corpus for every task (None: each task's own)
    store_path: str | None = None  # the RAG store's folder (None: <cache>/stores/<corpus>-<embedding>)
    llm: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_LLM))  # agents_llm.backends config
    judge: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_JUDGE))  # agents_llm.judges config
    rag: dict[str, Any] = field(default_factory=dict)  # rag.RagConfig overrides
    engine: EngineSettings = field(default_factory=EngineSettings)  # per-call budgets of the round engine
    extractive: ExtractiveSettings = field(default_factory=ExtractiveSettings)  # llm=extractive: its rules' version
    referee: RefereeConfig = field(default_factory=RefereeConfig)  # flags and penalty (agents_llm.referee)
    summary_dim: int = 32  # size of the progress-summary embedding in observations (0: none)
    token_scale: float = 20000.0  # tokens normalisation in observations
    round_token_scale: float = 4000.0  # last round's tokens normalisation in observations
    output_dir: Path | None = None  # where report.md + trace.json go
    save_episodes: bool = False  # write every finished episode to output_dir
    render_mode: str | None = None  # human | ansi | None
    infos: str = "stackable"  # stackable | full (envs/report/infos.py)
    observe_comm_adjacency: bool = False  # the last round's (N, N) adjacency ends each observation vector

    @classmethod
    def from_kwargs(
        cls,
        *,
        team: Any = DEFAULT_TEAM,
        max_rounds: int = 4,
        min_rounds_before_terminate: int = 2,
        split: str = "train",
        tasks: Any = None,
        task_id: str | None = None,
        task_sampling: str = "random",
        corpus: str | None = None,
        store_path: str | None = None,
        llm: Any = None,
        judge: Any = None,
        rag: Any = None,
        engine: Any = None,
        extractive: Any = None,
        referee: Any = None,
        summary_dim: int = 32,
        token_scale: float | None = None,
        round_token_scale: float = 4000.0,
        output_dir: str | Path | None = None,
        save_episodes: bool = False,
        render_mode: str | None = None,
        infos: str = "stackable",
        observe_comm_adjacency: bool = False,
        name: str | None = None,
    ) -> "ReportEnvConfig":
        """The checked config from the factory's keywords (Hydra nodes, dataclasses or plain data).

        ``name`` may arrive from a Hydra env group; the registry already used it."""
        del name
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {list(RENDER_MODES)} or None, got {render_mode!r}")
        if int(max_rounds) < 1:
            raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
        if int(min_rounds_before_terminate) < 0:
            raise ValueError(f"min_rounds_before_terminate must be >= 0, got {min_rounds_before_terminate}")
        if int(summary_dim) < 0:
            raise ValueError(f"summary_dim must be >= 0, got {summary_dim}")
        if not isinstance(observe_comm_adjacency, (bool, np.bool_)):
            raise ValueError(f"observe_comm_adjacency must be true or false, got {observe_comm_adjacency!r}")
        report_infos.check_mode(infos)
        if task_sampling not in TASK_SAMPLING:
            raise ValueError(f"task_sampling must be one of {', '.join(TASK_SAMPLING)}, got {task_sampling!r}")
        llm_cfg, judge_cfg = llm_config(llm), judge_config(judge)
        if llm_cfg.get("backend") == "extractive" and judge_cfg.get("kind") == "llm":
            raise ValueError(
                "judge.kind=llm needs a language model, and llm=extractive has none; "
                "use judge=reference with the extractive team"
            )
        engine_cfg = plain(engine) or {}
        settings = EngineSettings(**engine_cfg)
        # Sampling follows the llm config unless the engine config says otherwise.
        for key in ("temperature", "seed"):
            if key not in engine_cfg and key in llm_cfg:
                setattr(settings, key, llm_cfg[key])
        make_ledger(llm_cfg)  # validates the budget now, not at the first reset
        budget = llm_cfg.get("episode_token_budget")
        raw_tasks = plain(tasks) if tasks is not None and not isinstance(tasks, (str, Path)) else tasks
        return cls(
            team=list(plain(team) if not isinstance(team, (list, tuple)) else team),
            max_rounds=int(max_rounds),
            min_rounds_before_terminate=int(min_rounds_before_terminate),
            split=split,
            tasks=raw_tasks,
            task_id=task_id,
            task_sampling=task_sampling,
            corpus=corpus,
            store_path=store_path,
            llm=llm_cfg,
            judge=judge_cfg,
            rag=plain(rag) or {},
            engine=settings,
            extractive=ExtractiveSettings.from_mapping(plain(extractive)),
            referee=make_referee_config(plain(referee)),
            summary_dim=int(summary_dim),
            token_scale=float(token_scale or budget or 20000),
            round_token_scale=float(round_token_scale),
            output_dir=Path(output_dir).expanduser() if output_dir else None,
            save_episodes=bool(save_episodes),
            render_mode=render_mode,
            infos=infos,
            observe_comm_adjacency=bool(observe_comm_adjacency),
        )

    @property
    def extractive_team(self) -> bool:
        """llm.backend=extractive is no model: the extractive team's engine (agents_llm.extractive)."""
        return self.llm.get("backend") == "extractive"

    @property
    def time_limit_matches_budget(self) -> bool:
        """The observation scales tokens by the episode's token budget (so a budget cut is observable)."""
        budget = self.llm.get("episode_token_budget")
        return budget is not None and float(budget) == self.token_scale


FIELD_NAMES = tuple(f.name for f in fields(ReportEnvConfig))
