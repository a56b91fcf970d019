"""Dependencies point one way: rag <- agents_llm <- envs <- algos <- report_app <- experiments.

`report_protocol` (the action table, round plan, vocabulary and feedback every layer
speaks) is the leaf below them all: every layer may import it, and it imports the
standard library only. Every arrow is checked on the source (each absolute import of a
project package) and on what an import really loads (a fresh interpreter importing
every module of a lower layer must not pull in a higher one). `report_app` (the
report-writing application) drives every layer below it; `experiments` (the entry points)
may import every package but no test code (`tests`). There is no exception: `EXCEPTIONS`
stays empty unless an arrow must point the other way, with its reason. Fixed policies speak
the protocol's plain data: no regular expression over model text in `algos/handcrafted*.py`.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("report_protocol", "rag", "agents_llm", "envs", "algos", "report_app", "experiments")
PROJECT = PACKAGES + ("tests",)  # top-level names an import is checked against
# What each package may import (itself included).
ALLOWED = {
    "report_protocol": {"report_protocol"},
    "rag": {"rag", "report_protocol"},
    "agents_llm": {"agents_llm", "rag", "report_protocol"},
    "envs": {"envs", "agents_llm", "rag", "report_protocol"},
    # algos sees the env contract (envs/__init__.py), the report protocol and nothing of the LLM side.
    "algos": {"algos", "envs", "report_protocol"},
    # the report-writing application runs the report env with a policy: every layer below it
    "report_app": {"report_app", "algos", "envs", "agents_llm", "rag", "report_protocol"},
    # the entry points (scripts, importing each other as experiments.<module>): every package, no test code
    "experiments": {"experiments", "report_app", "algos", "envs", "agents_llm", "rag", "report_protocol"},
}
# (importing module, imported package): why the arrow may point the other way. None today.
EXCEPTIONS: dict[tuple[str, str], str] = {}
# Modules of `envs` that algos may import: only the registry and contract.
ALGOS_MAY_IMPORT_FROM_ENVS = {"envs"}


def _modules(package: str, root: Path = ROOT):
    for path in sorted((root / package).rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _absolute_imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
    return found


def _layer_violations(root: Path = ROOT) -> list[str]:
    """Every absolute import under `root` that points against the layers."""
    violations = []
    for package in PACKAGES:
        for module, path in _modules(package, root):
            for name, line in _absolute_imports(path):
                top = name.split(".")[0]
                if top not in PROJECT or top in ALLOWED[package]:
                    if package == "algos" and top == "envs" and name not in ALGOS_MAY_IMPORT_FROM_ENVS:
                        violations.append(
                            f"{path.relative_to(root)}:{line} imports {name}: algos may use only "
                            f"the env contract ({sorted(ALGOS_MAY_IMPORT_FROM_ENVS)})"
                        )
                    continue
                if (module, top) in EXCEPTIONS:
                    continue
                violations.append(
                    f"{path.relative_to(root)}:{line} imports {name}: {package} may import only "
                    f"{sorted(ALLOWED[package])} (add a justified entry to EXCEPTIONS in "
                    f"tests/test_layering.py if this arrow must exist)"
                )
    return violations


def test_every_source_import_follows_the_layers():
    violations = _layer_violations()
    assert not violations, "layering broken:\n" + "\n".join(violations)


@pytest.mark.parametrize(
    "module,source",
    [
        ("experiments/bench_x.py", "from tests.batching_server import BatchingServer\n"),
        ("agents_llm/api.py", "def run():\n    import algos\n"),  # inside a function counts too
        ("algos/x.py", "from report_app import write_report\n"),
        ("report_app/x.py", "import experiments.train\n"),
        ("algos/training/y.py", "from envs.report.infos import call_failures\n"),  # beyond the env contract
    ],
)
def test_the_layer_check_sees_a_planted_violation(tmp_path, module, source):
    """The check is not blind: an import planted against the layers, in any package, is reported."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / module).write_text(source, encoding="utf-8")
    [violation] = _layer_violations(tmp_path)
    assert violation.startswith(f"{module}:")


def test_exceptions_are_still_needed():
    """An exception nobody uses any more is removed, so the list stays the truth."""
    used = set()
    for package in PACKAGES:
        for module, path in _modules(package):
            for name, _ in _absolute_imports(path):
                used.add((module, name.split(".")[0]))
    stale = sorted(set(EXCEPTIONS) - used)
    assert not stale, f"remove these entries from EXCEPTIONS, nothing imports that way now: {stale}"


_PROBE = """
import importlib, json, sys
loaded = {}
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))
"""


def test_the_report_protocol_imports_the_standard_library_only():
    """The leaf every layer imports stays a leaf: no third-party package, no project package but itself."""
    outside = []
    for _, path in _modules("report_protocol"):
        for name, line in _absolute_imports(path):
            top = name.split(".")[0]
            if top != "report_protocol" and top not in sys.stdlib_module_names and top != "__future__":
                outside.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not outside, "report_protocol must import only the standard library:\n" + "\n".join(outside)


TEXT_PATTERN_MODULES = {"re", "regex", "fnmatch"}


def _text_pattern_uses(path: Path) -> list[str]:
    """Imports of a pattern-matching module, and calls of string parsing helpers on text."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"{path.name}:{node.lineno} import {a.name}"
                for a in node.names
                if a.name.split(".")[0] in TEXT_PATTERN_MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in TEXT_PATTERN_MODULES:
            found.append(f"{path.name}:{node.lineno} from {node.module} import ...")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"splitlines", "finditer", "findall", "fullmatch"}
        ):
            found.append(f"{path.name}:{node.lineno} .{node.func.attr}(...)")
    return found


def test_handcrafted_policy_reads_structured_feedback_not_text():
    """The engine parses the model's output (agents_llm.engine.feedback); the pipeline decides from fields."""
    files = sorted((ROOT / "algos").glob("handcrafted*.py"))
    assert len(files) >= 4, files  # the phase machine, its scheduler, feedback handling and phases
    uses = [u for f in files for u in _text_pattern_uses(f)]
    assert not uses, "algos/handcrafted*.py parse text; read report_protocol.RoundFeedback instead:\n" + "\n".join(uses)


def test_the_text_pattern_check_sees_a_regex():
    """The check above is not blind: it flags the engine's own parser."""
    assert any("import re" in u for u in _text_pattern_uses(ROOT / "agents_llm" / "engine" / "feedback.py"))


@pytest.mark.parametrize(
    "package,forbidden",
    [
        ("report_protocol", {"rag", "agents_llm", "envs", "algos", "experiments"}),
        ("rag", {"agents_llm", "envs", "algos", "experiments"}),
        ("algos", {"agents_llm", "rag", "report_app", "experiments"}),
        ("report_app", {"experiments", "tests"}),
    ],
)
def test_importing_a_layer_loads_nothing_above_it(package, forbidden):
    modules = [m for m, _ in _modules(package)]
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(modules)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert not loaded & forbidden, f"importing every module of {package} loaded {sorted(loaded & forbidden)}"


def test_importing_envs_registry_loads_no_llm_code():
    out = subprocess.run(
        [sys.executable, "-c", "import envs, sys; print('agents_llm' in sys.modules)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False", "`import envs` must stay lazy: the report env is registered by import path"
