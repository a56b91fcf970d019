"""Metric loggers: CSV (always), TensorBoard and W&B (offline by default).

Every logger takes ``log(metrics: dict[str, float], step: int)`` where ``step`` is the
episode count. A resumed run appends to the same CSV and TensorBoard dir and resumes
the same W&B run id.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Mapping, Optional


class CSVLogger:
    """Appends rows to ``path``; when a new metric appears, the file is rewritten with
    the wider header (atomically), so columns always line up."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fields: list[str] = []
        if self.path.exists():
            with open(self.path, newline="") as f:
                self.fields = next(csv.reader(f), [])

    def log(self, metrics: Mapping[str, Any], step: int) -> None:
        row = {"episode": step, **metrics}
        new = [k for k in row if k not in self.fields]
        if new:
            self._widen(self.fields + new)
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=self.fields).writerow(row)

    def _widen(self, fields: list[str]) -> None:
        rows = []
        if self.path.exists():
            with open(self.path, newline="") as f:
                rows = list(csv.DictReader(f))
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, self.path)
        self.fields = fields

    def close(self) -> None:
        pass


class TensorBoardLogger:
    def __init__(self, log_dir: str | os.PathLike):
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(log_dir))

    def log(self, metrics: Mapping[str, Any], step: int) -> None:
        for k, v in metrics.items():
            if isinstance(v, (int, float)):
                self.writer.add_scalar(k, v, step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class WandbLogger:
    def __init__(self, run_dir: str | os.PathLike, *, project: str, group: str, name: str, config: dict, mode: str = "offline", entity: Optional[str] = None, run_id: Optional[str] = None):
        os.environ.setdefault("WANDB_SILENT", "true")
        if mode == "offline":
            os.environ["WANDB_MODE"] = "offline"  # never reach for the network
        import wandb

        self._wandb = wandb
        self.run = wandb.init(
            project=project,
            entity=entity,
            group=group,
            name=name,
            config=config,
            dir=str(run_dir),
            mode=mode,
            id=run_id,
            resume="allow",
            reinit="finish_previous",
            settings=wandb.Settings(init_timeout=120, console="off", x_disable_stats=True),
        )
        self.run_id = self.run.id

    def log(self, metrics: Mapping[str, Any], step: int) -> None:
        self.run.log({**metrics, "episode": step})

    def close(self) -> None:
        self.run.finish()


class MultiLogger:
    def __init__(self, loggers: list):
        self.loggers = loggers

    def log(self, metrics: Mapping[str, Any], step: int) -> None:
        for lg in self.loggers:
            lg.log(metrics, step)

    def close(self) -> None:
        for lg in self.loggers:
            lg.close()


_NOT_IN_GROUP = ("seed", "resume", "checkpoint", "logger")


def config_hash(config: Mapping[str, Any], exclude: tuple[str, ...] = _NOT_IN_GROUP) -> str:
    """A short hash of the config without the seed (and run plumbing): the W&B group,
    so the seeds of one configuration sit together."""
    data = {k: v for k, v in config.items() if k not in exclude}
    return hashlib.sha1(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:10]
