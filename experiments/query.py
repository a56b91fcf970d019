"""Query the RAG store (hybrid by default).

    python experiments/query.py 'q="transformer attention cost"'
    python experiments/query.py 'q=["QX-7741-B failure", "pump seal leak"]' rag.query.mode=bm25

Before the results it checks the store's health (rag.health.check_store) and warns on
stderr when one source or near-duplicate chunks dominate it (thresholds: rag.health).
Each run gets its own folder, outputs/query/<date>/<time>_<id>.
"""

from __future__ import annotations

import sys
import uuid


import hydra  # noqa: E402
from hydra.utils import to_absolute_path  # noqa: E402
from omegaconf import DictConfig, ListConfig, OmegaConf  # noqa: E402

from rag import load_reranker, open_store, query, register_configs  # noqa: E402
from rag.health import check_store  # noqa: E402
from rag.retrieval import QueryTimings  # noqa: E402

register_configs()
OmegaConf.register_new_resolver("run_id", lambda: uuid.uuid4().hex[:6], use_cache=True, replace=True)


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.4f}"


@hydra.main(version_base="1.3", config_path="../conf", config_name="query")
def main(cfg: DictConfig) -> int:
    cfg.rag.store.path = to_absolute_path(cfg.rag.store.path)
    store = open_store(cfg.rag)
    for warning in check_store(store).warnings:
        print(f"store health warning: {warning}", file=sys.stderr)
    queries = list(cfg.q) if isinstance(cfg.q, ListConfig) else [str(cfg.q)]
    timings = QueryTimings()
    results = query(store, queries, reranker=load_reranker(cfg.rag.query.rerank), timings=timings)
    if not results:
        print("No results (no query, an empty store, or nothing within the distance ceiling).")
    for rank, result in enumerate(results, start=1):
        scores = result.scores
        print(
            f"{rank}. {result.citation}  id={result.chunk_id}  rrf={_fmt(scores['rrf'])} "
            f"dist={_fmt(scores['vector_distance'])} bm25={_fmt(scores['bm25'])} rerank={_fmt(scores['rerank'])}"
        )
        if result.neutralised:
            print(f"   neutralised: {', '.join(finding.kind for finding in result.neutralised)}")
        print("   " + result.text[:300].replace("\n", " "))
    print(
        f"timings ms: embed={timings.embed_ms:.1f} vector={timings.vector_ms:.1f} "
        f"bm25={timings.bm25_ms:.1f} fetch={timings.fetch_ms:.1f}"
    )
    return 0


if __name__ == "__main__":
    main()
