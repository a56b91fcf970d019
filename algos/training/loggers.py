"""Metric loggers: CSV (always), TensorBoard and W&B (offline by default).

One metric has one name everywhere: ``<kind>.csv`` holds column ``return``, and
TensorBoard and W&B hold ``<kind>/return`` (``kind`` = ``train`` or ``eval``). Every
logger takes ``log(metrics, step)`` where ``step`` is the episode count; a resumed run
appends to the same CSV and TensorBoard dir and resumes the same W&B run id, after
dropping the CSV rows logged past its checkpoint's episode (and purging TensorBoard's
events from there on), so the replayed episodes are not logged twice. W&B cannot drop
history: the resumed W&B run skips the episodes it already holds (read back from the
run's earlier offline files, ``algos.training.wandb_history``, or online from its
summary), so each episode is one row there too, the first time it was played.

The loggers, one module each: `csv_logger`, `tensorboard_logger`, `wandb_logger` (W&B, as
a researcher reads it), and the W&B names of a run, `run_naming`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, cast

from report_protocol.run_labels import env_label  # one naming of the team for runs, W&B and the viewer

from .csv_logger import LEADING_COLUMNS, CSVLogger
from .run_naming import config_hash, group_name, run_tags
from .tensorboard_logger import TensorBoardLogger, flat_hparams
from .wandb_logger import ACTION_METRIC, WandbLogger, action_shares


class MultiLogger:
    def __init__(self, loggers: list):
        self.loggers = loggers

    def log(self, metrics: Mapping[str, Any], step: int) -> None:
        for lg in self.loggers:
            lg.log(metrics, step)

    def close(self) -> None:
        for lg in self.loggers:
            lg.close()


def env_action_names(env: Any, n_actions: int) -> list[str]:
    """The env's action names (``action_names()`` when it has one), else the indices."""
    names_of = getattr(env, "action_names", None) or getattr(getattr(env, "unwrapped", env), "action_names", None)
    names = list(names_of()) if callable(names_of) else []
    return names if len(names) == n_actions else [str(a) for a in range(n_actions)]


class RunLoggers:
    """What a run logs to: ``<kind>.csv`` per kind (train, eval) plus TensorBoard and W&B,
    where every metric is ``<kind>/<name>``.

    ``cfg`` is the run's resolved config (``logger.*`` says which loggers); ``overrides``
    (the command line's) name the W&B group; ``action_names`` label the action tables,
    logged at most every ``tables_every`` episodes per kind. ``trained_config`` (an
    evaluation of a checkpoint: the config it was trained with) gives the config-hash tag;
    ``container`` is the config as TensorBoard and W&B record it (default: ``cfg`` resolved)."""

    def __init__(
        self,
        cfg: Any,
        run_dir: Path,
        *,
        wandb_id: Optional[str] = None,
        job_type: str = "train",
        overrides: Iterable[str] = (),
        action_names: Optional[Sequence[str]] = None,
        kinds: Sequence[str] = ("train", "eval"),
        tables_every: int = 1,
        trained_config: Optional[Mapping[str, Any]] = None,
        container: Optional[dict[str, Any]] = None,
        resume_episode: Optional[int] = None,
    ):
        from omegaconf import OmegaConf

        self.run_dir = Path(run_dir)
        self.csv = {k: CSVLogger(self.run_dir / f"{k}.csv") for k in kinds}
        if resume_episode is not None:  # the rows past the checkpoint are replayed: logged once, not twice
            for logger in self.csv.values():
                logger.truncate_after(resume_episode)
        self.others: list = []
        self.paths: dict[str, Any] = {"csv": [str(p.path) for p in self.csv.values()]}
        if container is None:  # the config as written to TensorBoard/W&B (train.py passes it redacted)
            # A run config is a DictConfig with str keys, which converts to such a dict (to_container is
            # typed for every config: a ListConfig's list, a None or missing config's None or str).
            container = (
                cast("dict[str, Any]", OmegaConf.to_container(cfg, resolve=True))
                if OmegaConf.is_config(cfg)
                else dict(cfg)
            )
        lg = cfg.logger
        if lg.tensorboard:
            self.others.append(
                TensorBoardLogger(
                    self.run_dir / "tensorboard",
                    hparams=container,
                    purge_step=None if resume_episode is None else resume_episode + 1,
                )
            )
            self.paths["tensorboard"] = str(self.run_dir / "tensorboard")
        self.wandb_id = None
        if lg.wandb and lg.wandb_mode != "disabled":
            algo, env = cfg.algo.name, cfg.env.name
            label = env_label(env, trained_config or container)
            wb = WandbLogger(
                self.run_dir,
                project=lg.wandb_project,
                entity=lg.wandb_entity,
                group=group_name(algo, label, overrides),
                name=f"{algo}-{label}-s{cfg.seed}",
                config=container,
                mode=lg.wandb_mode,
                run_id=wandb_id,
                job_type=job_type,
                tags=run_tags(algo, env, trained_config or container),
                action_names=action_names,
                tables_every=tables_every,
            )
            self.others.append(wb)
            self.wandb_id = wb.run_id
            self.paths["wandb"] = str(Path(wb.run.dir).parent) if wb.run.dir else str(self.run_dir / "wandb")
        self.multi = MultiLogger(self.others)

    def log(self, kind: str, metrics: Mapping[str, Any], episode: int) -> None:
        self.csv[kind].log(metrics, episode)
        self.multi.log({f"{kind}/{k}": v for k, v in metrics.items()}, episode)

    def close(self) -> None:
        self.multi.close()


def hydra_task_overrides() -> list[str]:
    """The command line's overrides of the running Hydra job ([] outside Hydra)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        return list(HydraConfig.get().overrides.task)
    except (ValueError, ImportError):
        return []


__all__ = [
    "CSVLogger",
    "TensorBoardLogger",
    "WandbLogger",
    "MultiLogger",
    "RunLoggers",
    "config_hash",
    "group_name",
    "run_tags",
    "env_action_names",
    "action_shares",
    "flat_hparams",
    "hydra_task_overrides",
    "LEADING_COLUMNS",
    "ACTION_METRIC",
]
