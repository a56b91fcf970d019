"""Atomic checkpoints.

A checkpoint is one ``torch.save`` file holding the algorithm's ``state_dict``, the
training progress (episode, env rounds), the run's resolved config, RNG states and the
W&B run id. It is written to a temporary file in the same folder, fsynced and moved in
place with ``os.replace``: a crash never leaves a half-written checkpoint.

Checkpoints are pickles (numpy arrays, dataclass configs): load only files you trust.

Layout in a run dir: ``checkpoints/last.pt`` (always the newest), ``final.pt`` (end
of training), ``ep_000100.pt`` ... (periodic, the newest ``keep`` kept).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import torch

CKPT_DIR = "checkpoints"
LAST = "last.pt"
FINAL = "final.pt"


FORMAT_VERSION = 1  # the payload layout below; bumped when a key changes meaning


def training_payload(
    *,
    algo_name: str,
    algo_state: Mapping[str, Any],
    episode: int,
    t_env: int,
    config: Mapping[str, Any],
    wandb_id: Optional[str],
    overrides: Sequence[str],
    plugins: Sequence[Mapping[str, Any]],
    interrupted: bool = False,
) -> dict[str, Any]:
    """What a training checkpoint holds: the learner's ``state_dict``, the progress (episodes
    done, env rounds), the run's redacted resolved ``config`` and command-line ``overrides``,
    the global RNG states, the W&B run id, the plugin records (re-imported on load) and
    whether an interrupt wrote it."""
    return {
        "version": FORMAT_VERSION,
        "algo_name": algo_name,
        "algo": algo_state,
        "progress": {"episode": episode, "t_env": t_env},
        "config": config,
        "rng": rng_state(),
        "wandb_id": wandb_id,
        "overrides": list(overrides),
        "plugins": list(plugins),
        "interrupted": interrupted,
        "time": time.time(),
    }


def save_atomic(payload: dict[str, Any], path: str | os.PathLike) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            torch.save(payload, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def resolve_checkpoint(path: str | os.PathLike) -> Path:
    """A checkpoint file, or a run dir (-> its checkpoints/last.pt)."""
    p = Path(path).expanduser()
    if p.is_dir():
        for cand in (p / CKPT_DIR / LAST, p / LAST):
            if cand.is_file():
                return cand
        raise FileNotFoundError(f"no checkpoint in run dir {p} (looked for {CKPT_DIR}/{LAST})")
    if not p.is_file():
        raise FileNotFoundError(f"checkpoint not found: {p}")
    return p


def load(path: str | os.PathLike) -> dict[str, Any]:
    return with_settings_it_ran(torch.load(resolve_checkpoint(path), map_location="cpu", weights_only=False))


def with_settings_it_ran(state: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's config with the settings it ran under that it predates: an extractive-team
    env saved before the team's rules were versioned (no ``env.extractive``) ran proxy v1."""
    env = (state.get("config") or {}).get("env")
    if isinstance(env, dict) and (env.get("llm") or {}).get("backend") == "extractive" and "extractive" not in env:
        env["extractive"] = {"version": 1}
    return state


def rng_state() -> dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def save_periodic(payload: dict[str, Any], run_dir: str | os.PathLike, episode: int, keep: int) -> Path:
    ckpt_dir = Path(run_dir) / CKPT_DIR
    path = save_atomic(payload, ckpt_dir / f"ep_{episode:06d}.pt")
    save_atomic(payload, ckpt_dir / LAST)
    periodic = sorted(ckpt_dir.glob("ep_*.pt"))
    for old in periodic[: max(len(periodic) - keep, 0)]:
        old.unlink()
    return path
