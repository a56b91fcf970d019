"""One file must not degrade the store: identical text is stored once (every location
kept), a file is chunked a segment at a time up to a reported cap, and the health
check warns when one source or near-duplicates dominate."""

from __future__ import annotations

import logging

from rag import SourceBuffer, ingest_paths, open_store, query, render_references
from rag.chunking import SEGMENT_CHARS
from rag.health import check_store
from tests.rag.conftest import make_rag_cfg
from tests.rag.docs import write_pdf
from tests.rag.labelled_set import DOCUMENTS, QUERIES, recall_at_k


def _vector_recall(store) -> float:
    hits = [
        recall_at_k([r.source for r in query(store, text, mode="vector", top_k=5)], relevant)
        for text, relevant in QUERIES
    ]
    return sum(hits) / len(hits)


def test_a_file_of_identical_lines_does_not_crowd_out_real_matches(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCUMENTS.items():
        (docs / name).write_text(text)
    clean = open_store(make_rag_cfg(tmp_path / "clean"))
    ingest_paths(clean, docs)
    baseline = _vector_recall(clean)
    assert baseline > 0.15

    # 30,000 identical lines made 137 identical chunks; their equal vectors left Chroma's
    # vector search returning nothing else (vector recall fell from 0.22 to 0.0).
    (docs / "spam.md").write_text("newsletter\n" * 30_000)
    store = open_store(make_rag_cfg(tmp_path / "store"))
    report = ingest_paths(store, docs)
    assert len(store) <= len(DOCUMENTS) + 3  # the spam file's text is stored once per distinct chunk
    assert any("spam.md" in warning and "stored once" in warning for warning in report.warnings)
    assert _vector_recall(store) >= baseline
    assert store.consistency_problems() == []


def test_identical_text_in_two_files_is_stored_once_and_keeps_every_location(tmp_path, docs_dir):
    shared = "Replace the mechanical seal of pump QX-7741-B every 4000 operating hours."
    (docs_dir / "notes.md").write_text(shared + "\n")
    write_pdf(docs_dir / "manual.pdf", [shared, "Warranty covers two years.", shared])
    cfg = make_rag_cfg(tmp_path / "store")
    store = open_store(cfg)
    report = ingest_paths(store, docs_dir)
    assert len(report.ingested) == 2
    assert len(store) == 2  # the seal sentence once, the warranty page once

    [hit] = [r for r in query(store, "QX-7741-B seal", top_k=5) if r.text == shared]
    assert sorted((name, page) for name, _, page in hit.locations) == [
        ("manual.pdf", 1),
        ("manual.pdf", 3),
        ("notes.md", None),
    ]
    buffer = SourceBuffer()
    buffer.add([hit])
    assert render_references(buffer.flush()) == "[1] manual.pdf, pp. 1, 3\n[2] notes.md"
    # A restart reads the locations back from Chroma.
    reopened = open_store(cfg)
    [again] = [r for r in query(reopened, "QX-7741-B seal", top_k=5) if r.text == shared]
    assert sorted(again.locations) == sorted(hit.locations)

    # Deleting one source keeps the text for the other; deleting both removes it.
    assert reopened.delete_source(docs_dir / "notes.md") == 0
    [left] = [r for r in query(reopened, "QX-7741-B seal", top_k=5) if r.text == shared]
    assert {name for name, _, _ in left.locations} == {"manual.pdf"}
    assert reopened.delete_source(docs_dir / "manual.pdf") == 2
    assert len(reopened) == 0 and reopened.consistency_problems() == []


def test_a_changed_file_gives_up_shared_text_without_taking_it_from_the_other(store, docs_dir):
    shared = "Bearing temperature stayed below 70 C during all trials."
    (docs_dir / "a.md").write_text(shared)
    (docs_dir / "b.md").write_text(shared)
    ingest_paths(store, docs_dir)
    assert len(store) == 1
    (docs_dir / "a.md").write_text("Vibration peaked at 12 mm/s on the gearbox.")
    report = ingest_paths(store, docs_dir)
    assert report.ingested == [str(docs_dir / "a.md")] and len(store) == 2
    [hit] = query(store, "bearing temperature trials", mode="bm25", top_k=1)
    assert [name for name, _, _ in hit.locations] == ["b.md"] and hit.source == "b.md"
    assert store.consistency_problems() == []


def test_the_render_order_of_references_for_a_shared_chunk(store, docs_dir):
    shared = "Coolant flows at three litres per second through the loop."
    (docs_dir / "first.md").write_text(shared)
    (docs_dir / "second.md").write_text(shared)
    ingest_paths(store, docs_dir)
    buffer = SourceBuffer()
    buffer.add(query(store, "coolant flow litres", top_k=1))
    assert render_references(buffer.flush()) == "[1] first.md\n[2] second.md"


class _RecordingTokenizer:
    """Wraps a tokenizer and remembers the longest text it was asked to tokenize."""

    def __init__(self, inner):
        self.inner, self.special_tokens, self.longest = inner, inner.special_tokens, 0

    def spans(self, text):
        self.longest = max(self.longest, len(text))
        return self.inner.spans(text)

    def count(self, text):
        return self.inner.count(text)


def test_a_huge_single_line_file_is_chunked_in_segments_up_to_a_reported_cap(tmp_path, docs_dir):
    store = open_store(make_rag_cfg(tmp_path / "store", ingest__max_chunks_per_file=40))
    recorder = _RecordingTokenizer(store.embedding.tokenizer)
    store.embedding.tokenizer = recorder
    words = [f"token{i % 5000}" for i in range(300_000)]
    big = docs_dir / "one_line.txt"
    big.write_text(" ".join(words))  # about 2.7 MB on one line
    (docs_dir / "small.md").write_text("The small file is still ingested in full.")
    report = ingest_paths(store, docs_dir)

    assert sorted(p.rsplit("/", 1)[-1] for p in report.ingested) == ["one_line.txt", "small.md"]
    assert len(store.sources[str(big.resolve())].chunk_ids) == 40
    [(path, detail)] = report.capped
    assert path == str(big) and detail.startswith("kept the first 40 chunks")
    assert "were not ingested (raise rag.ingest.max_chunks_per_file" in detail
    assert f"capped {big}: kept the first 40 chunks" in report.render()
    # Only a segment at a time was tokenized, and not the text past the cap.
    assert recorder.longest <= SEGMENT_CHARS
    assert query(store, "small file ingested", mode="bm25", top_k=1)[0].source == "small.md"


def test_health_check_warns_when_one_source_or_near_duplicates_dominate(tmp_path, docs_dir):
    for name, text in list(DOCUMENTS.items())[:6]:
        (docs_dir / name).write_text(text)
    store = open_store(make_rag_cfg(tmp_path / "store", chunking__max_tokens=32, chunking__overlap_tokens=0))
    ingest_paths(store, docs_dir)
    healthy = check_store(store)
    assert healthy.healthy and healthy.duplicate_chunks == 0 and healthy.sources == 6

    # Rows that differ only in their numbers: every chunk is a near-duplicate of another.
    (docs_dir / "log.md").write_text("\n\n".join(f"Row {i}: the sensor reported nominal values." for i in range(400)))
    ingest_paths(store, docs_dir)
    health = check_store(store)
    assert not health.healthy
    text = "\n".join(health.warnings)
    assert "one source dominates the store: log.md holds" in text
    assert "near-duplicate chunks dominate the store" in text and "the sensor reported nominal values" in text
    assert health.largest_source[0] == "log.md"


def test_broken_and_escaping_symlinks_are_skipped_in_one_line(tmp_path, docs_dir, store, caplog):
    outside = tmp_path / "secret.md"
    outside.write_text("Outside the docs folder: must not be ingested.")
    (docs_dir / "real.md").write_text("The real document about turbine blades.")
    (docs_dir / "broken_link.md").symlink_to(tmp_path / "gone.md")
    (docs_dir / "escape.md").symlink_to(outside)
    (docs_dir / "alias.md").symlink_to(docs_dir / "real.md")  # inside the folder: the same file once
    with caplog.at_level(logging.WARNING):
        report = ingest_paths(store, docs_dir)
    assert [r.exc_info for r in caplog.records if r.exc_info] == []  # no traceback
    reasons = {skipped.path.rsplit("/", 1)[-1]: skipped.reason for skipped in report.skipped}
    assert set(reasons) == {"broken_link.md", "escape.md"}
    assert reasons["broken_link.md"].startswith("broken symbolic link (points to ")
    assert reasons["escape.md"] == f"symbolic link to {outside.resolve()}, outside the folder being ingested"
    assert len(report.ingested) == 1 and len(store.sources) == 1
    assert all("Outside the docs folder" not in r.text for r in query(store, "outside docs folder ingested", top_k=5))
    assert f"skipped {docs_dir / 'broken_link.md'}: broken symbolic link" in report.render()
