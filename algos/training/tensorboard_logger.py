"""TensorBoard: the scalars under the names W&B gives them, the run's config as hparams."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Sequence


def flat_hparams(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested config -> {"algo.lr": 0.0005, ...}, values TensorBoard's hparams accept
    (numbers, strings, bools; lists and None as strings)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flat_hparams(value, f"{name}."))
        elif isinstance(value, (bool, int, float, str)):
            out[name] = value
        else:
            out[name] = json.dumps(value, default=str)
    return out


class TensorBoardLogger:
    """Scalars under the same names as W&B; the run's config as TensorBoard hparams
    (the HPARAMS tab), with ``hparam_metrics`` as the metrics it lists."""

    def __init__(
        self,
        log_dir: str | os.PathLike,
        *,
        hparams: Optional[Mapping[str, Any]] = None,
        hparam_metrics: Sequence[str] = ("eval/return", "train/return"),
        purge_step: Optional[int] = None,
    ):
        from torch.utils.tensorboard import SummaryWriter

        # purge_step: a resumed run hides the events an interrupted one logged at or past it
        self.writer = SummaryWriter(str(log_dir), purge_step=purge_step)
        if hparams:
            from torch.utils.tensorboard.summary import hparams as hparams_summary

            # Written into this run's own event file (SummaryWriter.add_hparams would start
            # a second run folder): the metrics' values are the scalars logged below.
            summaries = hparams_summary(flat_hparams(hparams), {m: 0.0 for m in hparam_metrics})
            file_writer = self.writer.file_writer
            assert file_writer is not None, "SummaryWriter opens its file writer when made"
            for summary in summaries:
                file_writer.add_summary(summary)

    def log(self, metrics: Mapping[str, Any], step: int) -> None:
        for k, v in metrics.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                self.writer.add_scalar(k, v, step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()
