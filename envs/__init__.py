"""Environment registry and the contract every env in this project follows.

Registry
--------
``register(name, factory)`` adds an env; ``make(name, **cfg)`` builds one;
``registered()`` lists the names. A factory is any callable returning a PettingZoo
``ParallelEnv``. Registration may be *lazy*: ``register(name, "module:attr")`` stores an
import path that is only imported when the env is made, so importing ``envs`` never
pulls in LLM code.

Shared resources. An env whose objects are expensive (the report env: LLM backend,
RAG store, judge) registers, beside its factory, a *resources* class
(``register(name, factory, resources="module:Class")``) with ``pool_key(cfg)`` and
``from_env_kwargs(cfg)``. A :class:`ResourcePool`, owned by an entry point or a
runner, builds one resources object per distinct config and ``make(name,
resources=pool.get(name, cfg), **cfg)`` hands it to each env: the envs of one run share
them on purpose, envs of different configs (or of different pools) share nothing.
``make`` without ``resources`` lets the env build its own.

The env contract (what ``algos`` relies on)
-------------------------------------------
* PettingZoo ``ParallelEnv``; ``possible_agents`` fixed for the env's lifetime; agent
  order in ``possible_agents`` is the agent index used everywhere (graphs, mixers).
* ``observation_space(agent)`` is ``Dict({"observation": Box(float32, (D,)),
  "action_mask": Box(0, 1, (A,), int8)})``; ``action_space(agent)`` is ``Discrete(A)``;
  all agents share D and A (parameter sharing with an agent id).
  Anything else (a bare ``Box``, a Dict without ``action_mask``, a mask of the wrong
  length) is refused by ``algos.EnvSpec.from_env`` with an error naming what is wrong.
* ``state()`` returns a flat float32 array; the env has a ``state_space`` attribute (a
  ``Box``) so learners can size their mixer before the first reset (``EnvSpec.from_env``
  refuses an env with ``state()`` but no ``state_space``; an env with no state at all
  suits VDN and IQL, not QMIX). For the report env: record the state *before* the step
  together with the observation.
* Time limits. ``terminations`` end the MDP; ``truncations`` cut an episode at a limit.
  Every env that truncates declares whether that limit is **observable**, i.e. visible
  in the observation (a round counter, rounds left): attribute
  ``time_limit_observable = True | False``. A per-episode ``infos[agent]
  ["time_limit_observable"]`` on the truncated round overrides it (an env with a
  visible round budget and a hidden wall-clock cut). Observable: reaching the limit is
  part of the MDP the agents face, so the learners treat the cut round as terminal
  (the value after it is 0); not observable: they bootstrap from the final observation,
  as for a cut the agents could not foresee (Pardo et al., "Time Limits in Reinforcement
  Learning", ICML 2018). An env that declares nothing is bootstrapped through, with a
  warning; ``algo.time_limit_observable`` overrides any declaration. The matrix games,
  ``delayed_reward_v0``, ``teammate_signal_v0`` and the report env (round budget in the
  observation) declare ``True``.
* Rewards: cooperative. The learners use the **mean of the agents' rewards** as the
  team reward (identical to any agent's reward when the reward is shared).
* Communication graph (for graph-based agents such as our QMIX): the graph of the
  *last executed round*, as an int64 array of shape ``(2, E)`` over agent indices
  (row 0 = sender/source, row 1 = receiver/target: an edge j -> i means agent i
  received j's output). Expose it with a method ``comm_graph()``; after ``reset`` it is
  empty (shape ``(2, 0)``). As a fallback ``infos[agent]["comm_graph"]`` is read.
  Envs without a graph (matrix games) simply have no such method: the graph is empty.
  Use :func:`get_comm_graph` to read it.
* Optional per-round numbers in ``infos[agent]`` (the first acting agent's infos are
  read; put the same team numbers in every agent's infos). Training logs them when
  present and never requires them: ``report_score``, ``length_score`` (the episode's
  last value is logged), ``tokens`` (tokens spent *in that round*; summed over the
  episode), and ``rounds_since_append``: on a round whose reward is an append's reward,
  the number k >= 1 of rounds that reward covers (this round and the k - 1 before it,
  back to the previous append); 0 or absent on every other round. The learners'
  ``reward_spreading`` reads it (off by default; ``nstep``: n-step targets reaching to
  the append; ``even``: the original's biased even spreading, for replication).
* Optional ``call_failures()`` returning a :class:`CallFailures`: the last episode's
  calls to an outside service (the report env: its LLM calls), how many failed, what they
  spent and the first failure's cause. Training stops on it (``train.llm_error_share_stop``)
  and a concurrent rollout drops an episode none of whose calls succeeded; it is read once
  the episode has ended, before the next reset. Use :func:`get_call_failures` to read it:
  an env without the method (no outside calls: the matrix games) reports none.
  The per-round counts ``llm_calls`` and ``llm_errors`` in ``infos`` are logged (summed)
  like ``tokens``.
* Optional ``artifacts()`` returning ``{name: path}`` (e.g. the last report and its
  trace); ``experiments/train.py`` prints them at the end of training.
* Optional held-out evaluation: an env config may carry ``eval_overrides`` (a dict of
  factory keyword arguments, e.g. ``{split: holdout}``) that evaluation merges into
  the env's arguments. ``make`` never sees that key.
* Config: ``conf/env/<name>.yaml`` is in Hydra's global package, so it can also set
  the training budget that suits the env and pick the LLM groups it needs::

      # @package _global_
      defaults:
        - override /llm: llamacpp      # groups null by default in conf/config.yaml
        - override /judge: reference
        - override /rag: default
        - _self_
      env:
        name: report_writing_v0        # the registry name; the other keys go to the factory
        llm: ${llm}                    # other groups reach the factory by interpolation
        eval_overrides: {split: holdout}
      train:
        episodes: 40

  Without a schema the yaml's keys are the schema (an unknown key still fails at start;
  values are checked by the factory). A typed schema is optional: a dataclass subclassing
  ``envs.configs.EnvConfig``, in a module free of LLM imports, passed as
  ``register(name, factory, config_class=..., config_name=...)`` becomes
  ``env/base_<config_name>`` for ``- base_<config_name>@env`` in that defaults list (or
  ``env=base_<config_name>`` on the command line, with no yaml).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Collection, Optional, Union

import numpy as np

from .configs import EnvConfig, OneStep3x3EnvConfig, TwoStepEnvConfig, store_env_config
from .recorded_names import RecordedNameError as RecordedNameError  # a checkpoint's names, never imported
from .recorded_names import check_recorded_env as _check_recorded_env

Factory = Callable[..., Any]
_REGISTRY: dict[str, Union[Factory, str]] = {}
_RESOURCES: dict[str, Union[Any, str]] = {}  # env name -> its resources class (or "module:Class")
_CONFIGS: dict[str, tuple[str, type]] = {}  # env name -> (its ConfigStore name, its config schema)


def register(
    name: str,
    factory: Union[Factory, str],
    *,
    overwrite: bool = False,
    resources: Union[Any, str, None] = None,
    config_class: Optional[type] = None,
    config_name: Optional[str] = None,
) -> None:
    """Register ``factory`` (a callable, or a lazy ``"module:attr"`` import path) as ``name``;
    ``resources``: the class of its shared resources (see the module docstring), if any;
    ``config_class``: its config schema (a dataclass subclassing ``envs.configs.EnvConfig``),
    stored in Hydra's ConfigStore as ``env/base_<config_name>`` (default: ``name``)."""
    current = _REGISTRY.get(name)
    # A lazy (string) entry may always be replaced by the real factory.
    if not overwrite and current is not None and not isinstance(current, str) and current is not factory:
        raise ValueError(f"env {name!r} is already registered; pass overwrite=True to replace it")
    if config_class is not None and not (isinstance(config_class, type) and issubclass(config_class, EnvConfig)):
        raise TypeError(f"env {name!r}: config_class must be a dataclass subclassing envs.configs.EnvConfig")
    _REGISTRY[name] = factory
    if resources is not None:
        _RESOURCES[name] = resources
    if config_class is not None:
        _CONFIGS[name] = (config_name or name, config_class)
        store_env_config(config_name or name, config_class)


