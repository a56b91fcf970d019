"""One W&B run (offline by default).

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

import os
import re
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Optional, Sequence

ACTION_METRIC = re.compile(r"^act/(?P<agent>.+)/(?P<action>\d+)$")  # as rollout.action_distribution writes them


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
