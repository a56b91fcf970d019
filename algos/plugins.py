"""Loading user plugins: modules that register algorithms (or envs, mixers) on import.

A plugin is an ordinary Python module, named either as an importable dotted module
(``my_pkg.my_algo``, found on ``PYTHONPATH`` or installed) or as a path to a ``.py``
file (``path/to/my_algo.py``). ``experiments/train.py plugins=[my_pkg.my_algo]``
imports it *before* Hydra composes the config, so ``algo=<name>`` can name the
algorithm it registered.

Checkpoints record each plugin as :func:`plugin_records` describes it (the spec, the
module's file and the ``sys.path`` entry it was found under). A checkpoint never imports
code: ``evaluate.py checkpoint=``, ``write_report.py checkpoint=`` and ``train.py
resume=`` only compare its records with the plugins given on the command line
(:func:`check_checkpoint_plugins`) and stop with one line naming a missing one; the user
passes ``plugins=[...]`` again. A checkpoint can come from anyone, and a record is a
module name and a path that an import would run.

:func:`check_learned_state` keeps a learner from silently losing its training: a
checkpoint of an algorithm that declares ``learns=True`` must hold something besides
the base class's RNG state.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable, Mapping, Optional


class PluginError(RuntimeError):
    """A checkpoint names a plugin that was not given, or a learner's state holds nothing learnt."""


def _is_file_spec(spec: str) -> bool:
    return spec.endswith(".py") or "/" in spec or "\\" in spec


def load_plugin(spec: str) -> ModuleType:
    spec = str(spec).strip()
    if _is_file_spec(spec):
        return _load_file(Path(spec).expanduser().resolve())
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as e:
        if e.name and spec.startswith(e.name):
            raise ModuleNotFoundError(
                f"plugin module {spec!r} not found: put its folder on PYTHONPATH, install it, "
                "or give the path to its .py file"
            ) from e
        raise


