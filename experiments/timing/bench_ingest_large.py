"""Ingest benchmark for one huge file: chunk count, time and peak memory.

    python experiments/timing/bench_ingest_large.py                 # an 18 MB single-line text file
    python experiments/timing/bench_ingest_large.py --mb 4 --cap 0  # 0: no cap (rag.ingest default otherwise)
    python experiments/timing/bench_ingest_large.py --chunk-only    # chunk the whole file, no store, no cap

Writes a text file of --mb megabytes on one line (pseudo-words, no paragraph break),
ingests it into a fresh store and prints the chunks stored, what the summary says about
the cap, wall time and the process's peak resident memory (ru_maxrss) before and after.
Chunking uses the bundled MiniLM tokenizer (the one the default embedding counts with);
vectors come from the hashing embedding, so the figure is chunking and storage, not
MiniLM's encoder (add about 1/35 to 1/140 s per chunk on a small CPU for that).
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
from pathlib import Path


from omegaconf import OmegaConf  # noqa: E402

from rag import HashingEmbedding, ingest_paths, open_store  # noqa: E402
from rag.config import RagConfig  # noqa: E402
from rag.embeddings import bundled_minilm_path  # noqa: E402
from rag.tokenization import HuggingFaceTokenizer  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def write_single_line(path: Path, megabytes: float, seed: int = 0) -> None:
    rng = random.Random(seed)
    words = [f"{rng.choice('bcdfgklmnprst')}{rng.choice('aeiou')}{rng.choice('nrstlm')}{i}" for i in range(20_000)]
    target = int(megabytes * 2**20)
    with open(path, "w") as handle:
        written = 0
        while written < target:
            piece = " ".join(rng.choices(words, k=2000)) + " "
            handle.write(piece)
            written += len(piece)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=18.0, help="size of the single-line file")
    parser.add_argument(
        "--cap", type=int, default=None, help="rag.ingest.max_chunks_per_file (0: no cap; default: the config's)"
    )
    parser.add_argument(
        "--chunk-only",
        action="store_true",
        help="only chunk the whole file with rag.chunking.chunk_text (memory of chunking alone)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        big = root / "docs" / "one_line.txt"
        big.parent.mkdir()
        write_single_line(big, args.mb)
        if args.chunk_only:
            from rag.chunking import chunk_text

            tokenizer = HuggingFaceTokenizer(bundled_minilm_path() / "tokenizer.json", special_tokens=2)
            text = big.read_text()
            before = peak_rss_mb()
            started = time.perf_counter()
            chunks = chunk_text(text, big.name, tokenizer, max_tokens=256, overlap_tokens=32)
            seconds = time.perf_counter() - started
            after = peak_rss_mb()
            print(f"file: {big.stat().st_size / 2**20:.1f} MiB on one line; {len(chunks)} chunks in {seconds:.1f} s")
            print(f"peak RSS: {before:.0f} MiB before chunking, {after:.0f} MiB after (+{after - before:.0f} MiB)")
            return
        cfg = OmegaConf.structured(RagConfig)
        cfg.store.path = str(root / "store")
        cfg.embedding.backend = "hashing"
        cfg.ingest.progress = False
        cfg.ingest.max_file_mb = max(cfg.ingest.max_file_mb, args.mb + 1)
        if args.cap is not None and "max_chunks_per_file" in cfg.ingest:
            cfg.ingest.max_chunks_per_file = args.cap if args.cap > 0 else 10**9
        embedding = HashingEmbedding(dim=cfg.embedding.hashing.dim)
        embedding.tokenizer = HuggingFaceTokenizer(bundled_minilm_path() / "tokenizer.json", special_tokens=2)
        store = open_store(cfg, embedding=embedding)
        before = peak_rss_mb()
        started = time.perf_counter()
        report = ingest_paths(store, big)
        seconds = time.perf_counter() - started
        after = peak_rss_mb()
        print(f"file: {big.stat().st_size / 2**20:.1f} MiB on one line")
        print(f"chunks stored: {len(store)}")
        capped = getattr(report, "capped", [])
        print(f"capped: {capped[0][1] if capped else 'no'}")
        print(f"ingest wall time: {seconds:.1f} s")
        print(f"peak RSS: {before:.0f} MiB before ingesting, {after:.0f} MiB after (+{after - before:.0f} MiB)")


if __name__ == "__main__":
    main()
