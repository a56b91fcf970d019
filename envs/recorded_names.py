"""What a checkpoint's env config names, resolved only against the registries.

A checkpoint can come from anyone, and its digest proves integrity, not intent: an env,
judge, backend or role it records is looked up among those registered (built in, or by
a module the command line's ``plugins=[...]`` imported) and nothing it names is imported.
``algos.plugins.check_checkpoint_plugins`` calls this for ``evaluate.py checkpoint=``,
``train.py resume=`` and ``write_report.py checkpoint=``.
"""

from __future__ import annotations

from typing import Any, Collection, Mapping


class RecordedNameError(ValueError):
    """A checkpoint names an env, judge or role that is not registered."""


def _shown(value: Any) -> str:
    return " ".join(str(value).split())[:120]


def check_recorded_env(env_cfg: Any, plugin_modules: Collection[str], *, source: str, envs: Collection[str]) -> None:
    """Refuse, with one line, an env config recorded in ``source`` that names anything not
    registered; ``plugin_modules``: the import names and specs of the command line's plugins;
    ``envs``: the registered env names (``envs.check_recorded_env`` passes ``envs.registered()``)."""
    if not isinstance(env_cfg, Mapping):
        raise RecordedNameError(f"{source} records no env config (got {type(env_cfg).__name__})")
    name = env_cfg.get("name")
    if name not in envs:
        raise RecordedNameError(
            f"{source} records env {_shown(name)!r}, which is not registered (known: {', '.join(sorted(envs))}); "
            "a plugin that registers it goes in plugins=[...]"
        )
    if "team" in env_cfg:
        from agents_llm.roles import RoleError, check_recorded_team

        try:
            check_recorded_team(env_cfg.get("team"), plugin_modules, source=source)
        except RoleError as e:
            raise RecordedNameError(str(e)) from None
    judge = env_cfg.get("judge")
    if isinstance(judge, Mapping) and judge.get("kind") is not None:
        from agents_llm.judges.registry import JUDGES

        if judge["kind"] not in JUDGES:
            raise RecordedNameError(
                f"{source} records judge {_shown(judge['kind'])!r}, which is not registered; "
                "a plugin that registers it goes in plugins=[...]"
            )
