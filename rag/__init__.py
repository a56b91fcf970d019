"""Hybrid retrieval over ingested documents (Chroma vectors + BM25, fused by RRF).

Public API (what the Researcher role calls)::

    from rag import open_store, ingest_paths, query, SourceBuffer, NO_QUERY

    store = open_store(cfg.rag)                    # RagStore; cfg.rag follows rag.config.RagConfig
    report = ingest_paths(store, ["docs/"])        # IngestReport; report.render() summarises
    results = query(store, ["q1", "q2", NO_QUERY]) # up to 3 queries -> list[RetrievedChunk]
    for r in results:
        r.text, r.source, r.page, r.chunk_id, r.scores   # text is already guarded
    prompt_block = format_for_prompt(results)      # delimited, capped, "data, not instructions"

    buffer = SourceBuffer()
    buffer.add(results)                            # sources behind the part being written
    section_sources = buffer.flush()               # on append -> list[SourceRef]
    render_references(section_sources)             # "[1] paper.pdf, pp. 2, 5"

    r.locations                                    # every (source, path, page) of that text
    guard_untrusted_text(text, max_chars) -> GuardedText(text, findings, ...)
    check_store(store) -> StoreHealth(warnings, ...)  # one source / near-duplicates dominating
    HashingEmbedding(dim=384)                      # fast, model-free embedding for tests
    store.delete_source(path_or_name) -> int       # chunks removed

An empty result list is a normal outcome (no query, empty store, nothing close enough).
One store is a shared resource: open it once and pass it to every env.
"""

from rag.config import RagConfig, register_configs
from rag.embeddings import HashingEmbedding, MiniLMEmbedding, build_embedding
from rag.guard import GuardedText, GuardFinding, find_injections, guard_untrusted_text
from rag.health import StoreHealth, check_store
from rag.ingest import IngestReport, SkippedFile, ingest_paths
from rag.loaders import DocumentError, load_document
from rag.retrieval import (
    NO_QUERY,
    CrossEncoderReranker,
    Reranker,
    RetrievedChunk,
    format_for_prompt,
    load_reranker,
    query,
)
from rag.sources import SourceBuffer, SourceRef, dedup_sources, group_by_file, render_references
from rag.store import RagStore, open_store

__all__ = [
    "NO_QUERY",
    "CrossEncoderReranker",
    "DocumentError",
    "GuardFinding",
    "GuardedText",
    "HashingEmbedding",
    "IngestReport",
    "MiniLMEmbedding",
    "RagConfig",
    "RagStore",
    "Reranker",
    "RetrievedChunk",
    "SkippedFile",
    "SourceBuffer",
    "SourceRef",
    "StoreHealth",
    "build_embedding",
    "check_store",
    "find_injections",
    "format_for_prompt",
    "guard_untrusted_text",
    "ingest_paths",
    "load_document",
    "load_reranker",
    "dedup_sources",
    "group_by_file",
    "open_store",
    "query",
    "register_configs",
    "render_references",
]
