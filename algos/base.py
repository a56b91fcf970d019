"""The small interface every algorithm implements, learning or fixed.

An algorithm is a class plus a dataclass config (BenchMARL's style):

    @dataclass
    class MyConfig(AlgoConfig):
        name: str = "my_algo"
        lr: float = 1e-3          # document each hyperparameter where it is declared

    class MyAlgo(Algorithm):
        config_class = MyConfig
        capabilities = Capabilities(learns=True, recurrent=False)

        def act(self, obs, masks, explore, *, state=None, graph=None): ...
        def observe(self, episode): ...
        def update(self): return {"loss": ...}

    algos.register("my_algo", MyAlgo)

What an algorithm sees: an :class:`EnvSpec` (agents, sizes), per-agent observations and
action masks, the global state, rewards and -- for graph-based agents -- the last
round's communication graph. Nothing else: ``algos`` never imports LLM code.

Fixed policies subclass :class:`FixedPolicy` (``capabilities.learns = False``:
``observe`` and ``update`` keep their defaults, no-op and ``{}``): random and the presets
choose joint actions with ``act``. A fixed policy that hands the env whole round plans
instead (the handcrafted pipeline) subclasses :class:`PlanPolicy` and implements
``next_plan``; the rollout loops send those plans through ``env.step_plan``.

Every hook the training and evaluation loops call is declared here with its default, so
the loops call it directly: ``begin_episode``, ``act``/``act_batch``/``episode_view``,
``next_plan`` (plan policies), ``observe``, ``update``, ``metrics``, ``check_budget``,
``last_q``, ``acting_state``/``load_acting_state`` and ``state_dict``/``load_state_dict``.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Optional, Sequence

import numpy as np
from omegaconf import MISSING


@dataclass(frozen=True)
class Capabilities:
    """What an algorithm declares about itself; the trainer and evaluator read these."""

    learns: bool = True  # False: a fixed policy; update() returns {} and nothing is trained
    needs_state: bool = False  # act()/observe() use env.state() (e.g. a mixer conditioned on it)
    recurrent: bool = False  # keeps a hidden state across rounds; reset by begin_episode()
    needs_graph: bool = False  # uses the last round's communication graph
    discrete_actions: bool = True  # only Discrete action spaces are supported
    # Hands the env whole round plans (``next_plan(infos) -> dict`` through ``env.step_plan``)
    # instead of joint actions: the handcrafted pipeline. Needs an env with ``step_plan``.
    # Declared by subclassing PlanPolicy (which sets it); checked when the class is defined.
    emits_plans: bool = False


@dataclass
class AlgoConfig:
    """Base of every algorithm config. ``name`` is the registry name."""

    name: str = MISSING

    def validate(self) -> None:
        """Raise ``ValueError`` naming the ``algo.<key>`` that is out of range; called by the
        entry points before anything is built. Default: nothing to check."""


CONTRACT = "the env contract in envs/__init__.py"


class EnvContractError(TypeError, ValueError):
    """An env breaks the contract ``algos`` relies on (see ``envs/__init__.py``)."""


@dataclass
class EnvSpec:
    """Sizes an algorithm is built from, read off the env's spaces."""

    agents: list[str]
    obs_dim: int
    n_actions: int
    state_dim: int
    extras: dict[str, Any] = field(default_factory=dict)
    # The env's declaration (attribute ``time_limit_observable``): True when the limit that
    # truncates its episodes is visible in the observation, so reaching it is terminal for
    # the TD target; False when it is not (bootstrap); None when the env says nothing.
    time_limit_observable: Optional[bool] = None

    @property
    def n_agents(self) -> int:
        return len(self.agents)

    def stack(
        self, per_agent: Mapping[str, Any], *, width: int, dtype: Any = np.float32, fill: float = 0.0
    ) -> np.ndarray:
        """``[n_agents, width]``: each agent's flattened vector in ``agents`` order; an agent
        absent from ``per_agent`` (not acting this round) gets a row of ``fill``."""
        out = np.full((self.n_agents, width), fill, dtype=dtype)
        for i, a in enumerate(self.agents):
            if a in per_agent:
                out[i] = np.asarray(per_agent[a], dtype=dtype).reshape(-1)
        return out

    def stack_observations(self, per_agent: Mapping[str, Any]) -> np.ndarray:
        """Float32 ``[n_agents, obs_dim]`` observations; absent agents observe zeros."""
        return self.stack(per_agent, width=self.obs_dim)

    def stack_masks(self, per_agent: Mapping[str, Any]) -> np.ndarray:
        """Bool ``[n_agents, n_actions]`` action masks; an absent agent's row allows every
        action (it is not acting, so nothing it "chose" is recorded as forbidden)."""
        return self.stack(per_agent, width=self.n_actions, dtype=np.int8, fill=1).astype(bool)

    @classmethod
    def from_env(cls, env: Any) -> "EnvSpec":
        """Read the spec off a PettingZoo parallel env following the contract in ``envs``.

        Fails here, naming the attribute and the contract, rather than later inside a
        learner: observation spaces must be the documented ``Dict`` of ``observation``
        (a ``Box``) and ``action_mask``; an env with ``state()`` must declare ``state_space``.
        """
        base = getattr(env, "unwrapped", env)
        name = type(base).__name__
        agents = list(env.possible_agents)
        if not agents:
            raise EnvContractError(f"{name}.possible_agents is empty; {CONTRACT} needs at least one agent")
        obs_dims, n_actions = set(), set()
        for a in agents:
            space = env.observation_space(a)
            act_space = env.action_space(a)
            if not hasattr(act_space, "n"):
                raise EnvContractError(
                    f"{name}.action_space({a!r}) is {act_space}: only Discrete action spaces are supported ({CONTRACT})"
                )
            _check_observation_space(name, a, space, int(act_space.n))
            obs_dims.add(int(np.prod(space["observation"].shape)))
            n_actions.add(int(act_space.n))
        if len(obs_dims) != 1 or len(n_actions) != 1:
            raise EnvContractError(
                f"all agents must share observation size and action count for parameter sharing ({CONTRACT}); "
                f"got obs sizes {sorted(obs_dims)} and action counts {sorted(n_actions)}"
            )
        state_space = getattr(env, "state_space", None)
        if state_space is None:
            state_space = getattr(base, "state_space", None)
        has_state = callable(getattr(env, "state", None)) or callable(getattr(base, "state", None))
        if state_space is None and has_state and not _state_is_unimplemented(env):
            raise EnvContractError(
                f"{name} has state() but no state_space attribute: declare state_space = gymnasium.spaces.Box(...) "
                f"so learners can size their mixer before the first reset ({CONTRACT})"
            )
        if state_space is not None and not (hasattr(state_space, "shape") and state_space.shape):
            raise EnvContractError(f"{name}.state_space must be a flat Box, got {state_space!r} ({CONTRACT})")
        state_dim = int(np.prod(state_space.shape)) if state_space is not None else 0
        declared = getattr(env, "time_limit_observable", getattr(base, "time_limit_observable", None))
        if declared is not None and not isinstance(declared, (bool, np.bool_)):
            raise EnvContractError(
                f"{name}.time_limit_observable must be True, False or absent, got {declared!r} ({CONTRACT})"
            )
        # The round budget, for fixed policies that plan a schedule (the handcrafted pipeline); absent when unknown.
        budget = getattr(base, "max_rounds", None)
        extras: dict[str, Any] = {"max_rounds": int(budget)} if isinstance(budget, int) else {}
        # Each agent's part in the handcrafted pipeline (report_protocol.pipeline_parts), which its role declares.
        parts = getattr(base, "pipeline_parts", None)
        if isinstance(parts, Mapping):
            extras["pipeline_parts"] = {str(a): str(p) for a, p in parts.items()}
        return cls(
            agents=agents,
            obs_dim=obs_dims.pop(),
            n_actions=n_actions.pop(),
            state_dim=state_dim,
            time_limit_observable=None if declared is None else bool(declared),
            extras=extras,
        )


