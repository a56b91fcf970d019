"""What a report env is built from, by its config: its tasks (and the one an episode plays),
the resources it runs on (given, or built for it alone) and its round engine (the LLM
team's, or the extractive team's)."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from agents_llm.engine import RoundEngine

from .config import ReportEnvConfig
from .resources import ReportResources
from .tasks import Task, load_tasks


def env_tasks(cfg: ReportEnvConfig) -> list[Task]:
    """The tasks of the env's split (its corpus, when set, replacing theirs; one task when ``task_id`` names it)."""
    tasks = load_tasks(cfg.tasks, split=cfg.split)
    if cfg.corpus is not None:
        # Another corpus: the task's document names belong to the corpus it was written for.
        tasks = [dataclasses.replace(t, corpus=str(cfg.corpus), documents=()) for t in tasks]
    if cfg.task_id is not None:
        chosen = [t for t in tasks if t.id == cfg.task_id]
        if not chosen:
            raise ValueError(f"task_id {cfg.task_id!r} not in split {cfg.split!r}: {[t.id for t in tasks]}")
        tasks = chosen
    return tasks


def resolve_resources(
    cfg: ReportEnvConfig, resources: ReportResources | None, given: Mapping[str, Any]
) -> ReportResources:
    """``resources`` checked against the config, or built from it and the ready-made objects ``given``."""
    if resources is None:
        return ReportResources(
            llm=cfg.llm,
            judge=cfg.judge,
            rag=cfg.rag,
            store_path=cfg.store_path,
            **{k: v for k, v in given.items() if v is not None},
        )
    extra = sorted(k for k, v in given.items() if v is not None)
    if extra:
        raise TypeError(f"{', '.join(extra)}: hand ready-made objects to ReportResources(...), not beside resources=")
    resources.check_fits(cfg.llm, cfg.judge, cfg.rag, cfg.store_path)
    return resources


def make_engine(cfg: ReportEnvConfig, team: Any, backend: Any) -> Any:
    """The round engine: the extractive team's rules (``extractive_team``) or the LLM team on ``backend``."""
    if cfg.extractive_team:
        from agents_llm.extractive import ExtractiveEngine

        return ExtractiveEngine(
            team,
            settings=cfg.engine,
            tokenizer_model=cfg.llm.get("tokenizer_model", "smollm2-135m"),
            version=cfg.extractive.version,
        )
    return RoundEngine(team, backend, retriever=None, settings=cfg.engine)


def pick_task(
    tasks: list[Task], options: Mapping[str, Any], seed: int | None, sampling: str, rng: np.random.Generator
) -> Task:
    """The task an episode plays: one given in ``reset(options)``, else by seed or drawn from ``rng``."""
    if "task" in options or "topic" in options:
        raw = options.get("task") or {"id": "custom", "topic": options.get("topic")}
        if isinstance(raw, Task):
            return raw
        if isinstance(raw, str):
            raw = {"id": "custom", "topic": raw}
        return Task.from_dict(dict(raw), "reset(options)")
    if sampling == "by_seed" and seed is not None:
        return tasks[seed % len(tasks)]
    return tasks[int(rng.integers(len(tasks)))]
