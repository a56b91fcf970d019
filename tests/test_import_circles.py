"""No import circle inside a package: its modules import each other one way only.

`tests/test_layering.py` keeps the arrows between packages pointing down; this test keeps them
pointing one way inside each package too. The graph has one node per module (a package is its
`__init__`) and an edge for every import a module makes of another module of its package:
module-level, inside a function and under `if TYPE_CHECKING:` alike (each one couples the two
modules, whenever it runs), relative imports resolved. `from pkg import name` points at the
module `pkg.name` when there is one, else at `pkg` (its `__init__`, where the name is defined or
re-exported); an import of `pkg.sub.mod` also points at `pkg.sub`, because Python runs a package's
`__init__` before any module under it (so an `__init__` that re-exports eagerly closes circles; a
lazy one, PEP 562's module `__getattr__`, does not). A strongly connected component of more than
one module is a circle.

What several layers share goes into a module below all of them (in agents_llm, the text
measures live in `agents_llm.text`, which imports nothing of agents_llm above it); a function
that needs an object of a higher module takes it as an argument, or lives in that module.
A room below (`FLOORS`) imports nothing of its package outside itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("report_protocol", "rag", "agents_llm", "envs", "algos", "report_app", "experiments")
# A circle that must stay, as the sorted tuple of its modules, with the reason. None today.
ALLOWED_CIRCLES: dict[tuple[str, ...], str] = {}
# Rooms below their users: what each may import of its own package (nothing but itself).
FLOORS = {"agents_llm.text": "agents_llm"}


def _modules(package: str, root: Path) -> dict[str, tuple[Path, bool]]:
    """module name -> (its file, whether it is a package's __init__)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: dict) -> list[str]:
    """The modules of `known` that one import statement of `module` names."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        here = module.split(".") if is_package else module.split(".")[:-1]
        base = (
            ".".join(here[: len(here) - node.level + 1] + [node.module or ""]).strip(".") if node.level else node.module
        )
        base = base or ""
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    out = []
    for name in names:
        while name and name not in known:  # `import pkg.mod.Class`-like names: the nearest module
            name = name.rpartition(".")[0]
        if name:
            out.append(name)
    return out


def import_graph(package: str, root: Path = ROOT) -> nx.DiGraph:
    """The modules of `package` and their imports of each other; an edge's `at` is 'file:line'."""
    known = _modules(package, root)
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for module, (path, is_package) in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(node, module, is_package, known):
                    # Importing pkg.sub.mod runs pkg/sub/__init__ first: an edge to each package
                    # above the target too, but not to one holding the importer (already running).
                    parts = target.split(".")
                    for k in range(len(parts), 0, -1):
                        step = ".".join(parts[:k])
                        above = k < len(parts) and module.startswith(step + ".")
                        if step == module or above or graph.has_edge(module, step):
                            continue
                        graph.add_edge(module, step, at=f"{path.relative_to(root)}:{node.lineno}")
    return graph


def circles(package: str, root: Path = ROOT) -> dict[tuple[str, ...], list[str]]:
    """Each circle (its modules, sorted) -> one cycle through it, as 'file:line imports module' steps."""
    graph = import_graph(package, root)
    found = {}
    for component in nx.strongly_connected_components(graph):
        if len(component) > 1:
            cycle = nx.find_cycle(graph.subgraph(component))
            found[tuple(sorted(component))] = [f"{graph.edges[a, b]['at']} imports {b}" for a, b in cycle]
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle_inside_a_package(package):
    found = {c: steps for c, steps in circles(package).items() if c not in ALLOWED_CIRCLES}
    report = [
        f"{len(c)} modules import each other in a circle: {', '.join(c)}\n  for example: " + "\n    -> ".join(steps)
        for c, steps in found.items()
    ]
    assert not found, (
        f"import circles inside {package}:\n"
        + "\n".join(report)
        + "\nMove what they share into a module below all of them (text measures: agents_llm.text), or pass "
        "the object in as an argument, so that the imports point one way."
    )


def upward_imports(room: str, package: str, root: Path = ROOT) -> list[str]:
    """Each import of a module of `room` that reaches a module of `package` outside `room`."""
    graph = import_graph(package, root)
    inside = [m for m in graph if m == room or m.startswith(room + ".")]
    assert inside, f"{room} has no module under {root}"
    return [
        f"{graph.edges[m, t]['at']} imports {t}"
        for m in inside
        for t in graph.successors(m)
        if not (t == room or t.startswith(room + "."))
    ]


@pytest.mark.parametrize("room,package", sorted(FLOORS.items()))
def test_a_room_below_imports_nothing_above_it(room, package):
    """The text measures every layer shares import no layer of agents_llm, so no layer needs another for one."""
    found = upward_imports(room, package)
    assert not found, f"{room} must import nothing of {package} outside itself:\n" + "\n".join(found)


def test_the_room_check_sees_an_upward_import(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/room/__init__.py": "",
        "pkg/room/m.py": "def f():\n    from ..user import g\n",
        "pkg/user.py": "from .room.m import f\n",
    }
    for name, source in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source, encoding="utf-8")
    assert upward_imports("pkg.room", "pkg", tmp_path) == ["pkg/room/m.py:2 imports pkg.user"]


