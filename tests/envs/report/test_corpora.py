"""The default corpus (python_stdlib, pydoc) and the shipped tasks over it.

The key-term test ingests the real corpus into a real Chroma store (hashing embedding,
BM25 and fusion as in every run) and retrieves each topic's key terms from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_llm.judges.reference import key_terms_of
from agents_llm.text.split import words
from envs.report import corpora
from envs.report.tasks import DEFAULT_CORPUS, Task, corpus_store, load_tasks, materialize_corpus
from tests.report_doubles import HASHING_RAG


@pytest.fixture(scope="module")
def stdlib_folder() -> Path:
    return materialize_corpus("python_stdlib")


def test_the_default_corpus_is_the_stdlib_documentation_rendered_by_pydoc(stdlib_folder):
    assert DEFAULT_CORPUS == "python_stdlib" and Task("t", "x").corpus == "python_stdlib"
    files = sorted(stdlib_folder.glob("*.md"))
    assert len(files) >= 0.9 * len(corpora.STDLIB_MODULES)  # optional C modules may be missing
    heapq = (stdlib_folder / "heapq.md").read_text(encoding="utf-8")
    assert heapq.startswith("# heapq: Heap queue algorithm")
    assert "## heapq.heappush(heap, item, /)" in heapq
    # Prose paragraphs are one line each (docstrings wrap at ~72 columns), code keeps its lines.
    assert "The interesting property of a heap is that a[0] is always its smallest element." in heapq.splitlines()[2]
    assert "heap = []            # creates an empty heap" in heapq.splitlines()
    # Only members defined by a class itself: no "inherited from" boilerplate.
    text = "\n".join(p.read_text(encoding="utf-8") for p in files)
    assert "methods inherited from" not in text.lower() and "data descriptors defined here" not in text.lower()
    assert 400_000 < len(text) < 1_500_000


def test_materializing_again_rewrites_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(corpora, "STDLIB_MODULES", ("heapq", "bisect", "graphlib"))  # a small corpus, same code
    folder = materialize_corpus("python_stdlib", root=tmp_path)
    assert sorted(p.name for p in folder.glob("*.md")) == ["bisect.md", "graphlib.md", "heapq.md"]
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert materialize_corpus("python_stdlib", root=tmp_path) == folder
    (folder / ".rendered").unlink()  # force a full render: unchanged files stay untouched
    (folder / "stale.md").write_text("from an older corpus version")
    materialize_corpus("python_stdlib", root=tmp_path)
    after = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert "stale.md" not in after
    assert {k: v for k, v in after.items() if k != ".rendered"} == {k: v for k, v in before.items() if k != ".rendered"}
    # A different module list is a different corpus: rendered again.
    monkeypatch.setattr(corpora, "STDLIB_MODULES", ("heapq",))
    assert [p.name for p in materialize_corpus("python_stdlib", root=tmp_path).glob("*.md")] == ["heapq.md"]


def test_a_render_writes_through_temporary_files_of_its_own_process(monkeypatch, tmp_path):
    """Two processes rendering one corpus at once (two test or benchmark workers on one cache)
    must not share a temporary file: one would replace the other's half-written file, or the
    stale-file sweep would delete it under the other's os.replace. Each process writes hidden
    files named after its pid, which the sweep and ingestion skip."""
    import os

    monkeypatch.setattr(corpora, "STDLIB_MODULES", ("heapq", "bisect"))
    moved = []
    real_replace = os.replace

    def replace(src, dst):
        moved.append(Path(src).name)
        return real_replace(src, dst)

    monkeypatch.setattr(corpora.os, "replace", replace)
    folder = materialize_corpus("python_stdlib", root=tmp_path)
    assert {"heapq.md", "bisect.md"} <= {p.name for p in folder.iterdir()}
    assert moved and all(n.startswith(".") and f".{os.getpid()}." in n for n in moved), moved
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")], "no temporary file is left"


def test_the_corpus_text_does_not_depend_on_the_process_that_renders_it(monkeypatch, tmp_path):
    """What this process imported or configured does not reach the corpus: a library that
    attaches a method to a stdlib class, a module function replaced, and the handlers made
    so far (logging.shutdown's default lists them) change pydoc's view, not the files."""
    import logging

    monkeypatch.setattr(corpora, "STDLIB_MODULES", ("logging",))
    clean = corpora.stdlib_documents_isolated()["logging.md"]
    for i in range(3):
        logging.getLogger(f"corpus-test-{i}").addHandler(logging.NullHandler())
    monkeypatch.setattr(logging.Logger, "warning_once", lambda self, *a: None, raising=False)
    logging.Logger.warning_once.__doc__ = "Attached by another package."
    assert "warning_once" in corpora.stdlib_documents(["logging"])["logging.md"]  # pydoc in-process sees it
    text = (materialize_corpus("python_stdlib", root=tmp_path) / "logging.md").read_text(encoding="utf-8")
    assert text == clean
    assert "warning_once" not in text
    assert "## logging.shutdown(handlerList=...)" in text


def test_shipped_tasks_have_24_train_and_12_holdout_topics_with_key_terms():
    train, holdout = load_tasks(split="train"), load_tasks(split="holdout")
    assert len(train) >= 24 and len(holdout) >= 12
    assert not {t.topic for t in train} & {t.topic for t in holdout}
    for task in train + holdout:
        assert task.corpus == "python_stdlib" and len(task.key_terms) >= 5, task.id


def test_every_key_term_occurs_in_the_corpus(stdlib_folder):
    corpus_words = {w for p in stdlib_folder.glob("*.md") for w in key_terms_of(p.read_text(encoding="utf-8"))}
    missing = [
        f"{task.id}: {term!r}"
        for task in load_tasks(split="all")
        for term in task.key_terms
        if not all(stem in corpus_words for stem in key_terms_of(term))
    ]
    assert not missing, f"key terms absent from the corpus: {missing}"


# Known, measured misses: since chunks begin and end between sentences (rag/chunking.py), the
# top 5 chunks of "<topic> <term>" no longer hold these two terms (with the earlier word
# windows they did). Listed so that every other term still fails the test when it is lost,
# and so that the test says when these come back.
KNOWN_MISSES = {("text-comparison", "ratio"), ("email", "attachment")}


@pytest.mark.slow
def test_every_key_term_is_retrieved_for_its_topic():
    """Ingests the real corpus into a real store (hashing embedding, BM25 and fusion as in every run)."""
    from rag import query

    from agents_llm.text.terms import family_in, stems_of

    store = corpus_store("python_stdlib", HASHING_RAG)
    problems, missed = [], set()
    for task in load_tasks(split="all"):
        topic_text = stems_of(" ".join(hit.text for hit in query(store, [task.topic], top_k=8)))
        found = 0
        for term in task.key_terms:
            stems = key_terms_of(term)
            hits = query(store, [f"{task.topic} {term}"], top_k=5)
            # A term is in a chunk as the judge reads it: any form of its word family (handler/handle).
            if not any(all(family_in(s, stems_of(hit.text)) for s in stems) for hit in hits):
                missed.add((task.id, term))
                if (task.id, term) not in KNOWN_MISSES:
                    problems.append(f"{task.id}: no retrieved chunk for {term!r} contains it")
            found += all(family_in(s, topic_text) for s in stems)
        # The topic alone already finds text that speaks of most of its key terms.
        if found < len(task.key_terms) / 2:
            problems.append(f"{task.id}: the topic's own chunks hold only {found}/{len(task.key_terms)} key terms")
    assert not problems, "\n".join(problems)
    fixed = KNOWN_MISSES - missed
    assert not fixed, f"now retrieved, remove them from KNOWN_MISSES: {sorted(fixed)}"


def test_other_named_corpora_stay_selectable(monkeypatch, tmp_path):
    packages = materialize_corpus("installed_packages")
    assert packages.name == "installed_packages" and any(packages.glob("*.md"))
    with pytest.raises(FileNotFoundError, match="neither a named corpus"):
        materialize_corpus(str(tmp_path / "nowhere"))
    monkeypatch.setattr(corpora, "PYTHON_DOCS_HTML_ROOTS", (str(tmp_path / "no-docs"),))
    with pytest.raises(FileNotFoundError, match="apt-get install python3-doc"):
        materialize_corpus("python_docs_html")


@pytest.mark.skipif(corpora.python_docs_html_root() is None, reason="Debian's python3-doc is not installed")
def test_python3_doc_html_corpus_holds_the_library_pages_of_the_same_modules():
    folder = materialize_corpus("python_docs_html")
    names = {p.name for p in folder.iterdir() if not p.name.startswith(".")}
    assert {"library-json.html", "library-asyncio-task.html", "tutorial-classes.html"} <= names
    assert "library-tkinter.html" not in names  # a module the corpus does not cover
    from rag import load_document

    text = load_document(folder / "library-heapq.html").text
    assert text.startswith("# heapq") and "priority queue" in text and "Quick search" not in text
    assert len(words(text)) > 1000