def _check_observation_space(env_name: str, agent: str, space: Any, n_actions: int) -> None:
    where = f"{env_name}.observation_space({agent!r})"
    spaces = getattr(space, "spaces", None)
    if not isinstance(spaces, Mapping) or "observation" not in spaces:
        raise EnvContractError(
            f"{where} is {space!r}: it must be Dict({{'observation': Box(float32, (D,)), "
            f"'action_mask': Box(0, 1, (A,), int8)}}) ({CONTRACT}); wrap a plain Box in that Dict"
        )
    obs = spaces["observation"]
    if not hasattr(obs, "shape") or obs.shape is None or len(obs.shape) == 0 or not hasattr(obs, "low"):
        raise EnvContractError(f"{where}['observation'] must be a Box of shape (D,), got {obs!r} ({CONTRACT})")
    mask = spaces.get("action_mask")
    if mask is None:
        raise EnvContractError(f"{where} has no 'action_mask' entry: add Box(0, 1, ({n_actions},), int8) ({CONTRACT})")
    if tuple(getattr(mask, "shape", ()) or ()) != (n_actions,):
        raise EnvContractError(
            f"{where}['action_mask'] must have shape ({n_actions},) like the Discrete({n_actions}) action space, "
            f"got {getattr(mask, 'shape', mask)!r} ({CONTRACT})"
        )


