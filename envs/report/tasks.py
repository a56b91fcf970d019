"""Tasks of the report env: a topic plus a corpus, in train and holdout splits.

The default task set (`envs/report/tasks.json`, 24 train and 12 held-out topics) writes
about topics of the default corpus, `python_stdlib`: the Python standard library's own
documentation as pydoc renders it (envs/report/corpora.py), present wherever Python is, so the
env runs out of the box with nothing to download. Each task names its key terms, which
occur in that corpus.

A corpus is a named corpus (`python_stdlib`, `python_docs_html` from Debian's
python3-doc, `installed_packages`: the installed packages' descriptions) or a path to a
folder/file of documents (pdf, docx, html, md, txt). `materialize_corpus` writes a named
corpus to a cache folder once (a rewrite only when its text changed), so ingestion into
the RAG store is idempotent.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

# The corpus names stay importable from here, where task files used to find them.
from .corpora import (  # noqa: F401
    CORPUS_PACKAGES,
    DEFAULT_CORPUS,
    NAMED_CORPORA,
    cache_root,
    is_named_corpus,
    materialize_corpus,
    package_documents,
)

logger = logging.getLogger(__name__)

TASKS_FILE = Path(__file__).with_name("tasks.json")
# The held-out pool of the LLM-team benchmark: 53 topics over two corpora, fixed before any
# policy ran on them (the file says which of them anything was designed on).
HELDOUT_POOL_FILE = Path(__file__).with_name("heldout_pool.json")
# Task files shipped with the env, selectable by name (`env.tasks=heldout_pool`).
TASK_SETS = {"default": TASKS_FILE, "heldout_pool": HELDOUT_POOL_FILE}
SPLITS = ("train", "holdout", "all")


@dataclass(frozen=True)
class Task:
    id: str
    topic: str
    split: str = "train"
    corpus: str = DEFAULT_CORPUS  # a named corpus (envs.report.corpora.NAMED_CORPORA) or a path to documents
    key_terms: tuple[str, ...] = field(default_factory=tuple)
    # The corpus' files the task writes about (names inside the corpus folder). Optional; what
    # makes "held out" checkable: no held-out task needs a document a training task needs.
    documents: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_dict(cls, data: dict, where: str = "task") -> "Task":
        if not isinstance(data, dict):
            raise ValueError(f"{where}: a task must be a mapping, got {type(data).__name__}")
        tid = str(data.get("id") or "").strip() or where
        topic = data.get("topic")
        if not isinstance(topic, str) or not topic.strip():
            raise ValueError(f"{where} ({tid!r}): the task has no topic; every task needs a non-empty 'topic'")
        split = data.get("split", "train")
        if split not in ("train", "holdout"):
            raise ValueError(f"{where} ({tid!r}): split must be 'train' or 'holdout', got {split!r}")
        unknown = set(data) - {"id", "topic", "split", "corpus", "key_terms", "documents"}
        if unknown:
            raise ValueError(f"{where} ({tid!r}): unknown keys {sorted(unknown)}")
        return cls(
            id=tid,
            topic=topic.strip(),
            split=split,
            corpus=str(data.get("corpus") or DEFAULT_CORPUS),
            key_terms=tuple(str(t) for t in data.get("key_terms", ())),
            documents=tuple(str(d) for d in data.get("documents", ())),
        )

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "topic": self.topic,
            "split": self.split,
            "corpus": self.corpus,
            "key_terms": list(self.key_terms),
            "documents": list(self.documents),
        }


def load_tasks(source: str | Path | Sequence[Any] | None = None, split: str = "train") -> list[Task]:
    """Tasks of one split from a JSON file (default: the shipped set), a shipped set's name
    (`TASK_SETS`: default, heldout_pool) or a list of dicts/topics.

    A bare string in a list is a topic on the default corpus.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if isinstance(source, str) and source in TASK_SETS:
        source = TASK_SETS[source]
    if source is None or isinstance(source, (str, Path)):
        path = Path(source) if source is not None else TASKS_FILE
        if not path.is_file():
            raise FileNotFoundError(f"task file {path} not found (shipped task sets by name: {', '.join(TASK_SETS)})")
        doc = json.loads(path.read_text(encoding="utf-8"))
        raw = doc.get("tasks") if isinstance(doc, dict) else doc
        where = str(path)
    else:
        raw, where = list(source), "tasks"
    if not isinstance(raw, list):
        raise ValueError(f"{where}: expected a list of tasks")
    tasks = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            item = {"id": f"task-{i}", "topic": item}
        elif hasattr(item, "items"):
            item = dict(item.items())
        tasks.append(Task.from_dict(item, f"{where}[{i}]"))
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{where}: duplicate task ids {sorted({i for i in ids if ids.count(i) > 1})}")
    chosen = [t for t in tasks if split == "all" or t.split == split]
    if not chosen:
        # A user's single-topic list has no holdout: evaluate on the same topics, said plainly.
        if tasks and all(t.split == "train" for t in tasks) and split == "holdout":
            raise ValueError(f"{where}: no task has split 'holdout'; mark some tasks as holdout or use split=all")
        raise ValueError(f"{where}: no task in split {split!r}")
    return chosen


