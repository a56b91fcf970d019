"""Read a W&B offline run file (``offline-run-*/run-<id>.wandb``) back into records: the
reader is `algos.training.wandb_history` (a resumed run reads its earlier segments with
it), strict here: a test's run files are complete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from algos.training.wandb_history import history_rows, read_records

__all__ = ["history_rows", "read_records", "offline_run_file", "offline_run_files", "records_of"]


def offline_run_file(folder: Path) -> Path:
    """The one offline run file W&B wrote under ``folder`` (``wandb/offline-run-*/run-*.wandb``)."""
    files = offline_run_files(folder)
    assert len(files) == 1, files
    return files[0]


def offline_run_files(folder: Path) -> list[Path]:
    """Every offline run file under ``folder`` in the order written (a resumed run adds one)."""
    return sorted(Path(folder).glob("wandb/offline-run-*/run-*.wandb"))


def records_of(records: list[Any], kind: str) -> list[Any]:
    """The payloads of the records of one type (``run``, ``metric``, ``history``, ...)."""
    return [getattr(r, kind) for r in records if r.WhichOneof("record_type") == kind]
