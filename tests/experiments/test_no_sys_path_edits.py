"""No script under experiments/ edits the import path: the project is installed (`pip install -e .`)
and a script imports its siblings as `experiments.<module>`, so that what a script imports does not
depend on the folder it sits in or the one it was started from."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def sys_path_uses(source: str, name: str = "<source>") -> list[int]:
    """Lines that touch `sys.path`, in code or in a command string run by a child interpreter."""
    lines = []
    for node in ast.walk(ast.parse(source, filename=name)):
        if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name):
            if node.value.id == "sys":
                lines.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "sys.path" in node.value:
            lines.append(node.lineno)
    return sorted(set(lines))


def test_the_check_sees_every_form_of_edit():
    assert sys_path_uses("import sys\nsys.path.insert(0, 'x')\n") == [2]
    assert sys_path_uses("import sys\nsys.path[:0] = ['x']\n") == [2]
    assert sys_path_uses("cmd = ['python', '-c', \"import sys; sys.path[:0]=['experiments']\"]\n") == [1]
    assert sys_path_uses("import os\nos.path.join('a', 'b')\n") == []


def test_no_file_under_experiments_edits_sys_path():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "experiments").rglob("*.py"))
        for line in sys_path_uses(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not found, "sys.path edited (import experiments.<module> instead): " + ", ".join(found)
