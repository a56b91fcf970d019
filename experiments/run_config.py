"""The top-level structured config shared by train.py and evaluate.py.

``register_configs()`` stores the schemas in Hydra's ConfigStore and registers the
resolvers used in ``conf/config.yaml``. Every field is typed, so ``algo.lr=abc`` or an
unknown key fails when the config is composed, naming the key.

Groups and their schemas:
* ``algo``: each algorithm's dataclass (``base_qmix``, ``base_vdn``, ...), stored by
  ``algos.register``; ``conf/algo/<name>.yaml`` starts with ``defaults: [base_<name>, _self_]``.
* ``env``: :class:`EnvConfig` subclasses stored here as ``base_<env>``; an env config
  has ``name`` (the ``envs`` registry name), the factory's keyword arguments, and
  optionally ``eval_overrides``. An env author can store their own schema with
  :func:`register_env_config` or write a plain yaml (its keys then form the schema).
* ``logger``: :class:`LoggerConfig`.
* ``rollout``: :class:`RolloutConfig` (episodes in flight, Ray workers).
* ``llm``, ``judge``, ``rag``: owned by ``agents_llm``/``rag``; untyped here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, OmegaConf


@dataclass
class EnvConfig:
    name: str = MISSING  # registry name in envs (envs.make(name, **kwargs))
    eval_overrides: dict = field(default_factory=dict)  # factory kwargs merged in for evaluation (e.g. {split: holdout})


@dataclass
class TwoStepEnvConfig(EnvConfig):
    name: str = "two_step_v0"


@dataclass
class OneStep3x3EnvConfig(EnvConfig):
    name: str = "one_step_3x3_v0"
    payoff: Optional[List[List[float]]] = None  # 3x3 payoff; None = pymarl2's [[8,-12,-12],[-12,0,0],[-12,0,0]]


@dataclass
class LoggerConfig:
    # CSV (<run dir>/train.csv, eval.csv) is always written.
    tensorboard: bool = False  # <run dir>/tensorboard
    wandb: bool = True  # <run dir>/wandb
    wandb_mode: str = "offline"  # offline | online | disabled; offline never touches the network
    wandb_project: str = "qmix-report-gym"
    wandb_entity: Optional[str] = None
    progress_bar: bool = True  # tqdm bar on stderr (auto-off when stderr is not a terminal)


@dataclass
class TrainConfig:
    episodes: int = 500  # training episodes (one episode = one report in the report env)
    log_every: int = 10  # write a metrics row every N episodes (averaged over the window)
    eval_every: int = 100  # greedy evaluation every N episodes (0: only at the end)
    eval_episodes: int = 5  # episodes per evaluation during training
    checkpoint_every: int = 100  # periodic checkpoint every N episodes (0: only the final one)
    keep_checkpoints: int = 3  # periodic checkpoints kept besides last.pt and final.pt
    max_rounds: int = 10_000  # safety cap on rounds per episode


@dataclass
class EvalConfig:
    episodes: int = 20  # evaluate.py: greedy episodes on the holdout env
    seed: int = 1_000_000  # base seed of evaluation episodes (disjoint from training seeds)
    out: Optional[str] = None  # metrics JSON path (default: <hydra run dir>/metrics.json)
    # Policies to compare on the same episodes, e.g. [handcrafted, preset:ring, random]; writes
    # comparison.json and comparison.md (experiments/compare_policies.py). Empty: evaluate `algo` alone.
    compare: List[str] = field(default_factory=list)


@dataclass
class RolloutConfig:
    """How episodes are collected (README "Scaling up"). The defaults are the sequential
    loop: one episode at a time through the synchronous ``env.step``."""

    # Episodes in flight in one process, on one event loop (one batched policy forward per
    # round, every episode's astep awaited together). 1 = the sequential loop.
    num_envs: int = 1
    # Episodes collected with one frozen policy before the learner observes them (in
    # episode order, one update each, as the sequential loop does). Results depend on it and
    # on the seeds, never on num_envs or workers. null = num_envs * workers.
    sync_every: Optional[int] = None
    backend: str = "local"  # local: in this process | ray: `workers` Ray actors (extra .[ray])
    workers: int = 1  # Ray actors, each running num_envs episodes at once (backend=ray)
    ray_address: Optional[str] = None  # attach to a running Ray cluster ("auto", "ray://host:10001"); null = start a local one
    worker_cpus: float = 1.0  # CPUs Ray reserves for each actor
    episode_retries: int = 1  # an episode lost with its worker is re-run this many times, then dropped (logged)


@dataclass
class RunConfig:
    algo: Any = MISSING
    env: Any = MISSING
    logger: LoggerConfig = field(default_factory=LoggerConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    llm: Any = None  # the llm group (agents_llm), when composed
    judge: Any = None
    rag: Any = None
    seed: int = 0
    device: str = "cpu"
    torch_threads: int = 1  # torch intra-op threads; 1 is fastest on a busy 2-core machine
    plugins: List[str] = field(default_factory=list)  # modules/.py files imported first; they may register algos/envs
    resume: Optional[str] = None  # train.py: a run dir to continue (same dir, same counters)
    checkpoint: Optional[str] = None  # evaluate.py: a checkpoint file or run dir to evaluate


_ENV_CONFIGS = {"two_step": TwoStepEnvConfig, "one_step_3x3": OneStep3x3EnvConfig}


def register_env_config(name: str, cls: type) -> None:
    """Store an env schema as ``env/base_<name>`` (use ``defaults: [base_<name>, _self_]``)."""
    ConfigStore.instance().store(group="env", name=f"base_{name}", node=cls)


def _run_dir(resume: Optional[str], default: str) -> str:
    return str(resume) if resume else default


def _hydra_subdir(resume: Optional[str]) -> str:
    # On resume the run dir is reused: keep the original .hydra/ config untouched.
    from datetime import datetime

    return f".hydra/resume-{datetime.now():%Y%m%d-%H%M%S}" if resume else ".hydra"


def register_configs() -> None:
    import algos  # noqa: F401  (stores base_qmix, base_vdn, base_iql, base_random)
    from agents_llm.backends.config import register_configs as register_llm_configs
    from agents_llm.judges.config import register_configs as register_judge_configs
    from rag.config import register_configs as register_rag_configs

    register_llm_configs()
    register_judge_configs()
    register_rag_configs()

    cs = ConfigStore.instance()
    cs.store(name="run_config", node=RunConfig)
    for name, cls in _ENV_CONFIGS.items():
        register_env_config(name, cls)
    # A short random id, cached like ${now:} so every job of one sweep shares it.
    OmegaConf.register_new_resolver("run_id", lambda: uuid.uuid4().hex[:6], use_cache=True, replace=True)
    OmegaConf.register_new_resolver("run_dir", _run_dir, use_cache=True, replace=True)
    OmegaConf.register_new_resolver("hydra_subdir", _hydra_subdir, use_cache=True, replace=True)
