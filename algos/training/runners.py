"""Which rollout runs a training or evaluation run's episodes, from its ``rollout`` config.

``rollout.num_envs == 1`` on the local backend with no ``sync_every`` is the sequential
loop (:func:`algos.training.rollout.run_episode`); anything else runs through a
concurrent runner (:class:`~algos.training.vector_rollout.VectorRollout`, or
:class:`~algos.training.ray_rollout.RayRollout` for ``rollout.backend=ray``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from omegaconf import DictConfig, OmegaConf

import envs

from ..base import Algorithm, EnvSpec
from .env_configs import env_args
from .progress import RunProgress
from .rollout import evaluate
from .vector_rollout import check_positive, evaluate_vectorized


def check_rollout(rollout: Any) -> None:
    """Fail at start, naming the setting, on a rollout config that cannot run."""
    check_positive("rollout.num_envs", rollout.num_envs)
    check_positive("rollout.workers", rollout.workers)
    if rollout.sync_every is not None:
        check_positive("rollout.sync_every", rollout.sync_every)
    if rollout.backend not in ("local", "ray"):
        raise ValueError(f"rollout.backend must be 'local' or 'ray', got {rollout.backend!r}")
    if rollout.backend == "local" and rollout.workers != 1:
        raise ValueError(f"rollout.workers={rollout.workers} needs rollout.backend=ray (local runs one process)")


MODEL_PROCESSES = 2  # what two single-thread model processes bought on 2 cores: 1.94x (README "Scaling up")


def single_thread_model(env_cfg: Any) -> bool:
    """True when the env's LLM is the in-process llama.cpp on one thread: a second model process
    then runs on a core of its own (a server backend's concurrency is its own business)."""
    llm = env_cfg.get("llm") if hasattr(env_cfg, "get") else None
    if not llm:
        return False
    return llm.get("backend") == "llamacpp" and int(llm.get("n_threads", 1)) == 1


def model_process_count(env_cfg: Any, episodes: int, cpus: Optional[int] = None) -> int:
    """How many single-thread model processes `episodes` episodes of this env should run on: two
    on a machine with two cores or more when the LLM is the in-process llama.cpp on one thread and
    there are at least two episodes, else one. Shared by every entry point that plays several
    LLM-team episodes (evaluate, eval.compare, transfer), so none needs a flag for both cores."""
    import os

    if episodes < 2 or not single_thread_model(env_cfg):
        return 1
    if (cpus if cpus is not None else os.cpu_count() or 1) < MODEL_PROCESSES:
        return 1
    return min(MODEL_PROCESSES, episodes)


def model_processes(rollout: Any, env_cfg: Any, episodes: int, cpus: Optional[int] = None) -> Optional[dict]:
    """The rollout settings that run `episodes` on two single-thread model processes, or None.

    With ``rollout.auto_workers`` (on by default) and the rollout at its sequential defaults,
    an evaluation of two or more episodes of an env whose LLM is the in-process llama.cpp on
    one thread runs on ``rollout.backend=ray rollout.workers=2`` when Ray is installed and the
    machine has two cores: a llama.cpp context uses one core, a second model process the other.
    A single episode, a server backend (its concurrency is ``rollout.num_envs``), more threads
    per model, or any rollout setting the user chose keeps the run as it is.
    """
    import importlib.util

    if not rollout.get("auto_workers", False):
        return None
    if (rollout.backend, rollout.workers, rollout.num_envs, rollout.sync_every) != ("local", 1, 1, None):
        return None
    workers = model_process_count(env_cfg, episodes, cpus)
    if workers < 2 or importlib.util.find_spec("ray") is None:
        return None
    return {"backend": "ray", "workers": workers}


def vectorized(rollout: Any) -> bool:
    """True when episodes run through the concurrent runner instead of the sequential loop
    (whose exploration draws from the algorithm's one random stream, not one per episode)."""
    return rollout.num_envs > 1 or rollout.backend == "ray" or rollout.sync_every is not None


def episodes_per_sync(rollout: Any) -> int:
    """How many episodes the concurrent runner collects with the policy as it is before the
    learner sees them: ``rollout.sync_every``, by default every env of every worker once."""
    return rollout.sync_every or rollout.num_envs * (rollout.workers if rollout.backend == "ray" else 1)


def make_runner(
    cfg: DictConfig,
    algo: Any,
    spec: Any,
    env_cfg: Any,
    *,
    evaluation: bool,
    output_dir: Path,
    loop: Any,
    local: bool = False,
    algo_cfg: Any = None,
    pool: Optional[envs.ResourcePool] = None,
) -> Any:
    """The concurrent episode runner a `rollout` config asks for (Ray's only when not `local`);
    `algo_cfg` is the config `algo` was built from (default `cfg.algo`). Its local envs share
    `pool`'s resources (default: a pool of the runner's own); Ray workers build theirs."""
    algo_cfg = cfg.algo if algo_cfg is None else algo_cfg
    name, args = env_args(env_cfg, evaluation=evaluation, output_dir=output_dir)
    if cfg.rollout.backend == "ray" and not local:
        from .ray_rollout import RayRollout

        algo_container = OmegaConf.to_container(algo_cfg, resolve=True)
        assert isinstance(algo_container, dict)  # an algo config is a mapping (its dataclass schema)

        return RayRollout(
            name,
            args,
            algo,
            spec,
            algo_name=algo_cfg.name,
            algo_cfg={str(k): v for k, v in algo_container.items()},
            num_envs=cfg.rollout.num_envs,
            workers=cfg.rollout.workers,
            max_rounds=cfg.train.max_rounds,
            address=cfg.rollout.ray_address,
            worker_cpus=cfg.rollout.worker_cpus,
            episode_retries=cfg.rollout.episode_retries,
            plugins=list(cfg.plugins),
            torch_threads=cfg.torch_threads,
        )
    from .vector_rollout import VectorRollout

    shared = pool if pool is not None else envs.ResourcePool()
    return VectorRollout(
        lambda: shared.make(name, **args),
        algo,
        spec,
        num_envs=cfg.rollout.num_envs,
        max_rounds=cfg.train.max_rounds,
        loop=loop,
    )


@dataclass
class TrainingRunners:
    """A training run's concurrent runners: the training episodes' (local or Ray), the
    evaluation episodes' (always local), and the one event loop they share, so that
    clients built once stay usable."""

    train: Any
    eval: Any
    loop: Any

    @classmethod
    def build(
        cls, cfg: DictConfig, algo: Algorithm, spec: EnvSpec, run_dir: Path, pool: Optional[envs.ResourcePool] = None
    ) -> Optional["TrainingRunners"]:
        """The runners ``cfg.rollout`` asks for; None for the sequential loop. Their local
        envs share ``pool``'s resources (the run's)."""
        if not vectorized(cfg.rollout):
            return None
        import asyncio

        loop = asyncio.Runner()  # one loop for the run: clients built once stay usable
        pool = pool if pool is not None else envs.ResourcePool()
        return cls(
            make_runner(
                cfg, algo, spec, cfg.env, evaluation=False, output_dir=run_dir / "episodes", loop=loop, pool=pool
            ),
            make_runner(
                cfg,
                algo,
                spec,
                cfg.env,
                evaluation=True,
                output_dir=run_dir / "eval_episodes",
                loop=loop,
                local=True,
                pool=pool,
            ),
            loop,
        )

    def close(self) -> None:
        self.train.close()
        self.eval.close()
        self.loop.close()


def evaluate_greedy(
    runners: Optional[TrainingRunners],
    eval_env: Any,
    algo: Algorithm,
    spec: EnvSpec,
    episodes: int,
    *,
    seed: int,
    progress: Optional[RunProgress] = None,
) -> dict[str, float]:
    """The greedy evaluation of the policy as it is: the same episodes and seeds through the
    sequential loop on ``eval_env`` or through the concurrent evaluation runner."""
    if runners is None:
        return evaluate(eval_env, algo, spec, episodes, seed=seed, progress=progress)
    return evaluate_vectorized(runners.eval, spec, episodes, seed=seed)
