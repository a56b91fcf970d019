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

W&B, as a researcher reads it:

* the x axis of every ``train/*`` and ``eval/*`` chart is ``episode`` (``define_metric``);
  ``t_env`` (env rounds) is logged with each row, so it can be picked as the x axis too;
* the group is readable, ``<algo>-<env>[-<key overrides>]`` (seed and run plumbing left
  out, so the seeds of one configuration sit together); the config hash is a tag
  (``cfg-<hash>``), so two configurations that read alike are still told apart;
* ``job_type`` is ``train`` (experiments/train.py) or ``eval`` (experiments/evaluate.py);
* per-agent action distributions are also logged by action *name*: a table
  ``<kind>/actions`` (agent, action, share) and one bar chart per agent,
  ``<kind>/actions/<agent>``.

Offline runs (the default) land in ``<run dir>/wandb/offline-run-*``, complete on disk
once ``close()`` returns (in-process too), one folder per segment of a resumed run;
upload them later with ``wandb sync <run dir>/wandb/offline-run-*``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Optional, Sequence, cast

from report_protocol.run_labels import env_label, team_label  # one naming of the team for runs, W&B and the viewer

LEADING_COLUMNS = ("episode", "t_env")  # always the first CSV columns, in this order
ACTION_METRIC = re.compile(r"^act/(?P<agent>.+)/(?P<action>\d+)$")  # as rollout.action_distribution writes them


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


def action_shares(metrics: Mapping[str, Any], kind: str = "") -> dict[str, dict[int, float]]:
    """{agent: {action index: share}} from ``[<kind>/]act/<agent>/<index>`` metrics."""
    prefix = f"{kind}/" if kind else ""
    out: dict[str, dict[int, float]] = {}
    for key, value in metrics.items():
        if not key.startswith(prefix):
            continue
        m = ACTION_METRIC.match(key[len(prefix) :])
        if m:
            out.setdefault(m["agent"], {})[int(m["action"])] = float(value)
    return out


WandbMode = Literal["online", "offline", "disabled", "shared"]  # what wandb.init takes as mode


class WandbLogger:
    """One W&B run; offline unless ``mode="online"``. See the module docstring."""

    def __init__(
        self,
        run_dir: str | os.PathLike,
        *,
        project: str,
        group: str,
        name: str,
        config: dict[str, Any],
        mode: WandbMode = "offline",
        entity: Optional[str] = None,
        run_id: Optional[str] = None,
        tags: Iterable[str] = (),
        job_type: str = "train",
        action_names: Optional[Sequence[str]] = None,
        tables_every: int = 1,
    ):
        # Silent: W&B's own console lines would land in the middle of a progress bar.
        os.environ.setdefault("WANDB_SILENT", "true")
        if mode == "offline":
            os.environ["WANDB_MODE"] = "offline"  # never reach for the network
        import wandb

        self._wandb = wandb
        self.action_names = list(action_names) if action_names is not None else None
        # Each table is a file (an artifact once synced): the action tables of a kind are
        # logged at most every `tables_every` episodes (and on its first row).
        self.tables_every = max(1, int(tables_every))
        self._last_tables: dict[str, int] = {}
        self.run = wandb.init(
            project=project,
            entity=entity,
            group=group,
            name=name,
            config=config,
            tags=sorted(set(tags)),
            job_type=job_type,
            dir=str(run_dir),
            mode=mode,
            id=run_id,
            resume="allow",
            reinit="finish_previous",
            settings=wandb.Settings(init_timeout=120, console="off", x_disable_stats=True),
        )
        self.run_id = self.run.id
        # A resumed run replays the episodes between its checkpoint and the interruption, which
        # W&B already holds. It can neither delete nor rewind history offline (rewind,
        # `resume_from="<id>?_step=N"`, is a server feature in preview that needs monotonic
        # `_step`s, where these rows plot against `episode`), so the rows it has are not sent
        # again: {kind: last episode W&B holds}, read from the run's earlier offline files
        # (what `wandb sync` uploads), or online from the run's restored summary.
        self.skip_through: dict[str, int] = {}
        if run_id is not None:
            self.skip_through = self._held_episodes(run_dir, mode)
        # Episodes (and env rounds) as the x axis, not W&B's per-call `_step`: train and
        # eval rows are separate calls, so `_step` would interleave them.
        self.run.define_metric("episode")
        self.run.define_metric("t_env")
        for kind in ("train", "eval"):
            self.run.define_metric(f"{kind}/*", step_metric="episode")

    def _held_episodes(self, run_dir: str | os.PathLike, mode: WandbMode) -> dict[str, int]:
        if mode == "offline":
            from .wandb_history import logged_episodes

            current = Path(self.run.dir).parent if self.run.dir else None  # this segment's own folder
            return logged_episodes(run_dir, self.run.id, exclude=current)
        # Online the server's summary is what it holds: the last row's episode, for every kind
        # (an eval row of that episode lost to the interruption stays lost: it is one row).
        episode = self.run.summary.get("episode")
        if isinstance(episode, (int, float)) and not isinstance(episode, bool):
            return {"train": int(episode), "eval": int(episode)}
        return {}

    def _action_name(self, index: int) -> str:
        if self.action_names is not None and 0 <= index < len(self.action_names):
            return self.action_names[index]
        return str(index)

    def log(self, metrics: Mapping[str, Any], step: int) -> None:
        kinds = {key.split("/", 1)[0] for key in metrics if "/" in key}
        if kinds and all(step <= self.skip_through.get(kind, -1) for kind in kinds):
            return  # a replayed episode W&B already holds (see __init__)
        row: dict[str, Any] = {**metrics, "episode": step}
        t_env = next((v for k, v in metrics.items() if k.endswith("t_env")), None)
        if t_env is not None:
            row["t_env"] = t_env
        for kind in ("train", "eval"):
            last = self._last_tables.get(kind)
            if last is None or step - last >= self.tables_every:
                tables = self._action_tables(kind, metrics)
                if tables:
                    row.update(tables)
                    self._last_tables[kind] = step
        self.run.log(row)

    def _action_tables(self, kind: str, metrics: Mapping[str, Any]) -> dict[str, Any]:
        shares = action_shares(metrics, kind)
        if not shares:
            return {}
        wandb = self._wandb
        columns = ["agent", "action", "share"]
        rows = [
            [agent, self._action_name(a), share]
            for agent, by_action in shares.items()
            for a, share in sorted(by_action.items())
        ]
        out: dict[str, Any] = {f"{kind}/actions": wandb.Table(columns=columns, data=rows)}
        for agent, by_action in shares.items():
            table = wandb.Table(
                columns=["action", "share"], data=[[self._action_name(a), s] for a, s in sorted(by_action.items())]
            )
            out[f"{kind}/actions/{agent}"] = wandb.plot.bar(
                table, "action", "share", title=f"{kind} actions of {agent}"
            )
        return out

    def close(self) -> None:
        """Finish the run; its offline files are complete on disk when this returns."""
        self.run.finish()
        # finish() only asks W&B's service process to close the run's stream and returns
        # before that process has written the transaction log (measured: a header-only
        # `run-*.wandb` right after finish() in 1 of 4 in-process runs). At process exit
        # W&B's atexit hook waits for it, but not in-process (a sweep's seeds, a notebook,
        # a test reading the file) nor where atexit hooks do not run (multiprocessing
        # workers). teardown() waits for the service to write everything and exit; the
        # next run starts a new one. Only when no other W&B run is active in the process.
        if self._wandb.run is None:
            self._wandb.teardown()


class MultiLogger:
    def __init__(self, loggers: list):
        self.loggers = loggers

    def log(self, metrics: Mapping[str, Any], step: int) -> None:
        for lg in self.loggers:
            lg.log(metrics, step)

    def close(self) -> None:
        for lg in self.loggers:
            lg.close()


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
]
