"""``<kind>.csv``: one row per logged episode, under a header that only grows."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any, Mapping

LEADING_COLUMNS = ("episode", "t_env")  # always the first CSV columns, in this order


class CSVLogger:
    """Appends rows to ``path``. The header is stable: ``episode`` and ``t_env`` first,
    then the columns in the order they first appeared; it only ever grows (a metric that
    appears later, e.g. ``loss`` once learning starts, widens the file atomically and
    keeps every earlier column where it was), and a resumed run reuses it."""

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

    def truncate_after(self, episode: int) -> int:
        """Drop the rows logged after ``episode`` (a run resumed from a checkpoint of that
        episode replays them), atomically; the number dropped."""
        if not self.path.exists():
            return 0
        with open(self.path, newline="") as f:
            rows = list(csv.DictReader(f))
        kept = [r for r in rows if not _after(r.get("episode"), episode)]
        if len(kept) < len(rows):
            tmp = self.path.with_name(self.path.name + ".tmp")
            with open(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=self.fields)
                w.writeheader()
                w.writerows(kept)
            os.replace(tmp, self.path)
        return len(rows) - len(kept)

    def _widen(self, fields: list[str]) -> None:
        leading = [c for c in LEADING_COLUMNS if c in fields]
        fields = leading + [c for c in fields if c not in leading]
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


def _after(value: Any, episode: int) -> bool:
    try:
        return float(value) > episode
    except (TypeError, ValueError):  # a row without an episode number is kept
        return False
