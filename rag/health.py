"""Store health: does one file, or one text, dominate the store?

A store where most chunks come from one source, or say nearly the same thing, answers
every query with those chunks (the vector top-k fills with them). `check_store` counts
both and returns warnings naming the source or the repeated text; experiments/query.py
prints them before the results.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

_PAGE = 5000
# Two chunks are near-duplicates when they agree once case, digits, punctuation and
# blanks are ignored ("Row 17: same text" and "Row 18: same text").
_NOISE = re.compile(r"[\W\d_]+")


def near_duplicate_key(text: str) -> str:
    return _NOISE.sub(" ", text.lower()).strip()


@dataclass
class StoreHealth:
    chunks: int
    sources: int
    # (source name, chunks it holds) for the largest source.
    largest_source: Optional[Tuple[str, int]] = None
    # Chunks that repeat another chunk's (near-identical) text.
    duplicate_chunks: int = 0
    # (excerpt, copies) of the most repeated text.
    most_repeated: Optional[Tuple[str, int]] = None
    warnings: List[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not self.warnings


def check_store(
    store, max_source_share: Optional[float] = None, max_duplicate_share: Optional[float] = None
) -> StoreHealth:
    """Count per-source chunks and near-duplicate chunks; warn past the thresholds
    (default: `rag.health` of the store's config)."""
    health_cfg = getattr(store.cfg, "health", None)
    if max_source_share is None:
        max_source_share = health_cfg.max_source_share if health_cfg is not None else 0.5
    if max_duplicate_share is None:
        max_duplicate_share = health_cfg.max_duplicate_share if health_cfg is not None else 0.2
    total = len(store)
    health = StoreHealth(chunks=total, sources=len(store.sources))
    if total == 0:
        return health

    largest = max(store.sources.values(), key=lambda record: len(record.chunk_ids), default=None)
    if largest is not None:
        health.largest_source = (largest.name, len(largest.chunk_ids))
        share = len(largest.chunk_ids) / total
        if len(store.sources) >= 2 and share > max_source_share:
            health.warnings.append(
                f"one source dominates the store: {largest.name} holds {len(largest.chunk_ids)} of {total} chunks "
                f"({share:.0%}, over rag.health.max_source_share={max_source_share:g}); its chunks crowd the "
                f"results of every query (delete it with ingest.py 'delete=[{largest.name}]' if it is noise)"
            )

    groups: Counter = Counter()
    examples: dict[str, str] = {}  # near-duplicate key -> the first chunk text with it
    offset = 0
    while True:
        page = store.collection.get(include=["documents"], limit=_PAGE, offset=offset)
        for text in page["documents"]:
            key = near_duplicate_key(text)
            groups[key] += 1
            examples.setdefault(key, text)
        offset += len(page["ids"])
        if len(page["ids"]) < _PAGE:
            break
    health.duplicate_chunks = sum(count - 1 for count in groups.values())
    if groups:
        key, copies = groups.most_common(1)[0]
        excerpt = " ".join(examples[key].split())[:60]
        health.most_repeated = (excerpt, copies)
        share = health.duplicate_chunks / total
        if share > max_duplicate_share:
            health.warnings.append(
                f"near-duplicate chunks dominate the store: {health.duplicate_chunks} of {total} chunks ({share:.0%}, "
                f"over rag.health.max_duplicate_share={max_duplicate_share:g}) repeat another chunk's text; the most "
                f"repeated ({copies} copies): {excerpt!r}"
            )
    return health