def _state_is_unimplemented(env: Any) -> bool:
    """PettingZoo's ``ParallelEnv.state`` raises NotImplementedError: such an env has no state."""
    try:
        from pettingzoo import ParallelEnv
    except ImportError:  # pragma: no cover - pettingzoo is a dependency
        return False
    base = getattr(env, "unwrapped", env)
    fn = getattr(type(base), "state", None)
    return fn is None or fn is getattr(ParallelEnv, "state", None)


class Algorithm(ABC):
    """Base class. Subclasses set ``config_class`` and ``capabilities``."""

    config_class: ClassVar[type[AlgoConfig]] = AlgoConfig
    capabilities: ClassVar[Capabilities] = Capabilities()
    # The Q-values of the actions chosen by the last ``act`` (one per agent), which the
    # rollouts log as ``q_chosen_mean``; None for policies without Q-values. A value
    # learner sets it in ``act``/``act_batch`` (on each episode view) and clears it in
    # ``begin_episode``.
    last_q: Optional[np.ndarray] = None
    # The keys ``update`` returns once it learns: the training log has these columns from
    # its first row (NaN before the first update), so "no update yet" is visible, not absent.
    update_metric_names: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        plan_base = globals().get("PlanPolicy")  # None while PlanPolicy itself is being defined
        if cls.capabilities.emits_plans and plan_base is not None and not issubclass(cls, plan_base):
            raise TypeError(
                f"{cls.__name__} declares capabilities.emits_plans=True: subclass algos.base.PlanPolicy "
                "and implement next_plan(round_info) instead"
            )

    def __init__(self, spec: EnvSpec, cfg: AlgoConfig, *, seed: int = 0, device: str = "cpu"):
        self.spec = spec
        self.cfg = cfg
        self.seed = seed
        self.device = device
        self.rng = np.random.default_rng(seed)

    # --- acting -------------------------------------------------------------------
    def begin_episode(self) -> None:
        """Called before the first ``act`` of an episode (reset recurrent state here)."""

    @abstractmethod
    def act(
        self,
        obs: Mapping[str, np.ndarray],
        masks: Mapping[str, np.ndarray],
        explore: bool,
        *,
        state: Optional[np.ndarray] = None,
        graph: Optional[np.ndarray] = None,
    ) -> dict[str, int]:
        """Choose one action per agent in ``obs``. ``masks[agent][a] == 0`` forbids action a.

        ``explore=False`` asks for the greedy (evaluation) policy. ``graph`` is the last
        round's communication graph, int64 ``(2, E)`` over agent indices.
        """

    # --- acting in several episodes at once (algos.training.vector_rollout) ---------
    def episode_view(self, rng: np.random.Generator) -> "Algorithm":
        """A view of this algorithm that acts in one of several episodes in flight.

        It is a shallow copy: parameters, buffers and counters are shared with ``self``
        (read, not changed, while episodes run), while what ``begin_episode`` assigns
        (recurrent state, round counters, a pipeline's phase) and ``rng`` are the view's
        own. So an ``act`` that *assigns* its per-episode attributes works unchanged;
        one that updates an object built in ``__init__`` in place must override this.
        """
        view = copy.copy(self)
        view.rng = rng
        view.begin_episode()
        return view

    def act_batch(
        self,
        views: Sequence["Algorithm"],
        obs: Sequence[Mapping[str, np.ndarray]],
        masks: Sequence[Mapping[str, np.ndarray]],
        explore: bool,
        *,
        states: Optional[Sequence[Optional[np.ndarray]]] = None,
        graphs: Optional[Sequence[Optional[np.ndarray]]] = None,
    ) -> list[dict[str, int]]:
        """One round of every episode in flight: ``act`` of each view (from
        :meth:`episode_view`) on its episode's inputs. Learners override this with one
        batched forward pass; the result must equal the per-view loop."""
        states = states if states is not None else [None] * len(views)
        graphs = graphs if graphs is not None else [None] * len(views)
        return [v.act(o, m, explore, state=s, graph=g) for v, o, m, s, g in zip(views, obs, masks, states, graphs)]

    def acting_state(self) -> dict[str, Any]:
        """What a copy of this algorithm in another process needs to act as ``self`` does
        (sent to rollout workers after each update). Default: the whole ``state_dict``."""
        return self.state_dict()

    def load_acting_state(self, state: Mapping[str, Any]) -> None:
        """Load what :meth:`acting_state` returned (in a rollout worker)."""
        self.load_state_dict(state)

    # --- learning -----------------------------------------------------------------
    def observe(self, episode: Any) -> None:
        """Receive a finished :class:`algos.buffer.Episode` (fixed policies ignore it)."""

    def update(self) -> dict[str, float]:
        """One learning step; returns metrics to log (``{}`` when nothing was learnt)."""
        return {}

    def metrics(self) -> dict[str, float]:
        """Scalars worth logging every episode (e.g. epsilon)."""
        return {}

    def check_budget(self, total_episodes: int) -> None:
        """Called by the trainer before the first episode of a run of ``total_episodes``:
        raise ``ValueError`` (naming the setting) when the algorithm could not work in
        that budget, e.g. a target network that would never update. Default: any budget."""

    # --- persistence --------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if "rng" in state:
            self.rng.bit_generator.state = state["rng"]


