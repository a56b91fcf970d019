"""The env config schemas: what ``conf/env/<name>.yaml`` may hold, checked when Hydra composes.

An env config has ``name`` (the ``envs`` registry name), the factory's keyword arguments and
optionally ``eval_overrides``. ``envs.register(name, factory, config_class=..., config_name=...)``
stores the schema in Hydra's ConfigStore as ``env/base_<config_name>``; a yaml then starts
with ``defaults: [base_<config_name>@env, _self_]``. An env without a schema may ship a
plain yaml (its keys then form the schema).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

MISSING = "???"  # omegaconf.MISSING: a value the config must set


@dataclass
class EnvConfig:
    name: str = MISSING  # registry name in envs (envs.make(name, **kwargs))
    eval_overrides: dict = field(
        default_factory=dict
    )  # factory kwargs merged in for evaluation (e.g. {split: holdout})


@dataclass
class TwoStepEnvConfig(EnvConfig):
    name: str = "two_step_v0"
    action_permutation_seed: Optional[int] = (
        None  # None: the paper's labels; an int: seeded per-state, per-agent relabelling
    )
    payoff_scale: float = 1.0  # every payoff times this (> 0); optimum 8 * payoff_scale


@dataclass
class OneStep3x3EnvConfig(EnvConfig):
    name: str = "one_step_3x3_v0"
    payoff: Optional[List[List[float]]] = None  # 3x3 payoff; None = pymarl2's [[8,-12,-12],[-12,0,0],[-12,0,0]]


def store_env_config(config_name: str, cls: type) -> None:
    """Store an env schema as ``env/base_<config_name>`` in Hydra's ConfigStore (when Hydra is installed)."""
    try:
        from hydra.core.config_store import ConfigStore
    except ImportError:  # Hydra is optional for library use
        return
    ConfigStore.instance().store(group="env", name=f"base_{config_name}", node=cls)
