from __future__ import annotations

import pytest

from rag import HashingEmbedding, ingest_paths, open_store, query
from tests.rag.conftest import make_rag_cfg
from tests.rag.docs import write_docx, write_pdf


def _build_corpus(folder):
    write_pdf(
        folder / "manual.pdf",
        [
            "Pump manual introduction\nThe pump moves coolant through the loop.",
            "Seal replacement\nReplace the mechanical seal of QX-7741-B every 4000 hours.",
            "Warranty\nThe warranty covers defects for two years.",
        ],
    )
    write_docx(
        folder / "materials.docx",
        "Materials",
        ["Housing alloys were tested."],
        [["Alloy", "Yield"], ["Inconel 718", "1030 MPa"], ["Ti-6Al-4V", "880 MPa"]],
    )
    (folder / "notes.md").write_text("# Notes\n\nBearing temperature stayed below 70 C during trials.\n")
    (folder / "legacy.txt").write_bytes("Résumé of the Zürich façade inspection.".encode("latin-1"))


def _snapshot(store):
    return {
        chunk_id: (entry["text"], entry["metadata"].get("page"))
        for chunk_id, entry in store.get_chunks(
            [i for record in store.sources.values() for i in record.chunk_ids]
        ).items()
    }


def test_ingest_records_pages_tables_and_sources(store, docs_dir):
    _build_corpus(docs_dir)
    report = ingest_paths(store, docs_dir)
    assert sorted(p.split("/")[-1] for p in report.ingested) == [
        "legacy.txt",
        "manual.pdf",
        "materials.docx",
        "notes.md",
    ]
    assert report.skipped == [] and report.chunks_added == len(store) > 0

    seal = query(store, "QX-7741-B seal replacement", top_k=1)[0]
    assert (seal.source, seal.page) == ("manual.pdf", 2)
    assert seal.chunk_id in store.sources[seal.source_path].chunk_ids
    assert set(seal.scores) == {"rrf", "vector_distance", "bm25", "rerank"}
    table = query(store, "Inconel 718 yield", top_k=1)[0]
    assert table.source == "materials.docx" and table.page is None and "1030 MPa" in table.text
    latin = query(store, "Zürich façade", top_k=1)[0]
    assert latin.source == "legacy.txt" and "Résumé" in latin.text
    # The contextual prefix is embedded, not stored.
    assert not any(text.startswith("[Source:") for text, _ in _snapshot(store).values())


def test_reingesting_unchanged_files_adds_nothing(store, docs_dir):
    _build_corpus(docs_dir)
    ingest_paths(store, docs_dir)
    before = _snapshot(store)
    again = ingest_paths(store, docs_dir)
    assert again.chunks_added == 0 and again.chunks_replaced == 0 and again.ingested == []
    assert len(again.unchanged) == 4 and again.chunks_unchanged == len(before)
    assert _snapshot(store) == before


def test_changed_file_replaces_its_old_chunks(store, docs_dir):
    _build_corpus(docs_dir)
    ingest_paths(store, docs_dir)
    notes = docs_dir / "notes.md"
    old_ids = set(store.sources[str(notes.resolve())].chunk_ids)
    notes.write_text("# Notes\n\nVibration amplitude peaked at 12 mm/s on the gearbox.\n")
    report = ingest_paths(store, docs_dir)
    assert report.ingested == [str(notes)] and len(report.unchanged) == 3
    new_ids = set(store.sources[str(notes.resolve())].chunk_ids)
    assert new_ids.isdisjoint(old_ids) and report.chunks_replaced == len(old_ids)
    assert store.get_chunks(sorted(old_ids)) == {}
    assert query(store, "bearing temperature", mode="bm25") == []
    assert query(store, "gearbox vibration amplitude", top_k=1)[0].source == "notes.md"
    assert store.consistency_problems() == []


def test_partly_changed_file_keeps_unchanged_chunks_and_updates_their_file_hash(tmp_path, docs_dir):
    cfg = make_rag_cfg(tmp_path / "store", chunking__max_tokens=32, chunking__overlap_tokens=0)
    store = open_store(cfg)
    pdf = write_pdf(docs_dir / "two.pdf", ["first page words stay the same here", "second page original"])
    ingest_paths(store, pdf)
    page_one_id = next(
        i
        for i, e in store.get_chunks(store.sources[str(pdf.resolve())].chunk_ids).items()
        if e["metadata"]["page"] == 1
    )
    write_pdf(pdf, ["first page words stay the same here", "second page rewritten"])
    report = ingest_paths(store, pdf)
    assert (report.chunks_added, report.chunks_replaced, report.chunks_unchanged) == (1, 1, 1)
    assert page_one_id in store.sources[str(pdf.resolve())].chunk_ids
    # After a restart the file is recognised as unchanged: the kept chunk carries the new hash.
    reopened = open_store(cfg)
    assert ingest_paths(reopened, pdf).unchanged == [str(pdf)]


def test_delete_by_source_removes_from_vectors_and_bm25(store, docs_dir):
    _build_corpus(docs_dir)
    ingest_paths(store, docs_dir)
    total = len(store)
    removed = store.delete_source(docs_dir / "manual.pdf")
    assert removed > 0 and len(store) == total - removed
    assert all(r.source != "manual.pdf" for r in query(store, "QX-7741-B seal warranty pump", top_k=10))
    assert store.consistency_problems() == []
    with pytest.raises(KeyError, match="no such source"):
        store.delete_source("manual.pdf")
    assert store.delete_source("notes.md") > 0  # by unique file name too


