"""Every bad setting is one line and exit 2, before anything is written.

`refuse_bad_settings(argv, script)` runs in each entry point's ``__main__`` before Hydra:
it composes the config the command line asks for (a type error, an unknown key or group
is then one line naming the key, not Hydra's block) and checks what Hydra cannot see:
ranges, paths (a missing resume folder would be created as the run folder), files given
for folders, unknown names, empty lists. `settings_problem(script, args)` is the same
check in process, for tests. A sweep (``-m``) or a Hydra flag (``--cfg``) is left to
Hydra and to the callbacks (`run_config.RunConfigGuard`), which check each job.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, List, Optional

from omegaconf import DictConfig, OmegaConf

CONFIG_NAMES = {"train.py": "config", "evaluate.py": "config", "write_report.py": "write_report"}
CONF = Path(__file__).resolve().parents[1] / "conf"
MAX_ROUNDS = 10_000  # train.max_rounds' safety cap: no episode runs more rounds


class SettingError(ValueError):
    """A setting that cannot run; the message is one line naming the key."""


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def compose(script: str, args: List[str]) -> DictConfig:
    """The config `script` would run with these overrides; SettingError naming the key otherwise."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            return hydra_compose(config_name=CONFIG_NAMES[script], overrides=list(args))
    except Exception as e:  # Hydra's and OmegaConf's errors: several lines; the first names the override
        text = str(e) + ("\n" + str(e.__cause__) if e.__cause__ is not None else "")
        text = text.split("Config search path:")[0]  # Hydra's list of where it looked: not the problem
        lines = list(dict.fromkeys(ln.strip() for ln in text.splitlines() if ln.strip()))
        key = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("full_key:")), None)
        detail = "; ".join(ln for ln in lines if not ln.startswith(("full_key:", "object_type", "reference_type")))
        raise SettingError(_one_line(f"{key}: {detail}" if key else detail)) from None
    finally:
        GlobalHydra.instance().clear()


def _int_in(cfg: Any, key: str, low: int, high: Optional[int] = None, *, optional: bool = False) -> None:
    value = OmegaConf.select(cfg, key)
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise SettingError(f"{key} must be an integer {bound}{' or null' if optional else ''}, got {value!r}")


def _existing(key: str, value: Any, *, kind: str) -> Path:
    path = Path(str(value)).expanduser()
    if not path.exists():
        raise SettingError(f"{key}: {path} does not exist; give an existing {kind}")
    return path


def _folder_or_new(key: str, value: Any) -> None:
    """A folder the run writes into: absent (it is made) or a folder, never a file."""
    path = Path(str(value)).expanduser()
    if path.exists() and not path.is_dir():
        raise SettingError(f"{key}: {path} is a file, not a folder")
    parent = next((p for p in path.absolute().parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise SettingError(f"{key}: {parent} is a file, not a folder")


def _checkpoint(key: str, value: Any) -> None:
    from algos.training import checkpoint as ckpt

    _existing(key, value, kind="checkpoint file or run folder")
    try:
        ckpt.resolve_checkpoint(value)
    except FileNotFoundError as e:
        raise SettingError(f"{key}: {_one_line(str(e))}") from None


def _plugins(cfg: Any) -> None:
    from algos.plugins import _is_file_spec

    for spec in OmegaConf.select(cfg, "plugins") or []:
        if _is_file_spec(str(spec)) and not Path(str(spec)).expanduser().is_file():
            raise SettingError(f"plugins: {spec} is not a file; give a module name or the path to a .py file")


def _team(key: str, team: Any) -> None:
    from agents_llm.roles import ROLES

    if team is None:
        return
    entries = list(team)
    if not entries:
        raise SettingError(f"{key} is empty: give at least one role, e.g. [LeadArchitect, Researcher]")
    for entry in entries:
        if ":" not in str(entry) and str(entry) not in ROLES:
            raise SettingError(f"{key}: unknown role {str(entry)!r}; known roles: {', '.join(sorted(ROLES))}")


def check_train_or_evaluate(cfg: DictConfig, script: str) -> None:
    from algos.training.runners import check_rollout
    from experiments.run_config import ConfigValueError, validate_run_config

    _plugins(cfg)
    if cfg.get("resume"):
        _checkpoint("resume", cfg.resume)
        return  # the run's config is its checkpoint's: train.py checks it as resumed
    try:
        validate_run_config(cfg)
        check_rollout(cfg.rollout)
    except (ConfigValueError, ValueError) as e:
        raise SettingError(_one_line(str(e))) from None
    for key in ("checkpoint", "init"):
        if cfg.get(key):
            _checkpoint(key, cfg[key])
    if cfg.eval.out is not None and Path(str(cfg.eval.out)).expanduser().is_dir():
        raise SettingError(f"eval.out: {cfg.eval.out} is a folder; give the metrics file's path (e.g. metrics.json)")
    if cfg.eval.compare:
        from experiments.compare_policies import parse_entry

        for entry in cfg.eval.compare:
            try:
                parse_entry(entry)
            except (KeyError, ValueError) as e:
                raise SettingError(_one_line(f"eval.compare: {e}".replace('"', ""))) from None
    if "team" in cfg.env:
        _team("env.team", cfg.env.team)


def check_write_report(cfg: DictConfig) -> None:
    _plugins(cfg)
    _int_in(cfg, "seed", 0, 2**32 - 1)
    _int_in(cfg, "max_rounds", 1, MAX_ROUNDS, optional=True)
    _team("team", cfg.team)
    _folder_or_new("output_root", cfg.output_root)
    if cfg.data_root is not None:
        _folder_or_new("data_root", cfg.data_root)
    if cfg.docs is not None:
        _existing("docs", cfg.docs, kind="folder or file of documents")
    if cfg.checkpoint is not None:
        _checkpoint("checkpoint", cfg.checkpoint)
    from agents_llm.opening import wants_opening

    try:
        wants_opening(cfg.opening, "")
    except ValueError as e:
        raise SettingError(str(e)) from None


def settings_problem(script: str, args: List[str]) -> Optional[str]:
    """The one-line reason the command line `script args` cannot run, or None."""
    try:
        cfg = compose(script, args)
        if script == "write_report.py":
            check_write_report(cfg)
        else:
            check_train_or_evaluate(cfg, script)
    except SettingError as e:
        return str(e)
    return None


def preload_or_refuse(argv: List[str], script: str) -> None:
    """Import the command line's plugins (`algos.plugins.preload_plugins`); a missing one is one line, exit 2."""
    from algos.plugins import preload_plugins

    try:
        preload_plugins(argv)
    except (ImportError, FileNotFoundError, SyntaxError) as e:
        print(f"{script}: plugins: {_one_line(str(e))}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None


def refuse_bad_settings(argv: List[str], script: str) -> None:
    """Exit 2 with one line when a single run's command line cannot run (before Hydra writes)."""
    args = list(argv[1:])
    if any(a.startswith("-") for a in args):
        return  # -m sweeps, --cfg, --help: Hydra's own, checked per job by the callbacks
    problem = settings_problem(script, args)
    if problem:
        from agents_llm.redaction import redact_text

        print(f"{script}: {redact_text(problem)}", file=sys.stderr, flush=True)
        raise SystemExit(2)
