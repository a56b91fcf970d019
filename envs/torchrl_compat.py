"""TorchRL interop: the project's envs as TorchRL ``EnvBase`` through ``PettingZooWrapper``.

    from envs.torchrl_compat import torchrl_env
    env = torchrl_env(envs.make("report_writing_v0", ...))      # or any PettingZoo parallel env here
    check_env_specs(env)                                         # passes

What makes that work (and what to set when wrapping by hand):

* ``group_map``: the report env's agents are role names (``LeadArchitect``, ...), with no
  ``_<index>`` suffix, so TorchRL's default map would put each agent in a group of its
  own. :func:`team_group_map` puts the whole team in one group, ``"agents"``, in
  ``possible_agents`` order (= agent index = priority): the shape QMIX/VDN mixers and
  parameter sharing expect. By hand: ``PettingZooWrapper(env, group_map={"agents":
  env.possible_agents})`` or ``group_map=MarlGroupMapType.ALL_IN_ONE_GROUP``.
* infos: the report env's default ``infos="stackable"`` gives every agent the same numeric
  keys at reset and at every step (see ``envs/report/infos.py``), which TorchRL stacks
  under ``("agents", "info", <key>)``; the round's text and nested data stay in
  ``env.last_round_info()`` (``infos="full"`` puts them in the infos, which TorchRL cannot
  stack).
* the communication graph: ``("agents", "info", "comm_adjacency")``, one ``(N, N)`` matrix
  per agent (``[j, i] = 1``: i received j's output in the round just run); with the report
  env's ``observe_comm_adjacency=True`` also the last ``N*N`` entries of
  ``("agents", "observation", "observation")``, where policies read it.
* the global state: ``return_state=True`` (every env here has ``state_space``) puts
  ``env.state()`` at the root key ``"state"``, which TorchRL's ``QMixer`` reads.
* actions are categorical (an index per agent), masks come from the observation's
  ``action_mask`` (``("agents", "action_mask")``).

TorchRL is an optional dependency (the ``bench`` extra); this module imports it only
when :func:`torchrl_env` is called.
"""

from __future__ import annotations

from typing import Any

TEAM_GROUP = "agents"


def team_group_map(env: Any, group: str = TEAM_GROUP) -> dict[str, list[str]]:
    """One group holding the whole team, in ``possible_agents`` order."""
    return {group: list(env.possible_agents)}


def torchrl_env(env: Any, *, group: str = TEAM_GROUP, seed: int | None = None, device: str = "cpu", **kwargs: Any):
    """Wrap a PettingZoo parallel env of this project for TorchRL (see the module docstring).
    ``kwargs`` go to ``PettingZooWrapper`` (e.g. ``done_on_any``)."""
    try:
        from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    except ImportError as e:  # pragma: no cover - depends on the extra
        raise ImportError("TorchRL interop needs torchrl: pip install -e '.[bench]'") from e
    base = getattr(env, "unwrapped", env)
    if getattr(base, "info_mode", "stackable") != "stackable":
        raise ValueError(
            f"{type(base).__name__} was built with infos={base.info_mode!r}: TorchRL can only stack "
            "numeric infos; build it with infos='stackable' (the default) and read the round's text "
            "from env.last_round_info()"
        )
    kwargs.setdefault("return_state", getattr(base, "state_space", None) is not None)
    kwargs.setdefault("categorical_actions", True)
    return PettingZooWrapper(env=env, group_map=team_group_map(env, group), seed=seed, device=device, **kwargs)
