"""The shared objects a report env runs on: LLM backend, RAG stores + embedding, judge.

They cost seconds to build (a model, a store that loads its index, an embedding model)
and hold state worth keeping across episodes (a judge's chunk-score cache, an HTTP
client), so they are built once and handed to every env that should use them. Nothing
here is process-wide: a :class:`ReportResources` belongs to whoever built it.

* An entry point builds one per distinct config through a ``envs.ResourcePool`` (the
  training and evaluation envs of a run, a concurrent runner's envs, a Ray worker's
  envs all share it on purpose) and passes it: ``envs.make(name, resources=r, **cfg)``.
* ``envs.make`` / ``ReportWritingEnv(...)`` without one builds a fresh one for that env
  alone, so two envs built that way share nothing (``tests/envs/report/test_resources.py``).

An env refuses resources built for another llm/judge/rag/store config (naming the key),
since it would otherwise silently run on a model or store its config does not describe.

Two caches sit below this level. The llama.cpp weights (``agents_llm.backends.llamacpp``:
keyed by model file, context size, threads and chat format), because reloading them costs
seconds per env; the sampling settings are per call, so two configs that differ in them
share the weights, never a setting. And the open handle on a store folder
(``envs.report.tasks.corpus_store``: keyed by folder, rag config and corpus), because separate
handles on one Chroma folder in one process retrieved differently.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Mapping

from .config import judge_config, llm_config, plain
from .tasks import corpus_store

# The env keywords that decide which resources an env needs (the rest are settings).
CONFIG_KEYS = ("llm", "judge", "rag", "store_path")
# Ready-made objects an env's keywords may hand over instead of building them.
OBJECT_KEYS = ("backend", "retriever", "embedding", "judge_obj")


class CorpusStores:
    """The RAG stores of one rag config: one per corpus, opened and ingested on first use.

    Ingestion is idempotent (content hashes), so another process (or another
    ``CorpusStores``) re-reads the files, finds them unchanged and writes nothing."""

    def __init__(self, rag_cfg: Mapping[str, Any] | None = None, store_path: str | None = None):
        self.rag_cfg = dict(rag_cfg or {})
        self.store_path = store_path
        self._stores: dict[str, Any] = {}
        self._lock = threading.RLock()  # concurrent envs may open the same corpus at once

    def store(self, corpus: str) -> Any:
        with self._lock:
            if corpus not in self._stores:
                self._stores[corpus] = corpus_store(corpus, self.rag_cfg, self.store_path)
            return self._stores[corpus]


class ReportResources:
    """Backend, stores, embedding and judge for one llm/judge/rag/store config.

    ``backend``, ``retriever``, ``embedding``, ``judge_obj``: ready-made objects to use
    instead of building them (tests, a host project's own retriever); ``stores``: a
    :class:`CorpusStores` to share on purpose. The backend is built now (a bad llm
    config fails at construction); stores, embedding and judge on first use.
    """

    def __init__(
        self,
        *,
        llm: Any = None,
        judge: Any = None,
        rag: Any = None,
        store_path: str | None = None,
        backend: Any = None,
        retriever: Any = None,
        embedding: Any = None,
        judge_obj: Any = None,
        stores: CorpusStores | None = None,
    ):
        self.llm_cfg = llm_config(llm)
        self.judge_cfg = judge_config(judge)
        self.rag_cfg: dict[str, Any] = plain(rag) or {}
        self.store_path = store_path
        extractive = self.llm_cfg.get("backend") == "extractive"  # no model: agents_llm.extractive
        if backend is None and not extractive:
            from agents_llm.backends import make_backend

            backend = make_backend(self.llm_cfg)
        self.backend = backend
        self.stores = stores if stores is not None else CorpusStores(self.rag_cfg, store_path)
        self._retriever = retriever
        self._retrievers: dict[str, Any] = {}
        self._embedding = embedding
        self._judge = judge_obj
        self._lock = threading.RLock()

    # -- building from an env's keywords -----------------------------------------------
    @classmethod
    def from_env_kwargs(cls, cfg: Mapping[str, Any]) -> "ReportResources":
        """The resources the env keywords ``cfg`` describe (its settings are ignored)."""
        return cls(**{k: cfg[k] for k in CONFIG_KEYS + OBJECT_KEYS if cfg.get(k) is not None})

    @classmethod
    def pool_key(cls, cfg: Mapping[str, Any]) -> str:
        """Equal for env keywords that need the same resources (``envs.ResourcePool``); a
        ready-made object in them counts by identity."""
        configs = cls._configs(
            llm_config(cfg.get("llm")),
            judge_config(cfg.get("judge")),
            plain(cfg.get("rag")) or {},
            cfg.get("store_path"),
        )
        objects = {k: id(cfg[k]) for k in OBJECT_KEYS if cfg.get(k) is not None}
        return json.dumps([configs, objects], sort_keys=True, default=str)

    @staticmethod
    def _configs(llm: Any, judge: Any, rag: Any, store_path: Any) -> dict[str, Any]:
        return {"llm": llm, "judge": judge, "rag": rag, "store_path": store_path}

    def check_fits(
        self, llm: Mapping[str, Any], judge: Mapping[str, Any], rag: Mapping[str, Any], store_path: str | None
    ) -> None:
        """Raise naming the key when an env's config is not the one these resources were built for."""
        mine = self._configs(self.llm_cfg, self.judge_cfg, self.rag_cfg, self.store_path)
        theirs = self._configs(dict(llm), dict(judge), dict(rag), store_path)
        for key in CONFIG_KEYS:
            if json.dumps(mine[key], sort_keys=True, default=str) != json.dumps(
                theirs[key], sort_keys=True, default=str
            ):
                raise ValueError(
                    f"resources= was built for {key}={mine[key]!r}, but the env's config has "
                    f"{key}={theirs[key]!r}; build the resources from the env's config "
                    "(envs.ResourcePool or ReportResources(**its llm/judge/rag/store_path))"
                )

    # -- the objects ----------------------------------------------------------------
    def retriever(self, corpus: str) -> Any:
        """The retriever over `corpus` (or the one handed over at construction)."""
        if self._retriever is not None:
            return self._retriever
        from agents_llm.engine import RagRetriever

        with self._lock:
            if corpus not in self._retrievers:
                store = self.stores.store(corpus)
                top_k = int((self.rag_cfg.get("query") or {}).get("top_k", 3))
                self._retrievers[corpus] = RagRetriever(store, top_k=min(top_k, 3))
                if self._embedding is None:
                    self._embedding = store.embedding
            return self._retrievers[corpus]

    @property
    def embedding(self) -> Any:
        """The embedding handed over, else the first opened store's (None before any)."""
        return self._embedding

    def judge(self) -> Any:
        """The judge of the config, built once; a reference judge reuses the store's
        embedding when it is the same model."""
        with self._lock:
            if self._judge is None:
                from agents_llm.judges import make_judge

                cfg = self.judge_cfg
                kind = cfg.get("kind", "reference")
                embed = None
                if kind == "reference" and self._embedding is not None:
                    wanted = cfg.get("embedding", "minilm")
                    identity = str(getattr(self._embedding, "identity", ""))
                    if (wanted == "hashing" and identity == f"hashing:{cfg.get('hashing_dim', 384)}") or (
                        wanted == "minilm" and "minilm" in identity.lower()
                    ):
                        embed = self._embedding
                self._judge = make_judge(cfg, backend=self.backend if kind == "llm" else None, embed=embed)
            return self._judge
