"""What the report is written from: the documents checked and ingested (unchanged files are
skipped), the resources the env runs on, and the topic search over them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from .inputs import ReportInputError, check_docs


@dataclass
class Documents:
    corpus: str
    store_path: Optional[Path]
    store: Any  # the RAG store; None when the caller gives its own retriever
    retriever: Any
    resources: Any  # envs.report.resources.ReportResources: the LLM, judge and stores the env uses
    messages: list[str] = field(default_factory=list)

    def search_topic(self, queries: list[str]) -> Sequence[Any]:
        """The passages the coverage probe and the outline plan read for ``queries``."""
        from agents_llm.coverage import PROBE_TOP_K

        if self.retriever is not None or self.store is None:
            return self.retriever.retrieve(queries)
        from rag import query

        return query(self.store, queries, top_k=PROBE_TOP_K)


def open_documents(
    docs: str | Path | None,
    data_root: str | Path | None,
    *,
    llm: Any,
    judge: Any,
    rag: dict[str, Any],
    backend: Any,
    retriever: Any,
) -> Documents:
    """The documents (the default corpus when ``docs`` is None) ingested into their store, which
    the env's resources then retrieve from; ReportInputError when nothing could be read."""
    from envs.report.resources import ReportResources
    from envs.report.tasks import DEFAULT_CORPUS, default_store_path

    messages: list[str] = []
    store_path, store = None, None
    if docs is None:
        corpus = DEFAULT_CORPUS
        messages.append(
            f"docs: none given, using the default corpus ({DEFAULT_CORPUS}: the Python standard "
            "library's documentation)"
        )
    else:
        from omegaconf import OmegaConf

        from rag import RagConfig

        extensions = list(OmegaConf.merge(OmegaConf.structured(RagConfig), rag).ingest.extensions)
        corpus = str(check_docs(docs, extensions))
    if data_root is not None:
        store_path = Path(data_root).expanduser() / "stores" / default_store_path(corpus, rag).name
    # The env runs on these: the store checked here is the one it retrieves from.
    resources = ReportResources(
        llm=llm,
        judge=judge,
        rag=rag,
        store_path=str(store_path) if store_path else None,
        backend=backend,
        retriever=retriever,
    )
    if retriever is None:
        store = resources.stores.store(corpus)
        if len(store) == 0:
            raise ReportInputError(
                f"no text could be read from the documents in {corpus}: every file was skipped "
                "(see the ingest warnings above); nothing to write a report from"
            )
        messages.append(f"store: {len(store)} chunk(s) from {len(store.sources)} document(s)")
    return Documents(corpus, store_path, store, retriever, resources, messages)
