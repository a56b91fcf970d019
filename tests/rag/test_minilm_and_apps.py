from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag import MiniLMEmbedding, ingest_paths, open_store, query
from rag.chunking import embedding_input
from tests.rag.conftest import make_rag_cfg
from tests.rag.docs import write_pdf

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_minilm_loads_offline_and_chunks_fit_its_window(tmp_path):
    embedding = MiniLMEmbedding()
    assert embedding.identity.endswith(":384") and embedding.max_tokens == 256
    vectors = embedding.embed_documents(
        ["A cat sat on the mat.", "A kitten rested on the rug.", "Quarterly tax filing deadlines."]
    )
    assert vectors.shape == (3, 384)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.2

    store = open_store(make_rag_cfg(tmp_path / "store", embedding__backend="minilm"), embedding=embedding)
    long_page = " ".join(
        f"Measurement {i} of the heat-exchanger outlet reads {i * 1.7:.1f} degrees." for i in range(150)
    )
    pdf = write_pdf(tmp_path / "long.pdf", [long_page[:3000], long_page[3000:6000]])
    report = ingest_paths(store, pdf)
    assert report.chunks_added > 4
    model_tokenizer = embedding._model.tokenizer
    chunks = store.get_chunks(store.sources[str(pdf.resolve())].chunk_ids).values()
    for entry in chunks:
        embedded = embedding_input("long.pdf", entry["metadata"]["page"], entry["text"])
        # Counted by the model's own tokenizer, special tokens included: nothing is cut off.
        assert len(model_tokenizer(embedded)["input_ids"]) <= 256
    assert {entry["metadata"]["page"] for entry in chunks} == {1, 2}
    assert query(store, "outlet temperature measurement", top_k=1)[0].source == "long.pdf"


@pytest.mark.slow
def test_ingest_and_query_apps_end_to_end(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("The QX-7741-B pump seal leaked coolant.")
    (docs / "empty.txt").write_bytes(b"")
    store = tmp_path / "store"
    env = {**os.environ, "HYDRA_FULL_ERROR": "1"}
    common = [
        "rag=hashing",
        f"rag.store.path={store}",
        "rag.ingest.progress=false",
        f"hydra.run.dir={tmp_path / 'run'}",
    ]
    ingest = subprocess.run(
        [sys.executable, "experiments/ingest.py", f"docs={docs}", *common],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ingest.returncode == 0, ingest.stderr
    assert "1 file(s) ingested, 0 unchanged, 1 skipped" in ingest.stdout
    assert "empty.txt: empty file (0 bytes)" in ingest.stdout

    asked = subprocess.run(
        [sys.executable, "experiments/query.py", "q=[QX-7741-B,NO_QUERY]", *common],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert asked.returncode == 0, asked.stderr
    assert "1. a.md" in asked.stdout and "QX-7741-B pump seal" in asked.stdout

    wrong = subprocess.run(
        [sys.executable, "experiments/query.py", "q=x", "rag.query.top_k=many", *common],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert wrong.returncode != 0 and "rag.query.top_k" in wrong.stderr


@pytest.mark.slow
def test_apps_report_bad_paths_links_and_health_in_unique_run_folders(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("The QX-7741-B pump seal leaked coolant.")
    (docs / "log.md").write_text("\n\n".join(f"Row {i}: the sensor reported nominal values." for i in range(300)))
    (docs / "broken_link.md").symlink_to(tmp_path / "gone.md")
    store = tmp_path / "store"
    env = {**os.environ, "HYDRA_FULL_ERROR": "1"}
    common = ["rag=hashing", f"rag.store.path={store}", "rag.ingest.progress=false"]

    def run(script, *args):
        # From tmp_path, without hydra.run.dir: the run folder comes from conf/*.yaml.
        return subprocess.run(
            [sys.executable, str(REPO / "experiments" / script), *args, *common],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    missing = run("ingest.py", f"docs={tmp_path / 'nonexistent'}")
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert f"docs path(s) not found: {tmp_path / 'nonexistent'}" in missing.stderr
    assert not store.exists()  # nothing was touched

    first, second = run("ingest.py", f"docs={docs}"), run("ingest.py", f"docs={docs}")
    assert first.returncode == 0 and second.returncode == 0, first.stderr
    assert f"skipped {docs / 'broken_link.md'}: broken symbolic link" in first.stdout
    assert "Traceback" not in first.stderr + first.stdout
    asked = run("query.py", "q=QX-7741-B")
    assert asked.returncode == 0, asked.stderr
    assert "store health warning: one source dominates the store: log.md holds" in asked.stderr
    assert "1. a.md" in asked.stdout
    # Every run has its own folder (three ingest runs, the refused one too, and one query),
    # even two in the same second.
    assert len(list((tmp_path / "outputs" / "ingest").glob("*/*_*"))) == 3
    assert len(list((tmp_path / "outputs" / "query").glob("*/*_*"))) == 1
