"""What the Researcher needs from RAG, and the adapter onto `rag`.

The engine depends on this small protocol, not on a store, so tests can pass a stub
and a user can plug in another retriever. `RagRetriever` is the real one: hybrid
query over a shared `rag.RagStore` (guarded text, up to three queries).
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, Sequence

from rag.guard import guard_untrusted_text

from ..text.split import sentences
from ..sentence_reuse import unreported_facts


class Retriever(Protocol):
    """What a Researcher searches. A retriever may also offer `heading_passage(title) -> chunks`:
    the passage a document heading heads, which a section planned from that heading is written
    from (`RagRetriever` does; without it, sections are found by search alone)."""

    def retrieve(self, queries: Sequence[str]) -> list[Any]:
        """Chunks with .text (guarded), .source, .page, .chunk_id, .scores; [] when nothing relevant."""


class RagRetriever:
    """Hybrid retrieval over a shared `rag` store (built once per process, passed in)."""

    def __init__(self, store: Any, *, top_k: int = 3):
        self.store = store
        self.top_k = top_k
        self._passages: Any = None  # rag.heading_passages.HeadingPassages, read once per store size
        self._passages_size = -1
        self._lock = threading.Lock()

    def retrieve(self, queries: Sequence[str]) -> list[Any]:
        from rag import query

        return query(self.store, list(queries), top_k=self.top_k)

    def heading_passage(self, title: str) -> list[Any]:
        """The passage the documents' heading `title` heads, as retrieval results ([] when no
        document has that heading): a section planned from a heading is written from it."""
        from rag.heading_passages import HeadingPassages, heading_passage

        with self._lock:  # turns run in threads; the store is read once, not once per turn
            size = len(self.store)
            if self._passages is None or size != self._passages_size:
                self._passages, self._passages_size = HeadingPassages.of_store(self.store), size
            passages = self._passages
        return heading_passage(self.store, passages, title)

    def __len__(self) -> int:
        return len(self.store)


def record_retrieval(retrieval: dict[str, Any], chunks: Sequence[Any], ctx: Any, agent: str) -> bool:
    """Write what `agent`'s search found into its trace entry and the episode context (rag
    exhausted or not; the chunks become `agent`'s evidence); False when it found nothing."""
    retrieval["chunks"] = [
        {
            "source": c.source,
            "page": c.page,
            "chunk_id": c.chunk_id,
            "score": (getattr(c, "scores", None) or {}).get("rrf"),
        }
        for c in chunks
    ]
    if not chunks:
        retrieval["exhausted"] = True
        ctx.rag_exhausted = True
        return False
    ctx.rag_exhausted = False
    ctx.evidence.add(agent, chunks)
    return True


def new_chunks(chunks: Sequence[Any], report: Any) -> list[Any]:
    """The chunks holding a fact (a prose sentence) that no sentence of `report` states yet."""
    said = [s for sec in report.sections for s in sentences(sec.content)]
    return [c for c in chunks if unreported_facts(str(c.text), said)]


def format_evidence(chunks: Sequence[Any], max_chars: int) -> str:
    """Numbered source excerpts for a prompt, within `max_chars`.

    Compact on purpose (a small model loses the task under heavy delimiters). Each
    chunk is guarded, its lines joined and guarded again, with its source label (a file name
    is document-controlled text too): an injection split across a line break is one
    phrase by then. The prompt puts the result inside a data block.
    """
    blocks, used = [], 0
    for n, c in enumerate(chunks, 1):
        where = f"{c.source}, p. {c.page}" if getattr(c, "page", None) is not None else c.source
        where = guard_untrusted_text(" ".join(str(where).split()), max_chars=160).text
        # Guarded as written (a role label opening a line), then joined and guarded again.
        text = guard_untrusted_text(str(c.text), max_chars=None).text
        text = guard_untrusted_text(" ".join(text.split()), max_chars=None).text
        block = f"[{n}] ({where}) {text}"
        if used + len(block) > max_chars:
            block = block[: max(0, max_chars - used)]
            if len(block) < 80:
                break
        blocks.append(block)
        used += len(block) + 1
    return "\n".join(blocks)
