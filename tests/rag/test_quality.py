"""Hybrid retrieval must recall at least as well as either path alone on a labelled set."""

from __future__ import annotations

import pytest

from rag import MiniLMEmbedding, ingest_paths, open_store, query
from tests.rag.conftest import make_rag_cfg
from tests.rag.labelled_set import DOCUMENTS, QUERIES, recall_at_k


def _recalls(store) -> dict:
    recalls = {}
    for mode in ("hybrid", "vector", "bm25"):
        per_query = [
            recall_at_k([r.source for r in query(store, text, mode=mode, top_k=5)], relevant)
            for text, relevant in QUERIES
        ]
        recalls[mode] = sum(per_query) / len(per_query)
    return recalls


def _ingest_labelled_set(store, folder):
    folder.mkdir()
    for name, text in DOCUMENTS.items():
        (folder / name).write_text(text)
    report = ingest_paths(store, folder)
    assert len(report.ingested) == len(DOCUMENTS) and len(store) == len(DOCUMENTS)


def _check(recalls, label, capsys):
    with capsys.disabled():
        print(
            f"\n[{label}] recall@5 hybrid={recalls['hybrid']:.3f} vector={recalls['vector']:.3f} bm25={recalls['bm25']:.3f}"
        )
    assert recalls["hybrid"] >= recalls["vector"]
    assert recalls["hybrid"] >= recalls["bm25"]


def test_hybrid_recall_with_hashing_embedding(tmp_path, capsys):
    store = open_store(make_rag_cfg(tmp_path / "store"))
    _ingest_labelled_set(store, tmp_path / "docs")
    recalls = _recalls(store)
    _check(recalls, "hashing", capsys)
    # Every identifier query is answered exactly by BM25, and so by hybrid.
    for text, relevant in QUERIES[:6]:
        assert query(store, text, top_k=1)[0].source == relevant[0], text


@pytest.mark.slow
def test_hybrid_recall_with_minilm(tmp_path, capsys):
    store = open_store(make_rag_cfg(tmp_path / "store", embedding__backend="minilm"), embedding=MiniLMEmbedding())
    _ingest_labelled_set(store, tmp_path / "docs")
    recalls = _recalls(store)
    _check(recalls, "minilm", capsys)
    # The set is built so each path misses something the other finds.
    assert recalls["hybrid"] > recalls["vector"] and recalls["hybrid"] > recalls["bm25"]