def env_config_class(name: str) -> Optional[type]:
    """The config schema env ``name`` was registered with (None: a plain yaml)."""
    entry = _CONFIGS.get(name)
    return entry[1] if entry else None


def store_configs() -> None:
    """Store every registered env schema in Hydra's ConfigStore as ``env/base_<config_name>``."""
    for config_name, schema in _CONFIGS.values():
        store_env_config(config_name, schema)


def registered() -> list[str]:
    return sorted(_REGISTRY)


def check_recorded_env(env_cfg: Any, plugin_modules: Collection[str], *, source: str) -> None:
    """Refuse, with one line, an env config recorded in ``source`` that names an env, judge or
    role not registered now (``envs.recorded_names``); nothing it names is imported."""
    _check_recorded_env(env_cfg, plugin_modules, source=source, envs=registered())


def _resolve(name: str) -> Factory:
    if name not in _REGISTRY:
        raise KeyError(f"unknown env {name!r}; registered envs: {', '.join(registered())}")
    factory = _REGISTRY[name]
    if isinstance(factory, str):
        module_name, _, attr = factory.partition(":")
        module = importlib.import_module(module_name)
        # Importing the module may itself register the real factory under `name`.
        current = _REGISTRY[name]
        if not isinstance(current, str):
            factory = current
        elif hasattr(module, attr):
            factory = getattr(module, attr)
        else:
            raise ImportError(f"env {name!r}: module {module_name!r} has no {attr!r} and did not register itself")
        _REGISTRY[name] = factory
    return factory