def test_allowed_circles_are_still_circles():
    """An allowed circle that no longer forms is removed, so the list stays the truth."""
    now = {c for package in PACKAGES for c in circles(package)}
    stale = sorted(set(ALLOWED_CIRCLES) - now)
    assert not stale, f"remove these entries from ALLOWED_CIRCLES, they are no circle now: {stale}"


@pytest.mark.parametrize(
    "files,circle",
    [
        # module level, relative
        ({"pkg/a.py": "from .b import x\n", "pkg/b.py": "from .a import y\n"}, ("pkg.a", "pkg.b")),
        # inside a function, absolute, through a subpackage
        (
            {
                "pkg/a.py": "def f():\n    import pkg.sub.c\n",
                "pkg/sub/__init__.py": "",
                "pkg/sub/c.py": "from ..a import f\n",
            },
            ("pkg.a", "pkg.sub.c"),
        ),
        # a name imported from a package is its __init__'s
        (
            {
                "pkg/__init__.py": "from .a import x\n",
                "pkg/a.py": "from .b import y\n",
                "pkg/b.py": "from pkg import x\n",
            },
            ("pkg", "pkg.a", "pkg.b"),
        ),
        # through a package's __init__: importing pkg.sub.tool runs pkg/sub/__init__, which imports back
        (
            {
                "pkg/low.py": "def f():\n    from .sub.tool import t\n",
                "pkg/sub/__init__.py": "from .user import u\n",
                "pkg/sub/tool.py": "t = 1\n",
                "pkg/sub/user.py": "from ..low import f\nu = 1\n",
            },
            ("pkg.low", "pkg.sub", "pkg.sub.user"),
        ),
        # under TYPE_CHECKING
        (
            {
                "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n",
                "pkg/b.py": "from . import a\n",
            },
            ("pkg.a", "pkg.b"),
        ),
    ],
)
def test_the_circle_check_sees_a_planted_circle(tmp_path, files, circle):
    """The check is not blind: a circle planted in any form of import is found and named."""
    for name, source in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source, encoding="utf-8")
    found = circles("pkg", tmp_path)
    assert list(found) == [circle]
    assert all(" imports pkg" in step for step in found[circle])


def test_a_one_way_package_has_no_circle(tmp_path):
    """Imports that point one way, a package re-exporting its modules included, form no circle."""
    files = {
        "pkg/__init__.py": "from .a import x\n",
        "pkg/a.py": "from .b import y\nfrom . import c\n",
        "pkg/b.py": "",
        "pkg/c.py": "import pkg.b\n",
    }
    for name, source in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source, encoding="utf-8")
    assert circles("pkg", tmp_path) == {}
