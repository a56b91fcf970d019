"""An env from its Hydra config: the registry name and the factory's arguments.

The entry points (``experiments/train.py``, ``evaluate.py``, the benchmarks) and the
concurrent runners build their envs from one ``env`` config node; the evaluation env
applies the config's ``eval_overrides``. An entry point passes one ``envs.ResourcePool``
to every env it builds, so that they share the expensive objects (an LLM backend, a
store, a judge) of equal configs on purpose and nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

import envs


def env_args(env_cfg: Any, *, evaluation: bool = False, output_dir: Path | None = None) -> tuple[str, dict]:
    """The registry name and factory arguments of the env a config names; an env that
    writes files (`output_dir: null` in its config) writes them under `output_dir`."""
    args = OmegaConf.to_container(env_cfg, resolve=True) if isinstance(env_cfg, DictConfig) else dict(env_cfg)
    assert isinstance(args, dict)  # an env config is a mapping (checked by its schema)
    name = args.pop("name")
    overrides = args.pop("eval_overrides", None) or {}
    if evaluation:
        args.update(overrides)
    if output_dir is not None and "output_dir" in args and args["output_dir"] is None:
        args["output_dir"] = str(output_dir)
    return name, args


def make_env(
    env_cfg: Any, *, evaluation: bool = False, output_dir: Path | None = None, pool: envs.ResourcePool | None = None
) -> Any:
    """Build the env a config names (see :func:`env_args`), on ``pool``'s resources
    (none given: the env builds its own)."""
    name, args = env_args(env_cfg, evaluation=evaluation, output_dir=output_dir)
    return pool.make(name, **args) if pool is not None else envs.make(name, **args)
