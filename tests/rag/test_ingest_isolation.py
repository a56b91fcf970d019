"""Ingestion isolates each file (a link loop, a name that is not UTF-8, a newline in a
name), exits non-zero when nothing was ingested, and two processes ingesting into one
store at once lose nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rag import ingest_paths, open_store
from rag.ingest import display_path

from .conftest import make_rag_cfg

ROOT = Path(__file__).resolve().parents[2]


def _good(folder: Path, name: str = "good.md", extra: str = "") -> Path:
    path = folder / name
    path.write_text(f"# Sorting networks\n\nBatcher's odd-even merge sort builds a sorting network. {extra}\n")
    return path


def test_a_link_loop_and_a_non_utf8_name_skip_only_their_file(store, docs_dir):
    _good(docs_dir)
    (docs_dir / "loop_a.md").symlink_to("loop_b.md")
    (docs_dir / "loop_b.md").symlink_to("loop_a.md")
    (docs_dir / "self.md").symlink_to("self.md")
    bad = os.fsdecode(os.path.join(os.fsencode(docs_dir), b"caf\xe9-latin1.md"))
    Path(bad).write_text("# Latin-1 name\n\nA file whose name is not UTF-8 but whose text is fine.\n")
    _good(docs_dir, "second.md", "A second valid file beside the bad ones.")

    report = ingest_paths(store, [docs_dir])

    assert sorted(Path(p).name for p in report.ingested) == ["good.md", "second.md"]
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert reasons["loop_a.md"].startswith("symbolic link loop") and reasons["self.md"].startswith("symbolic link loop")
    assert reasons["caf\\xe9-latin1.md"].startswith("file name is not valid UTF-8")
    assert len(store.sources) == 2 and store.consistency_problems() == []


def test_names_are_reported_escaped_and_a_newline_name_is_still_ingested(store, docs_dir):
    _good(docs_dir, "two\nlines.md")
    (docs_dir / "tab\there.xyz").write_text("unsupported")
    report = ingest_paths(store, [docs_dir])
    assert [Path(p).name for p in report.ingested] == ["two\\nlines.md"]
    rendered = report.render()
    assert "tab\\there.xyz" in rendered
    for line in rendered.splitlines():  # each entry on its own line: no name breaks one
        assert line.startswith(("Ingestion", "Chunks", "  "))
    assert display_path("a\x1b[31mred\x7f.md") == "a\\x1b[31mred\\x7f.md"


def _ingest_cli(tmp_path: Path, docs: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "experiments" / "ingest.py"),
            f"docs={docs}",
            "rag=hashing",
            f"rag.store.path={tmp_path / 'store'}",
            f"hydra.run.dir={tmp_path / 'run'}",
            "rag.ingest.progress=false",
            *extra,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_ingest_exits_non_zero_when_nothing_was_ingested(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    res = _ingest_cli(tmp_path, empty)
    assert res.returncode == 1 and f"nothing ingested from {empty}: no file found" in res.stderr
    (empty / "notes.xyz").write_text("unsupported")
    res = _ingest_cli(tmp_path, empty)
    assert res.returncode == 1 and "all 1 file(s) skipped" in res.stderr
    _good(empty)
    res = _ingest_cli(tmp_path, empty)
    assert res.returncode == 0, res.stderr[-2000:]
    res = _ingest_cli(tmp_path, empty)  # unchanged since: nothing new, still a success
    assert res.returncode == 0 and "1 unchanged" in res.stdout


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[4])
    from tests.rag.conftest import make_rag_cfg
    from rag import ingest_paths, open_store
    go = Path(sys.argv[3])
    while not go.exists():
        time.sleep(0.01)
    store = open_store(make_rag_cfg(Path(sys.argv[1])))
    report = ingest_paths(store, [sys.argv[2]])
    print(len(report.ingested), len(report.skipped))
    """
)


@pytest.mark.parametrize("trial", range(2))
def test_two_processes_ingesting_into_one_store_at_once_lose_nothing(tmp_path, trial):
    """Same texts under different names in two folders: each chunk's locations must list
    both files (the lost update before the write lock)."""
    n = 60
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
        for i in range(n):
            _good(folder, f"{folder.name}{i:03d}.md", f"Distinct fact number {i} of trial {trial}.")
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path / "store"), str(folder), str(go), str(ROOT)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for folder in folders
    ]
    go.touch()  # both start at once
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        assert out.split() == [str(n), "0"]
    store = open_store(make_rag_cfg(tmp_path / "store"))
    assert len(store.sources) == 2 * n
    assert store.consistency_problems() == []
    for record in store.sources.values():
        assert record.chunk_ids  # every file keeps its chunks
