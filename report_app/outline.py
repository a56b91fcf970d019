"""Which outline `write_report` plans with: the documents' headings, the model's, or the user's.

``outline="documents"`` (the default): the documents' own headings closest to the task
(`agents_llm.document_outline`), when they give at least two; else the LeadArchitect's.
``outline="model"``: the LeadArchitect's, as the LLM-team env plays it. A list of titles:
those, in that order. The chosen titles become the handcrafted pipeline's fixed outline
(``algo.outline``); a trained checkpoint plans on its own and takes none.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

DOCUMENTS, MODEL = "documents", "model"


def check_outline(outline: Any) -> str | list[str]:
    """``outline`` as `run_report` takes it; a ValueError naming what is wrong."""
    if isinstance(outline, str) and outline in (DOCUMENTS, MODEL):
        return outline
    if isinstance(outline, Sequence) and not isinstance(outline, str):
        titles = [str(t).strip() for t in outline]
        if titles and all(titles):
            return titles
        raise ValueError(f"outline: a list of section titles must name at least one, none empty; got {list(outline)}")
    raise ValueError(f"outline: expected '{DOCUMENTS}', '{MODEL}' or a list of section titles, got {outline!r}")


def plan_outline(outline: str | list[str], task: str, store: Optional[Any]) -> tuple[list[str], str]:
    """(the fixed outline, [] for the model's; a line saying where it came from). ``store``: the
    RAG store the run reads (None with a caller's own retriever: no headings to read)."""
    if isinstance(outline, list):
        return outline, "outline: as given: " + "; ".join(outline)
    if outline == MODEL:
        return [], "outline: the LeadArchitect's"
    if store is None:
        return [], "outline: the LeadArchitect's (a caller's retriever gives no document headings)"
    from agents_llm.document_outline import MIN_DOCUMENT_OUTLINE, document_outline, passage_has_prose
    from rag.heading_passages import HeadingPassages

    passages = HeadingPassages.of_store(store)
    headings = passages.headings
    entries = document_outline(headings, task, store.embedding, quotable=passage_has_prose(passages))
    if len(entries) < MIN_DOCUMENT_OUTLINE:
        return [], (
            f"outline: the LeadArchitect's (the documents have {len(headings)} heading(s), "
            f"{len(entries)} about the task; {MIN_DOCUMENT_OUTLINE} needed)"
        )
    listed = "; ".join(f"{e.title} ({e.citation})" for e in entries)
    return [e.title for e in entries], f"outline: the documents' headings closest to the task: {listed}"
