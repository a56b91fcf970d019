"""A store built by older ingestion code is re-chunked, not served: the recorded file stamp
holds the ingestion version beside the file's digest (rag.ingest.INGEST_VERSION)."""

from __future__ import annotations

import hashlib
import json

import rag.ingest as ingest
from rag import HashingEmbedding, ingest_paths, open_store
from rag.chunking import iter_chunks
from rag.loaders import load_document
from tests.rag.conftest import make_rag_cfg

# A document whose chunks exercise the loaders, the sentence splitter and the chunker: wrapped
# prose lines, a list, a code block, a heading, an abbreviation.
SAMPLE = (
    "# Context managers\n\n"
    "The with statement calls __enter__ on entry and\n"
    "__exit__ on exit, e.g. when an exception is raised. It does\n"
    "not, of course, swallow the exception unless __exit__ returns true.\n\n"
    "- contextlib.contextmanager turns a generator into a context manager.\n"
    "- ExitStack manages a dynamic stack of callbacks.\n\n"
    "```python\nwith open(path) as f:\n    data = f.read()\n```\n\n"
    "## Async\n\nAn async context manager defines __aenter__ and __aexit__. Use it with async with.\n"
)
# The digest of SAMPLE's chunks (hashing tokenizer, 48-token chunks, 8 overlap) at each version.
PINNED = {
    2: "8373be21e5f3fa74",
    3: "8373be21e5f3fa74",
    4: "b816b89fddb6b414",
    5: "b816b89fddb6b414",
    6: "b816b89fddb6b414",
    7: "b816b89fddb6b414",
    8: "b816b89fddb6b414",
    9: "b816b89fddb6b414",
    10: "b816b89fddb6b414",
}  # 3, 5: HTML only; 6, 7, 9, 10: plain text only; 8: a location records whether its chunk begins a paragraph


def sample_digest(tmp_path) -> str:
    path = tmp_path / "sample.md"
    path.write_text(SAMPLE)
    document = load_document(path, max_bytes=2**20)
    tokenizer = HashingEmbedding(dim=64).tokenizer
    chunks = [(c.text, c.page) for c in iter_chunks(document.text, path.name, tokenizer, 48, 8)]
    assert len(chunks) >= 2, chunks
    return hashlib.sha256(json.dumps(chunks).encode()).hexdigest()[:16]


def test_the_sample_chunks_are_those_of_the_current_ingest_version(tmp_path):
    digest = sample_digest(tmp_path)
    assert PINNED.get(ingest.INGEST_VERSION) == digest, (
        f"the chunks of the sample document changed (digest {digest}) under INGEST_VERSION "
        f"{ingest.INGEST_VERSION}: stores built before would keep serving the old chunks. Bump "
        "rag.ingest.INGEST_VERSION and record the new digest under it in PINNED"
    )


def test_a_store_chunked_by_another_ingest_version_is_rechunked_then_kept(tmp_path, monkeypatch):
    cfg = make_rag_cfg(tmp_path / "store")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nBearing temperature stayed below 70 C during the trials.\n")
    (docs / "more.md").write_text("# More\n\nThe gearbox vibration peaked at 12 mm/s.\n")
    store = open_store(cfg)
    monkeypatch.setattr(ingest, "INGEST_VERSION", 1)
    assert ingest_paths(store, docs).chunks_added > 0
    assert len(ingest_paths(store, docs).unchanged) == 2, "same files, same version: kept"

    monkeypatch.setattr(ingest, "INGEST_VERSION", 2)
    reopened = open_store(cfg)  # a later process with newer ingestion code
    report = ingest_paths(reopened, docs)
    assert report.unchanged == [] and sorted(report.ingested) == sorted(str(p) for p in docs.iterdir())
    assert reopened.consistency_problems() == []
    assert len(ingest_paths(open_store(cfg), docs).unchanged) == 2, "re-chunked once, then current"


def test_a_store_written_before_versioning_is_rechunked(tmp_path, monkeypatch):
    """Stores written before the stamp recorded the digest alone: they count as another version."""
    cfg = make_rag_cfg(tmp_path / "store")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nBearing temperature stayed below 70 C during the trials.\n")
    monkeypatch.setattr(ingest, "ingest_stamp", lambda sha256: sha256)  # the unversioned record
    ingest_paths(open_store(cfg), docs)
    monkeypatch.undo()
    assert ingest_paths(open_store(cfg), docs).ingested == [str(docs / "notes.md")]