def make(name: str, *, resources: Any = None, **cfg: Any):
    """Build the env registered as ``name`` with keyword arguments ``cfg`` (and the shared
    ``resources`` to run on, when given: see :class:`ResourcePool`)."""
    factory = _resolve(name)
    return factory(**cfg) if resources is None else factory(resources=resources, **cfg)


def _import(path: str) -> Any:
    module_name, _, attr = path.partition(":")
    return getattr(importlib.import_module(module_name), attr)


class ResourcePool:
    """The shared resources of the envs one owner builds: one object per env name and
    distinct resource config, built on first request. Not process-wide: an entry point,
    a concurrent runner or a Ray worker makes its own, so what it shares is what it meant to."""

    def __init__(self) -> None:
        self._made: dict[tuple[str, str], Any] = {}

    def get(self, name: str, cfg: dict[str, Any]) -> Any:
        """The resources for env ``name`` built with keywords ``cfg``; None for an env without any."""
        _resolve(name)  # an unknown name fails here, naming the registered ones
        kind = _RESOURCES.get(name)
        if kind is None:
            return None
        if isinstance(kind, str):
            kind = _RESOURCES[name] = _import(kind)
        key = (name, kind.pool_key(cfg))
        if key not in self._made:
            self._made[key] = kind.from_env_kwargs(cfg)
        return self._made[key]

    def make(self, name: str, **cfg: Any) -> Any:
        """``make(name, **cfg)`` on this pool's resources."""
        return make(name, resources=self.get(name, cfg), **cfg)


def get_comm_graph(env: Any, infos: dict | None = None) -> np.ndarray:
    """The last round's communication graph as int64 ``(2, E)``; empty when the env has none."""
    base = getattr(env, "unwrapped", env)
    fn = getattr(env, "comm_graph", None) or getattr(base, "comm_graph", None)
    graph = None
    if callable(fn):
        graph = fn()
    elif infos:
        for info in infos.values():
            if isinstance(info, dict) and "comm_graph" in info:
                graph = info["comm_graph"]
                break
    if graph is None:
        return np.zeros((2, 0), dtype=np.int64)
    graph = np.asarray(graph, dtype=np.int64)
    if graph.ndim != 2 or graph.shape[0] != 2:
        raise ValueError(f"comm_graph must have shape (2, E), got {graph.shape}")
    return graph


@dataclass(frozen=True)
class CallFailures:
    """An episode's calls to an outside service (the report env: its LLM calls) as its env
    reports them (``call_failures()``); all zero for an env that makes none."""

    calls: int = 0  # calls the episode made
    failed: int = 0  # ... of which failed
    tokens: int = 0  # tokens the episode's calls spent (0 with failed calls: none succeeded)
    cause: str = ""  # the first failure: what ended the episode, else the first failed call's error

    @property
    def share(self) -> float:
        """The share of the calls that failed (0 for an episode without calls)."""
        return self.failed / self.calls if self.calls else 0.0

    @property
    def none_succeeded(self) -> bool:
        """Calls failed and none succeeded (nothing spent): the episode is not the team's work."""
        return self.failed > 0 and not self.tokens


def get_call_failures(env: Any) -> CallFailures:
    """The env's report on its last episode's calls (``call_failures()``); none for an env without it."""
    base = getattr(env, "unwrapped", env)
    fn = getattr(env, "call_failures", None) or getattr(base, "call_failures", None)
    return fn() if callable(fn) else CallFailures()


# --- built-in envs -------------------------------------------------------------------
register("two_step_v0", "envs.matrix_games:TwoStepGame", config_class=TwoStepEnvConfig, config_name="two_step")
register(
    "one_step_3x3_v0", "envs.matrix_games:OneStep3x3Game", config_class=OneStep3x3EnvConfig, config_name="one_step_3x3"
)
register("delayed_reward_v0", "envs.delayed_reward:DelayedRewardGame")
register("teammate_signal_v0", "envs.teammate_signal:TeammateSignalGame")

# --- report-writing env (owned by the env author) ------------------------------------
# Lazy: `envs.report.writing` (and the LLM code behind it) is only imported when
# `make("report_writing_v0", ...)` is called. The module defines `parallel_env(**cfg)`
# (PettingZoo's convention) or calls `register("report_writing_v0", factory)` on import.
register("report_writing_v0", "envs.report.writing:parallel_env", resources="envs.report.resources:ReportResources")
