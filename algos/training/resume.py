"""Continuing a run from its checkpoint (``resume=<run dir>``).

The run's config comes from the checkpoint, but for its ``plugins``, which are the command
line's (a checkpoint imports no code, ``algos.plugins.check_checkpoint_plugins``); the
command line may change only what does not alter what is learnt (``RESUMABLE_PREFIXES``: how long, how it is logged, evaluated
and rolled out, on which device). The learner, the counters and the RNG states come back
as they were saved, so the resumed run ends with the parameters an uninterrupted one has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from omegaconf import DictConfig, OmegaConf

from ..base import Algorithm
from ..plugins import check_learned_state
from . import checkpoint as ckpt

# Keys that may change when resuming a run; everything else comes from the checkpoint.
RESUMABLE_PREFIXES = ("train.", "logger.", "eval.", "rollout.", "device", "torch_threads")


def resume_config(
    cfg: DictConfig, saved: Mapping[str, Any], overrides: Sequence[str], *, default_rollout: Any
) -> DictConfig:
    """The saved run's config, with the command line's resumable ``overrides`` applied
    (their values read from ``cfg``); ``default_rollout`` fills in the rollout settings of
    a run saved before they existed (the sequential loop)."""
    resumed = OmegaConf.create(dict(saved))
    if "rollout" not in resumed:
        resumed.rollout = default_rollout
    for ov in overrides:
        key = ov.split("=", 1)[0].lstrip("+~")
        if key in ("resume", "plugins"):
            continue
        if not key.startswith(RESUMABLE_PREFIXES):
            raise ValueError(
                f"cannot change {key!r} when resuming (the run's config is in its checkpoint); "
                f"only {', '.join(RESUMABLE_PREFIXES)} may be overridden"
            )
        OmegaConf.update(resumed, key, OmegaConf.select(cfg, key), force_add=True)
    resumed.resume = cfg.resume
    # The plugins are the command line's, never the checkpoint's: what train.py, the Ray rollout
    # workers and the next checkpoint's records import is what the user named.
    resumed.plugins = list(cfg.plugins) if "plugins" in cfg else []
    return resumed


@dataclass
class Progress:
    """Where a run stands: episodes done, env rounds played, its W&B run id."""

    episode: int = 0
    t_env: int = 0
    wandb_id: Optional[str] = None


def restore(algo: Algorithm, saved: Optional[Mapping[str, Any]]) -> Progress:
    """Load a checkpoint's learner state and RNG states into a fresh run; the progress to
    continue from (the start of a run when ``saved`` is None)."""
    if saved is None:
        return Progress()
    check_learned_state(algo, saved["algo"], when="resuming")
    algo.load_state_dict(saved["algo"])
    ckpt.set_rng_state(saved["rng"])
    return Progress(saved["progress"]["episode"], saved["progress"]["t_env"], saved.get("wandb_id"))
