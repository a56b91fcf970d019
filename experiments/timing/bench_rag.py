"""RAG benchmark: ingest throughput and query latency.

    python experiments/timing/bench_rag.py                       # defaults below
    python experiments/timing/bench_rag.py --chunks 10000 --queries 300 --minilm-chunks 400

Prints ingest throughput (chunks/s, end to end: read, chunk, embed, write) with MiniLM
and with the hashing embedding, and query latency p50/p95 on a store of about
--chunks chunks for hybrid, vector-only and BM25-only retrieval (no reranker). The
latency store is built with the hashing embedding (building 10k chunks with MiniLM
takes minutes on a small CPU); the MiniLM cost per query is its query encoding, which
is measured and printed separately so it can be added.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path


from omegaconf import OmegaConf  # noqa: E402

from rag import HashingEmbedding, MiniLMEmbedding, ingest_paths, open_store, query  # noqa: E402
from rag.config import RagConfig  # noqa: E402

WORDS_PER_FILE_CHUNK = 200  # the hashing tokenizer fits about this many words per chunk


def make_vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ter", "on", "qua", "zi", "pel", "ra", "dus", "ne", "vor", "ix", "sa", "tum"]
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def write_corpus(folder: Path, target_chunks: int, chunks_per_file: int, rng: random.Random) -> list[str]:
    """Synthetic documents: Zipf-distributed pseudo-words plus part identifiers, about
    `target_chunks` chunks in all. Returns sample queries drawn from the text."""
    folder.mkdir(parents=True, exist_ok=True)
    vocabulary = make_vocabulary(rng)
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    queries: list[str] = []
    files = max(1, target_chunks // chunks_per_file)
    for index in range(files):
        words = rng.choices(vocabulary, weights=weights, k=WORDS_PER_FILE_CHUNK * chunks_per_file)
        for position in range(0, len(words), 40):
            words[position] = f"PX-{rng.randint(1000, 9999)}-{rng.choice('ABCD')}"
        sentences = [" ".join(words[start : start + 12]).capitalize() + "." for start in range(0, len(words), 12)]
        (folder / f"doc{index:05d}.txt").write_text(" ".join(sentences))
        if len(queries) < 2000:
            start = rng.randrange(0, len(words) - 6)
            queries.append(" ".join(words[start : start + rng.randint(2, 5)]))
    return queries


def rag_cfg(store_path: Path, backend: str, ef: tuple[int, int] | None = None):
    cfg = OmegaConf.structured(RagConfig)
    cfg.store.path = str(store_path)
    if ef is not None:
        cfg.store.index_ef_construction, cfg.store.index_ef_search = ef
    cfg.embedding.backend = backend
    cfg.ingest.progress = False
    return cfg


def measure_ingest(label: str, embedding, docs: Path, store_path: Path, backend: str) -> float:
    store = open_store(rag_cfg(store_path, backend), embedding=embedding)
    started = time.perf_counter()
    report = ingest_paths(store, docs)
    elapsed = time.perf_counter() - started
    rate = report.chunks_added / elapsed
    print(
        f"ingest {label:8s}: {report.chunks_added:6d} chunks from {len(report.ingested)} files "
        f"in {elapsed:7.2f} s -> {rate:8.1f} chunks/s"
    )
    return rate


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=10_000, help="chunks in the latency store")
    parser.add_argument("--queries", type=int, default=300, help="queries timed per mode")
    parser.add_argument("--hashing-chunks", type=int, default=2_000, help="chunks ingested for the hashing throughput")
    parser.add_argument(
        "--minilm-chunks", type=int, default=300, help="chunks ingested for the MiniLM throughput (0: skip)"
    )
    parser.add_argument("--torch-threads", type=int, default=1, help="torch threads for MiniLM (0: torch default)")
    parser.add_argument(
        "--ef",
        type=int,
        nargs=2,
        default=None,
        metavar=("CONSTRUCTION", "SEARCH"),
        help="the latency store's HNSW candidate lists (default: rag.store's, 400 1000, wide for "
        "retrieval that is the same on every build; Chroma's own: 100 100)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="bench_rag_") as tmp:
        root = Path(tmp)
        print("== ingest throughput (read, chunk, embed, write) ==")
        write_corpus(root / "small_docs", args.hashing_chunks, 10, rng)
        measure_ingest("hashing", HashingEmbedding(), root / "small_docs", root / "store_hashing_tp", "hashing")
        minilm = None
        if args.minilm_chunks > 0:
            started = time.perf_counter()
            minilm = MiniLMEmbedding(torch_threads=args.torch_threads or None)
            print(f"(MiniLM loaded in {time.perf_counter() - started:.1f} s)")
            write_corpus(root / "minilm_docs", args.minilm_chunks, 10, rng)
            measure_ingest("minilm", minilm, root / "minilm_docs", root / "store_minilm_tp", "minilm")

        latency_cfg = rag_cfg(root / "store_latency", "hashing", tuple(args.ef) if args.ef else None)
        ef = (latency_cfg.store.index_ef_construction, latency_cfg.store.index_ef_search)
        print(
            f"== query latency at ~{args.chunks} chunks (hashing store, no reranker, top_k=5; "
            f"HNSW ef_construction {ef[0]}, ef_search {ef[1]}) =="
        )
        queries = write_corpus(root / "big_docs", args.chunks, 10, rng)
        store = open_store(latency_cfg, embedding=HashingEmbedding())
        started = time.perf_counter()
        ingest_paths(store, root / "big_docs")
        print(f"store built: {len(store)} chunks in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        query(store, queries[0], mode="bm25")
        print(f"BM25 index build (once, lazily): {(time.perf_counter() - started) * 1000:.0f} ms")

        timed = [queries[i % len(queries)] for i in range(args.queries)]
        for mode in ("hybrid", "vector", "bm25"):
            for text in timed[:10]:  # warm caches
                query(store, text, mode=mode)
            latencies = []
            for text in timed:
                started = time.perf_counter()
                query(store, text, mode=mode)
                latencies.append((time.perf_counter() - started) * 1000)
            print(
                f"{mode:8s} 1 query : p50 {statistics.median(latencies):6.1f} ms   p95 {percentile(latencies, 0.95):6.1f} ms"
            )
        triples = [
            [timed[i], timed[(i + 1) % len(timed)], timed[(i + 2) % len(timed)]] for i in range(0, len(timed), 3)
        ]
        latencies = []
        for texts in triples:
            started = time.perf_counter()
            query(store, texts, mode="hybrid")
            latencies.append((time.perf_counter() - started) * 1000)
        print(
            f"hybrid   3 queries: p50 {statistics.median(latencies):6.1f} ms   p95 {percentile(latencies, 0.95):6.1f} ms"
        )

        if minilm is not None:
            latencies = []
            for text in timed[:100]:
                started = time.perf_counter()
                minilm.embed_queries([text])
                latencies.append((time.perf_counter() - started) * 1000)
            print(
                f"MiniLM query encoding (add to vector/hybrid with MiniLM): p50 {statistics.median(latencies):6.1f} ms   "
                f"p95 {percentile(latencies, 0.95):6.1f} ms"
            )


if __name__ == "__main__":
    main()