class FixedPolicy(Algorithm):
    """A policy that learns nothing (random, the presets): ``observe`` and ``update`` keep
    their no-op defaults and checkpoints hold only the RNG state."""

    capabilities: ClassVar[Capabilities] = Capabilities(learns=False)


class PlanPolicy(FixedPolicy):
    """A fixed policy that hands the env whole round plans instead of joint actions.

    The rollouts call :meth:`next_plan` once per round and pass its result to
    ``env.step_plan(plan)``; the actions the env read the plan as (``infos[agent]["action"]``)
    are what the episode records. It needs an env with ``step_plan`` (the report env).
    """

    capabilities: ClassVar[Capabilities] = Capabilities(learns=False, emits_plans=True)

    @abstractmethod
    def next_plan(self, round_info: Optional[Mapping[str, Any]] = None) -> dict:
        """The next round's plan (a dict ``envs`` reads with ``RoundPlan.from_dict``), given
        the last round's full infos (``env.last_round_info()``; None or the reset infos at
        the start). A plan with ``terminate: True`` ends the episode."""

    def act(self, obs, masks, explore, *, state=None, graph=None):
        raise TypeError(
            f"{type(self).__name__} emits round plans, not joint actions: run it with an env that has "
            "step_plan (the report env) through algos.training.rollout.run_episode"
        )
