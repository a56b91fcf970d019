"""Algorithm registry.

``register(name, cls)`` makes ``cls`` buildable by name and -- when Hydra is available --
stores its config dataclass in Hydra's ConfigStore (group ``algo``), so that
``python experiments/train.py algo=<name>`` works with no yaml file. Built-in algorithms
register their dataclass as ``base_<name>`` and ship ``conf/algo/<name>.yaml`` on top.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Optional

from omegaconf import DictConfig, OmegaConf

from .base import AlgoConfig, Algorithm, EnvSpec

_ALGOS: dict[str, type[Algorithm]] = {}


def register(
    name: str, cls: type[Algorithm], *, config_name: Optional[str] = None, overwrite: bool = False
) -> type[Algorithm]:
    """Register algorithm class ``cls`` as ``name``.

    ``config_name``: the name of its config in Hydra's ConfigStore group ``algo``
    (default: ``name``). The config dataclass is ``cls.config_class``; its ``name`` field
    defaults to ``name``.
    """
    if not (isinstance(cls, type) and issubclass(cls, Algorithm)):
        raise TypeError(f"{cls!r} is not a subclass of algos.Algorithm")
    cfg_cls = cls.config_class
    if not (dataclasses.is_dataclass(cfg_cls) and issubclass(cfg_cls, AlgoConfig)):
        raise TypeError(f"{cls.__name__}.config_class must be a dataclass subclassing algos.AlgoConfig")
    if name in _ALGOS and _ALGOS[name] is not cls and not overwrite:
        raise ValueError(f"algorithm {name!r} is already registered ({_ALGOS[name].__name__}); pass overwrite=True")
    _ALGOS[name] = cls
    _store_config(config_name or name, cfg_cls, name)
    return cls


def _store_config(config_name: str, cfg_cls: type[AlgoConfig], name: str) -> None:
    try:
        from hydra.core.config_store import ConfigStore
    except ImportError:  # Hydra is optional for library use
        return
    node = OmegaConf.structured(cfg_cls)
    node.name = name
    ConfigStore.instance().store(group="algo", name=config_name, node=node)


def available() -> list[str]:
    return sorted(_ALGOS)


def get(name: str) -> type[Algorithm]:
    if name not in _ALGOS:
        raise KeyError(
            f"unknown algorithm {name!r}; registered: {', '.join(available())}. "
            "A plugin must be imported (e.g. `plugins=[my_pkg.my_algo]`) before it can be used."
        )
    return _ALGOS[name]


def to_config(name: str, cfg: Any = None) -> AlgoConfig:
    """Turn a dataclass, dict or DictConfig into the algorithm's validated config dataclass."""
    cls = get(name)
    if isinstance(cfg, cls.config_class):
        return cfg
    schema = OmegaConf.structured(cls.config_class)
    schema.name = name
    if cfg is not None:
        data = (
            OmegaConf.to_container(cfg, resolve=True)
            if isinstance(cfg, DictConfig)
            else dict(cfg)
            if isinstance(cfg, Mapping)
            else dataclasses.asdict(cfg)
        )
        schema = OmegaConf.merge(schema, data)  # raises naming an unknown key or a bad value
    built = OmegaConf.to_object(schema)
    if not isinstance(built, AlgoConfig):  # register() checked config_class; this is what Hydra built from it
        raise TypeError(f"algorithm {name!r}: its config built as {type(built).__name__}, not an AlgoConfig")
    return built


def build(name: str, spec: EnvSpec, cfg: Any = None, *, seed: int = 0, device: str = "cpu") -> Algorithm:
    """Build registered algorithm ``name`` for an env described by ``spec``."""
    cls = get(name)
    return cls(spec, to_config(name, cfg), seed=seed, device=device)
