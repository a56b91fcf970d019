"""The repository speaks of the project, not of the work steps that built it: no tracked text
file names an internal step number ("stop" or "stops" and a number, with a space, a dash or
nothing between). A figure names the commit that produced it instead, which a reader can check out."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Docs, configs, every package, the entry points, the tests and the README.
CHECKED = [
    "README.md",
    "docs",
    "conf",
    "report_protocol",
    "rag",
    "agents_llm",
    "envs",
    "algos",
    "report_app",
    "experiments",
    "tests",
]
STEP_NUMBER = re.compile(r"\bstops?[ -]?\d+", re.IGNORECASE)


def tracked_files() -> list[Path]:
    """The files git tracks under CHECKED; without git (an unpacked archive), every file there."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--", *CHECKED], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        found = [ROOT / "README.md"] + [p for d in CHECKED[1:] for p in (ROOT / d).rglob("*") if p.is_file()]
        return [p for p in found if "__pycache__" not in p.parts]
    return [ROOT / name for name in out.decode().split("\0") if name]


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary file (a NUL byte, or not UTF-8) or one not on disk."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def step_numbers(text: str) -> list[tuple[int, str]]:
    return [(no, line.strip()) for no, line in enumerate(text.splitlines(), 1) if STEP_NUMBER.search(line)]


def test_the_pattern_finds_step_numbers_in_every_spelling_and_nothing_else():
    found = step_numbers(
        "Stop 44 fixed it\nat stop-41's code\nstop42-g24-before/\nstops 42-43\nnonstop 5\nstop_words 3\ndo not stop."
    )
    assert [no for no, _ in found] == [1, 2, 3, 4]


def test_no_tracked_text_file_names_an_internal_step_number():
    files = tracked_files()
    assert any(p.name == "README.md" for p in files) and any(p.suffix == ".py" for p in files)
    offending = []
    for path in files:
        text = text_of(path) if path.resolve() != Path(__file__).resolve() else None  # its own planted samples
        if text is None:
            continue
        offending += [f"{path.relative_to(ROOT)}:{no}: {line[:120]}" for no, line in step_numbers(text)]
    assert not offending, (
        f"{len(offending)} line(s) name an internal work step; describe the change or name its commit instead:\n"
        + "\n".join(offending)
    )