# -- the corpus' RAG store ---------------------------------------------------------------
# One open handle per store folder, rag config and corpus in a process, on purpose: the
# folder is one on-disk resource, and separate handles on it in one process made the same
# episode retrieve different evidence with one env than with four (measured:
# tests/algos/training/test_batching_servers.py); different configs still get different handles.
_OPEN_LOCK = threading.RLock()
_OPEN_STORES: dict[tuple[str, str, str], Any] = {}


def rag_config(rag_cfg: Any, store_path: str | Path) -> Any:
    """The typed rag config (defaults + overrides) pointing at `store_path`."""
    from omegaconf import OmegaConf

    from rag import RagConfig

    cfg = OmegaConf.merge(OmegaConf.structured(RagConfig), rag_cfg or {})
    cfg.store.path = str(store_path)
    cfg.ingest.progress = False
    return cfg


def default_store_path(corpus: str, rag_cfg: Any) -> Path:
    """`<cache>/stores/<corpus>-<embedding backend>`: one store per corpus and embedding."""
    backend = str(((rag_cfg or {}).get("embedding") or {}).get("backend", "minilm"))
    slug = corpus if is_named_corpus(corpus) else re.sub(r"[^A-Za-z0-9]+", "-", str(corpus)).strip("-")[-60:]
    return cache_root() / "stores" / f"{slug}-{backend.rsplit('.', 1)[-1]}"


def corpus_store(corpus: str = DEFAULT_CORPUS, rag_cfg: Any = None, store_path: str | Path | None = None) -> Any:
    """The process' one handle on the RAG store holding `corpus`, the corpus ingested into it
    when the handle is first opened.

    Ingestion is idempotent (content hashes), so another process re-reads the files, finds
    them unchanged and writes nothing. An empty corpus gives an empty
    store (the Researcher then reports [RESEARCH_EXHAUSTED]); a missing path is an error.
    """
    from rag import ingest_paths, open_store

    path = Path(store_path).expanduser() if store_path else default_store_path(corpus, rag_cfg)
    cfg = rag_config(rag_cfg, path)
    key = (str(path.resolve()), str(cfg), corpus)
    with _OPEN_LOCK:
        store = _OPEN_STORES.get(key)
        if store is None:
            store = open_store(cfg)
            docs = materialize_corpus(corpus)
            report = ingest_paths(store, [docs], progress=False)
            if len(store) == 0:
                logger.warning("corpus %s gave no chunks: the Researcher will find nothing\n%s", docs, report.render())
            _OPEN_STORES[key] = store
        return store
