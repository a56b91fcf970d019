"""A run's names in W&B: its group (readable, the same for every seed of a config), its
tags and the config hash that tells two configurations apart."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable, Mapping

from report_protocol.run_labels import team_label  # one naming of the team for runs, W&B and the viewer

_NOT_IN_GROUP = ("seed", "resume", "checkpoint", "logger", "plugins", "sweep")
_MAX_GROUP_CHARS = 128  # W&B's limit on a group name


def config_hash(config: Mapping[str, Any], exclude: tuple[str, ...] = _NOT_IN_GROUP) -> str:
    """A short hash of the config without the seed (and run plumbing): the seeds of one
    configuration share it (a W&B tag, ``cfg-<hash>``)."""
    data = {k: v for k, v in config.items() if k not in exclude}
    return hashlib.sha1(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:10]


def _kept_override(override: str) -> bool:
    key = override.split("=", 1)[0].lstrip("+~")
    top = key.split(".", 1)[0].split("/", 1)[0]
    # `algo=qmix` and `env=two_step` are already in the name; `algo.lr=...` is kept.
    return key not in ("algo", "env") and top not in _NOT_IN_GROUP and top not in ("hydra", "sweep")


def group_name(algo: str, env: str, overrides: Iterable[str] = ()) -> str:
    """``<algo>-<env>[-<overrides>]``: readable, and the same for every seed of a config
    and for the evaluation runs of its checkpoints.

    ``overrides`` are the command line's (``algo.lr=0.001``); the seed, ``algo=``/``env=``
    (already in the name) and run plumbing (logger, resume, plugins, hydra, sweep) are left
    out. A name longer than W&B allows is cut and ends with a hash of the whole name."""
    kept = sorted(o for o in overrides if _kept_override(o))
    name = "-".join([algo, env, *([",".join(kept)] if kept else [])])
    if len(name) > _MAX_GROUP_CHARS:
        digest = hashlib.sha1(name.encode()).hexdigest()[:10]
        name = f"{name[: _MAX_GROUP_CHARS - len(digest) - 2]}..{digest}"
    return name


def run_tags(algo: str, env: str, config: Mapping[str, Any]) -> list[str]:
    team = team_label(config)
    return [f"cfg-{config_hash(config)}", f"algo:{algo}", f"env:{env}", *([f"team:{team}"] if team else [])]
