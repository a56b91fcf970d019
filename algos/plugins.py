"""Loading user plugins: modules that register algorithms (or envs, mixers) on import.

A plugin is an ordinary Python module, named either as an importable dotted module
(``my_pkg.my_algo``, found on ``PYTHONPATH`` or installed) or as a path to a ``.py``
file (``path/to/my_algo.py``). ``experiments/train.py plugins=[my_pkg.my_algo]``
imports it *before* Hydra composes the config, so ``algo=<name>`` can name the
algorithm it registered.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterable


def load_plugin(spec: str) -> ModuleType:
    spec = str(spec).strip()
    if spec.endswith(".py") or "/" in spec or "\\" in spec:
        path = Path(spec).expanduser().resolve()
        if not path.is_file():
            raise FileNotFoundError(f"plugin file not found: {path}")
        mod_name = f"_qmix_plugin_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
        if mod_name in sys.modules:
            return sys.modules[mod_name]
        module_spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[mod_name] = module
        try:
            module_spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(mod_name, None)
            raise
        return module
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as e:
        if e.name and spec.startswith(e.name):
            raise ModuleNotFoundError(
                f"plugin module {spec!r} not found: put its folder on PYTHONPATH, install it, "
                "or give the path to its .py file"
            ) from e
        raise


def load_plugins(specs: Iterable[str] | None) -> list[ModuleType]:
    return [load_plugin(s) for s in (specs or [])]