def _load_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise FileNotFoundError(f"plugin file not found: {path}")
    mod_name = f"_qmix_plugin_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    module_spec = importlib.util.spec_from_file_location(mod_name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"plugin file {path} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[mod_name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    return module


def load_plugins(specs: Iterable[str] | None) -> list[ModuleType]:
    return [load_plugin(s) for s in (specs or [])]


# -- recorded in checkpoints -------------------------------------------------------------
def preload_plugins(argv: list[str]) -> None:
    """Import ``plugins=[...]`` from a command line (``sys.argv``) before Hydra composes
    the config, so the algorithms they register can be selected with ``algo=<name>``."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    for arg in argv[1:]:
        if arg.lstrip("+~").startswith("plugins="):
            value = OverridesParser.create().parse_override(arg.lstrip("~")).value()
            if isinstance(value, str):
                value = [value]
            load_plugins([str(v) for v in value] if isinstance(value, list) else [])


def _search_root(module: ModuleType, dotted: str) -> Optional[str]:
    """The sys.path entry a dotted module was imported from: its file minus the package path."""
    file = getattr(module, "__file__", None)
    if not file:
        return None
    path = Path(file).resolve()
    depth = dotted.count(".") + (1 if path.name == "__init__.py" else 0)
    root = path.parent
    for _ in range(depth):
        root = root.parent
    return str(root)


def plugin_records(specs: Iterable[str] | None) -> list[dict[str, Optional[str]]]:
    """What a checkpoint keeps of each (already loaded) plugin: ``spec`` as given,
    ``module`` (its import name), ``file`` (absolute path) and ``sys_path`` (the folder to
    put on ``sys.path`` for a dotted spec)."""
    records = []
    for spec in specs or []:
        spec = str(spec).strip()
        module = load_plugin(spec)  # already imported: returns the module from sys.modules
        file = getattr(module, "__file__", None)
        records.append(
            {
                "spec": spec,
                "module": module.__name__,
                "file": str(Path(file).resolve()) if file else None,
                "sys_path": None if _is_file_spec(spec) else _search_root(module, spec),
            }
        )
    return records


def recorded_plugins(state: Mapping[str, Any]) -> list[dict[str, Optional[str]]]:
    """The plugins a checkpoint was trained with, as records (a checkpoint written before
    plugin records has the config's list of specs). Read only: nothing is imported."""
    records = state.get("plugins")
    if records is None:
        records = (state.get("config") or {}).get("plugins") or []
    out = []
    for record in records:
        if isinstance(record, Mapping):
            out.append({k: (None if record.get(k) is None else str(record.get(k))) for k in _RECORD_KEYS})
        else:
            out.append({"spec": str(record), "module": None, "file": None, "sys_path": None})
    return out


_RECORD_KEYS = ("spec", "module", "file", "sys_path")


def _resolved(path: Optional[str]) -> Optional[str]:
    return str(Path(path).expanduser().resolve()) if path else None


def _same_plugin(recorded: Mapping[str, Optional[str]], given: Mapping[str, Optional[str]]) -> bool:
    """A recorded plugin is the given one when the spec, the dotted module or the file agree."""
    spec = (recorded.get("spec") or "").strip()
    if spec and spec == given.get("spec"):
        return True
    if spec and not _is_file_spec(spec) and spec == given.get("module"):
        return True
    module = recorded.get("module")
    if module and not module.startswith("_qmix_plugin_") and module == given.get("module"):
        return True
    files = {_resolved(recorded.get("file")), _resolved(spec) if spec and _is_file_spec(spec) else None} - {None}
    return bool(files & {_resolved(given.get("file")), _resolved(given.get("spec"))})


def _printable(text: Any, limit: int = 200) -> str:
    """A recorded value for a one-line message: a foreign checkpoint may put anything there."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_checkpoint_plugins(state: Mapping[str, Any], given: Iterable[str] | None, *, source: str) -> None:
    """Refuse a checkpoint trained with a plugin that is not among ``given`` (the
    command line's ``plugins=[...]``, already imported by :func:`load_plugins`), with one
    line naming it; then the algorithm, env, judge and roles its config names are looked up
    in the registries (`envs.recorded_names`). Compares records only: nothing recorded in
    the checkpoint is imported, whatever it names (``source`` names the checkpoint in the
    message)."""
    given_records = plugin_records(given)
    for record in recorded_plugins(state):
        if any(_same_plugin(record, g) for g in given_records):
            continue
        spec = _printable(record.get("spec") or record.get("module") or "?")
        where = "".join(f", {k} {_printable(record[k])}" for k in ("file", "sys_path") if record.get(k))
        raise PluginError(
            f"{source} was trained with plugin {spec!r}{where}, which is not loaded: pass it explicitly, "
            f"plugins=[{spec}] (a checkpoint never imports the code it names)"
        )
    _check_recorded_names(state, given_records, source=source)


def _check_recorded_names(
    state: Mapping[str, Any], given_records: list[dict[str, Optional[str]]], *, source: str
) -> None:
    """The algorithm, env, judge and roles a checkpoint's config names: resolved against the
    registries (built in, or filled by the command line's plugins) only, never imported."""
    from algos.registry import available
    from envs import RecordedNameError, check_recorded_env

    config = state.get("config") or {}
    if not isinstance(config, Mapping):
        raise PluginError(f"{source} records no config (got {type(config).__name__})")
    algo = (config.get("algo") or {}).get("name") if isinstance(config.get("algo"), Mapping) else None
    if algo is not None and algo not in available():
        raise PluginError(
            f"{source} records algorithm {_printable(algo)!r}, which is not registered "
            f"(known: {', '.join(available())}); a plugin that registers it goes in plugins=[...]"
        )
    if "env" not in config:
        return
    modules = {str(v) for g in given_records for v in (g.get("module"), g.get("spec")) if v}
    try:
        check_recorded_env(config["env"], modules, source=source)
    except RecordedNameError as e:
        raise PluginError(str(e)) from None


# -- a learner's state -------------------------------------------------------------------
def _has_content(value: Any) -> bool:
    if isinstance(value, Mapping):
        return any(_has_content(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return len(value) > 0
    size = getattr(value, "numel", None) or getattr(value, "size", None)
    if callable(size):
        size = size()
    if isinstance(size, int):
        return size > 0
    return value is not None


def learned_keys(algo: Any, state: Mapping[str, Any]) -> list[str]:
    """Keys of ``state`` beyond what the base class saves (its RNG), with content."""
    from algos.base import Algorithm

    base = set(Algorithm.state_dict(algo))
    return [k for k, v in state.items() if k not in base and _has_content(v)]


def check_learned_state(algo: Any, state: Mapping[str, Any], *, when: str) -> None:
    """Refuse (``learns=True``) or warn about an algorithm whose state holds nothing learnt.

    ``when`` names the moment: "training" (checked before the first episode, so no
    training is lost), "saving", "resuming", "evaluating". A fixed policy
    (``learns=False``) with an empty state is fine, unless it overrides ``update``,
    which suggests it learns after all: then a warning."""
    from algos.base import Algorithm

    if learned_keys(algo, state):
        return
    name = type(algo).__name__
    fix = (
        f"{name}.state_dict() holds only {sorted(state) or 'nothing'}: implement state_dict() and "
        f"load_state_dict() to return and restore what it learns (see algos/README.md)"
    )
    if algo.capabilities.learns:
        if when == "training":
            raise PluginError(f"{name} declares learns=True, but its checkpoints would hold nothing it learnt: {fix}")
        raise PluginError(
            f"{when} {name}: the checkpoint holds nothing learnt ({fix}); a policy built from it would be untrained"
        )
    if type(algo).update is not Algorithm.update:
        warnings.warn(
            f"{name} declares learns=False but defines update(); its checkpoints hold nothing learnt: {fix}",
            stacklevel=2,
        )
