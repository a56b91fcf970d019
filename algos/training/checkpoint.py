"""Atomic checkpoints.

A checkpoint is one ``torch.save`` file holding the algorithm's ``state_dict``, the
training progress (episode, env rounds), the run's resolved config, RNG states and the
W&B run id. It is written to a temporary file in the same folder, fsynced and moved in
place with ``os.replace``: a crash never leaves a half-written checkpoint.

Loading never runs code: :func:`load` unpickles with ``torch.load(weights_only=True)``
and an allow-list of the numpy types a checkpoint holds (arrays, dtypes, scalars), so a
file that pickles anything else is refused. Each checkpoint carries a SHA-256 digest of
its content (``"sha256"``, see :func:`content_digest`), recomputed on load: a truncated,
empty, corrupted or foreign file gives a :class:`CheckpointError` whose one-line message
names the file. Files written before digests existed load with a warning;
``python -m algos.training.checkpoint seal FILE`` adds the digest to one you trust.

Layout in a run dir: ``checkpoints/last.pt`` (always the newest), ``final.pt`` (end
of training), ``ep_000100.pt`` ... (periodic, the newest ``keep`` kept).
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
import time
import zipfile
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np
import torch

CKPT_DIR = "checkpoints"
LAST = "last.pt"
FINAL = "final.pt"


FORMAT_VERSION = 1  # the payload layout below; bumped when a key changes meaning
DIGEST_KEY = "sha256"  # the payload's content digest (content_digest of everything else)


class CheckpointError(ValueError):
    """A checkpoint that cannot be trusted or read; the message is one line naming the file."""

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        self.path = Path(path)
        self.reason = " ".join(str(reason).split())
        super().__init__(f"checkpoint {self.path}: {self.reason}")


def _digest_update(h: "hashlib._Hash", obj: Any, where: str) -> None:
    """Feed ``obj`` into ``h`` with its type and structure, so that equal digests mean equal
    content (a float 1.0 and an int 1, a list and a tuple, differ)."""
    if obj is None or isinstance(obj, (bool, int, float, complex, str)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, (bytes, bytearray)):
        h.update(f"bytes:{len(obj)}:".encode())
        h.update(bytes(obj))
    elif isinstance(obj, torch.Tensor):
        t = obj.detach().cpu().contiguous()
        h.update(f"tensor:{t.dtype}:{tuple(t.shape)}:".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise TypeError(f"{where}: numpy arrays of Python objects cannot be checkpointed")
        h.update(f"ndarray:{obj.dtype.str}:{obj.shape}:".encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, np.generic):
        h.update(f"np:{obj.dtype.str}:".encode())
        h.update(obj.tobytes())
    elif isinstance(obj, Mapping):
        h.update(f"{type(obj).__name__}:{len(obj)}{{".encode())
        for k, v in obj.items():
            _digest_update(h, k, where)
            _digest_update(h, v, f"{where}.{k}")
        h.update(b"}")
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}:{len(obj)}[".encode())
        for i, v in enumerate(obj):
            _digest_update(h, v, f"{where}[{i}]")
        h.update(b"]")
    else:
        raise TypeError(
            f"{where}: a {type(obj).__name__} cannot be checkpointed (tensors, arrays, containers, scalars)"
        )


def content_digest(payload: Mapping[str, Any]) -> str:
    """SHA-256 over the payload's content (every key but ``"sha256"``): tensors and arrays by
    dtype, shape and bytes, containers in order, scalars by type and value."""
    h = hashlib.sha256()
    _digest_update(h, {k: v for k, v in payload.items() if k != DIGEST_KEY}, "checkpoint")
    return h.hexdigest()


def _numpy_safe_globals() -> list[Any]:
    """The numpy callables and types that unpickling a checkpoint's arrays, dtypes and scalars
    needs (under numpy 2's and numpy 1's module names): nothing that can run other code."""
    from numpy._core import multiarray

    dtype_classes = {type(np.dtype(c)) for c in "?bBhHiIlLqQefdgFDGSUV"}
    found: list[Any] = [np.ndarray, np.dtype, *dtype_classes]
    for fn in (multiarray._reconstruct, multiarray.scalar):
        found += [(fn, f"numpy._core.multiarray.{fn.__name__}"), (fn, f"numpy.core.multiarray.{fn.__name__}")]
    return found


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, __import__("pickle").UnpicklingError) and "weights_only" in text.lower():
        # torch's message runs to a paragraph of advice on trusting the file: keep what it refused
        global_name = text.split("Unsupported global: GLOBAL ", 1)[-1].split(" ", 1)[0] if "GLOBAL " in text else ""
        return "it pickles code or objects a checkpoint never holds" + (f" ({global_name})" if global_name else "")
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


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
    the global RNG states, the W&B run id, the plugin records (compared with the command line's on load, never imported) and
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
    """Write ``payload`` with its content digest (``"sha256"``) to ``path`` atomically."""
    path = Path(path)
    payload = {**{k: v for k, v in payload.items() if k != DIGEST_KEY}, DIGEST_KEY: content_digest(payload)}
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


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def load(path: str | os.PathLike, *, warn: Callable[[str], None] = _warn) -> dict[str, Any]:
    """The payload of the checkpoint at ``path`` (a file or a run dir), unpickled without
    running code and checked against its digest. Raises :class:`CheckpointError` (one line,
    naming the file) for an empty, truncated, corrupted or foreign file; a file without a
    digest (written before digests existed) loads after ``warn``."""
    p = resolve_checkpoint(path)
    try:
        size = p.stat().st_size
    except OSError as e:
        raise CheckpointError(p, f"cannot be read: {e.strerror or e}") from None
    if size == 0:
        raise CheckpointError(p, "the file is empty")
    if not zipfile.is_zipfile(p):
        raise CheckpointError(p, f"not a checkpoint (not a torch.save archive, {size} bytes): truncated or foreign")
    try:
        with torch.serialization.safe_globals(_numpy_safe_globals()):
            state = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as e:  # a zip that torch cannot read back: a damaged record, a foreign pickle
        raise CheckpointError(p, f"cannot be loaded safely: {_describe(e)}") from None
    if not isinstance(state, dict) or not isinstance(state.get("algo"), Mapping):
        raise CheckpointError(p, f"not a training checkpoint (a {type(state).__name__} without an 'algo' state)")
    stored = state.pop(DIGEST_KEY, None)
    if stored is None:
        warn(f"checkpoint {p} has no content digest (written by an older version): its integrity is not checked")
        return with_settings_it_ran(state)
    try:
        actual = content_digest(state)
    except TypeError as e:
        raise CheckpointError(p, f"holds content a checkpoint never has: {e}") from None
    if actual != stored:
        raise CheckpointError(
            p, f"content digest mismatch (stored {str(stored)[:12]}..., actual {actual[:12]}...): the file is corrupted"
        )
    return with_settings_it_ran(state)


def seal(path: str | os.PathLike) -> Path:
    """Add the content digest to a checkpoint written before digests existed (a file you trust)."""
    p = resolve_checkpoint(path)
    return save_atomic(load(p, warn=lambda _m: None), p)


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


if __name__ == "__main__":  # python -m algos.training.checkpoint {check,seal} FILE...
    import argparse

    parser = argparse.ArgumentParser(prog="python -m algos.training.checkpoint", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("check", "seal"), help="check: load and verify; seal: add the digest")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    failed = 0
    for arg in args.paths:
        try:
            done = seal(arg) if args.command == "seal" else resolve_checkpoint(arg)
            if args.command == "check":
                load(done)
            print(f"{args.command}: ok {done}")
        except (CheckpointError, FileNotFoundError) as e:
            print(f"{args.command}: {e}", file=sys.stderr)
            failed = 1
    sys.exit(failed)