def test_bm25_and_store_agree_after_restart(rag_cfg, store, docs_dir):
    _build_corpus(docs_dir)
    ingest_paths(store, docs_dir)
    store.delete_source(docs_dir / "legacy.txt")
    (docs_dir / "notes.md").write_text("# Notes\n\nLubricant viscosity dropped after 300 hours.\n")
    ingest_paths(store, docs_dir / "notes.md")
    questions = ["QX-7741-B", "lubricant viscosity", "Inconel yield", "Zürich façade"]
    before = {
        q: [(r.chunk_id, round(r.scores["bm25"] or 0, 6)) for r in query(store, q, mode="bm25")] for q in questions
    }
    del store

    reopened = open_store(rag_cfg, embedding=HashingEmbedding())
    assert reopened.consistency_problems() == []
    assert set(reopened.sources) == {
        str((docs_dir / n).resolve()) for n in ("manual.pdf", "materials.docx", "notes.md")
    }
    after = {
        q: [(r.chunk_id, round(r.scores["bm25"] or 0, 6)) for r in query(reopened, q, mode="bm25")] for q in questions
    }
    assert after == before
    assert after["Zürich façade"] == [] and after["lubricant viscosity"]


def test_bm25_is_not_rebuilt_per_added_file(tmp_path, docs_dir):
    store = open_store(make_rag_cfg(tmp_path / "store", ingest__write_batch_chunks=1))
    for index in range(12):
        (docs_dir / f"f{index}.txt").write_text(f"document number {index} about topic{index}")
    ingest_paths(store, docs_dir)
    assert len(store.lexical) == 12 and store.lexical.builds == 0
    query(store, "topic3")
    query(store, "topic4")
    assert store.lexical.builds == 1
    (docs_dir / "f0.txt").write_text("changed")
    ingest_paths(store, docs_dir)
    assert query(store, "changed", mode="bm25")[0].source == "f0.txt"
    assert store.lexical.builds == 2


def test_store_refuses_a_different_embedding(tmp_path):
    cfg = make_rag_cfg(tmp_path / "store")
    open_store(cfg, embedding=HashingEmbedding(dim=384))
    with pytest.raises(ValueError, match="built with embedding 'hashing-v2:384'.*'hashing-v2:128'"):
        open_store(cfg, embedding=HashingEmbedding(dim=128))


def test_invalid_ranges_fail_naming_the_key(tmp_path):
    with pytest.raises(ValueError, match="rag.chunking.overlap_tokens"):
        open_store(make_rag_cfg(tmp_path / "s", chunking__overlap_tokens=200))
    with pytest.raises(ValueError, match="rag.query.max_cosine_distance"):
        open_store(make_rag_cfg(tmp_path / "s", query__max_cosine_distance=3.0))
    with pytest.raises(ValueError, match="rag.ingest.max_chunks_per_file"):
        open_store(make_rag_cfg(tmp_path / "s", ingest__max_chunks_per_file=0))
    with pytest.raises(ValueError, match="rag.health.max_source_share"):
        open_store(make_rag_cfg(tmp_path / "s", health__max_source_share=1.5))
    with pytest.raises(ValueError, match="rag.store.bm25_backend"):
        open_store(make_rag_cfg(tmp_path / "s", store__bm25_backend="bm25x"))


def test_a_plain_dataclass_config_opens_a_store(tmp_path, docs_dir):
    from rag.config import RagConfig

    cfg = RagConfig()
    cfg.store.path = str(tmp_path / "plain")
    cfg.embedding.backend = "hashing"
    cfg.ingest.progress = False
    store = open_store(cfg)
    (docs_dir / "a.md").write_text("plain dataclass configs work too")
    ingest_paths(store, docs_dir)
    assert query(store, "dataclass configs")[0].source == "a.md"


@pytest.mark.slow
def test_two_fresh_builds_of_the_default_corpus_retrieve_alike(tmp_path, monkeypatch):
    """The vector index is approximate; its candidate lists are wide enough that a rebuild
    does not change what a query finds (at Chroma's defaults, 100/100, 58 of 300 queries got
    a different top 20 across three builds of this corpus)."""
    monkeypatch.setenv("QMIX_CACHE_DIR", str(tmp_path / "cache"))
    from envs.report.corpora import DEFAULT_CORPUS, materialize_corpus

    folder = materialize_corpus(DEFAULT_CORPUS)
    answers, probes = [], []
    for build in range(2):
        store = open_store(make_rag_cfg(tmp_path / f"store{build}"))
        ingest_paths(store, [folder])
        if not probes:
            probes = [text[:200] for text in store.collection.get(limit=300, include=["documents"])["documents"]]
        found = store.collection.query(
            query_embeddings=store.embedding.embed_queries(probes), n_results=20, include=["distances"]
        )
        answers.append([sorted(ids) for ids in found["ids"]])
    differing = [p for p, a, b in zip(probes, *answers) if a != b]
    assert len(probes) == 300 and not differing, f"{len(differing)} of 300 queries differ, e.g. {differing[:2]}"
