"""The persistent store: a Chroma collection (the source of truth) and a BM25 index
kept in step with it.

Chroma holds every chunk's text, metadata and vector. On open, the BM25 index and the
per-source bookkeeping are loaded from Chroma once, so they agree with it after any
restart; afterwards every mutation goes to Chroma first and then to BM25.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import chromadb
import numpy as np
from chromadb.config import Settings

from rag.chunking import Chunk
from rag.config import validate_rag_config
from rag.embeddings import ChromaEmbeddingAdapter, Embedding, build_embedding
from rag.lexical import LexicalIndex, build_lexical_index

logger = logging.getLogger(__name__)

_SCHEMA_VERSION = 1
_LOAD_PAGE = 5000


def source_key(path: str | Path) -> str:
    """A file's identity in the store: its resolved absolute path."""
    return Path(path).expanduser().resolve().as_posix()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def chunk_ids(key: str, chunks: Sequence[Chunk]) -> List[str]:
    """Content-hash ids: the same text on the same page of the same file gets the same id
    in every run. Repeated identical chunks are told apart by their occurrence count."""
    seen: Counter = Counter()
    ids = []
    for chunk in chunks:
        identity = (chunk.page, chunk.text)
        occurrence = seen[identity]
        seen[identity] += 1
        payload = f"{key}\x1f{chunk.page}\x1f{occurrence}\x1f{chunk.text}".encode("utf-8")
        ids.append(hashlib.sha256(payload).hexdigest()[:32])
    return ids


@dataclass
class SourceRecord:
    key: str
    name: str
    file_sha256: str
    chunk_ids: List[str] = field(default_factory=list)


@dataclass
class FilePlan:
    """What one file should look like in the store after ingestion."""

    key: str
    name: str
    file_sha256: str
    kind: str
    chunks: List[Chunk]
    ids: List[str]
    embedding_inputs: List[str]


@dataclass
class CommitCounts:
    added: int = 0
    removed: int = 0
    unchanged: int = 0


class RagStore:
    def __init__(self, cfg, embedding: Optional[Embedding] = None):
        validate_rag_config(cfg)
        self.cfg = cfg
        self.embedding: Embedding = embedding or build_embedding(cfg.embedding, cfg.chunking)
        self.path = Path(cfg.store.path).expanduser()
        self.path.mkdir(parents=True, exist_ok=True)
        self._client = chromadb.PersistentClient(
            path=str(self.path), settings=Settings(anonymized_telemetry=False, allow_reset=False)
        )
        self._adapter = ChromaEmbeddingAdapter(self.embedding)
        self.collection = self._open_collection(cfg.store.collection)
        self.lexical: LexicalIndex = build_lexical_index(cfg.store.bm25_backend)
        self.sources: Dict[str, SourceRecord] = {}
        self._max_batch = max(1, min(self._client.get_max_batch_size(), 5000))
        self._load()

    # -- opening ---------------------------------------------------------------------

    def _open_collection(self, name: str):
        existing = {collection.name for collection in self._client.list_collections()}
        if name not in existing:
            return self._client.create_collection(
                name,
                embedding_function=self._adapter,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"embedding": self.embedding.identity, "schema": _SCHEMA_VERSION},
            )
        collection = self._client.get_collection(name, embedding_function=self._adapter)
        built_with = (collection.metadata or {}).get("embedding")
        if built_with != self.embedding.identity:
            raise ValueError(
                f"store {self.path} (collection {name!r}) was built with embedding "
                f"{built_with!r} but rag.embedding gives {self.embedding.identity!r}; "
                "use another rag.store.path or rag.store.collection, or the same embedding"
            )
        return collection

    def _load(self) -> None:
        """Rebuild BM25 and source bookkeeping from Chroma, the source of truth."""
        self.lexical = build_lexical_index(self.cfg.store.bm25_backend)
        self.sources = {}
        offset = 0
        while True:
            page = self.collection.get(include=["documents", "metadatas"], limit=_LOAD_PAGE, offset=offset)
            ids = page["ids"]
            if not ids:
                break
            self.lexical.add(ids, page["documents"])
            for chunk_id, metadata in zip(ids, page["metadatas"]):
                key = metadata["source_path"]
                record = self.sources.get(key)
                if record is None:
                    record = self.sources[key] = SourceRecord(key, metadata["source"], metadata["file_sha256"])
                record.chunk_ids.append(chunk_id)
            offset += len(ids)
            if len(ids) < _LOAD_PAGE:
                break

    # -- reading ---------------------------------------------------------------------

    def __len__(self) -> int:
        return self.collection.count()

    def source_state(self, key: str) -> Optional[SourceRecord]:
        return self.sources.get(key)

    def missing_ids(self, plan: FilePlan) -> List[int]:
        """Indices of the plan's chunks not yet in the store (those that need vectors)."""
        record = self.sources.get(plan.key)
        present = set(record.chunk_ids) if record else set()
        return [index for index, chunk_id in enumerate(plan.ids) if chunk_id not in present]

    def get_chunks(self, ids: Sequence[str]) -> Dict[str, dict]:
        if not ids:
            return {}
        found = self.collection.get(ids=list(ids), include=["documents", "metadatas"])
        return {
            chunk_id: {"text": text, "metadata": metadata}
            for chunk_id, text, metadata in zip(found["ids"], found["documents"], found["metadatas"])
        }

    def consistency_problems(self) -> List[str]:
        """Differences between Chroma, BM25 and the source bookkeeping (empty when sound)."""
        chroma_ids: set = set()
        offset = 0
        while True:
            page = self.collection.get(include=[], limit=_LOAD_PAGE, offset=offset)
            chroma_ids.update(page["ids"])
            if len(page["ids"]) < _LOAD_PAGE:
                break
            offset += len(page["ids"])
        source_ids = {chunk_id for record in self.sources.values() for chunk_id in record.chunk_ids}
        problems = []
        if len(self.lexical) != len(chroma_ids):
            problems.append(f"BM25 holds {len(self.lexical)} chunks, Chroma {len(chroma_ids)}")
        missing_from_bm25 = [chunk_id for chunk_id in chroma_ids if chunk_id not in self.lexical]
        if missing_from_bm25:
            problems.append(f"{len(missing_from_bm25)} Chroma chunks missing from BM25")
        if source_ids != chroma_ids:
            problems.append(
                f"source records list {len(source_ids - chroma_ids)} ids Chroma lacks and miss "
                f"{len(chroma_ids - source_ids)} it has"
            )
        return problems

    # -- writing ---------------------------------------------------------------------

    def commit(self, plans: Sequence[FilePlan], vectors: Sequence[np.ndarray]) -> List[CommitCounts]:
        """Make each planned file's chunks exactly the store's chunks for that file.

        `vectors[i]` holds embeddings for `missing_ids(plans[i])`, in that order. New chunks
        are written before stale ones are deleted, so a failure in between leaves extra
        chunks, never a file with none.
        """
        add_ids: List[str] = []
        add_vectors: List[np.ndarray] = []
        add_texts: List[str] = []
        add_metadata: List[dict] = []
        stale_ids: List[str] = []
        counts: List[CommitCounts] = []
        for plan, plan_vectors in zip(plans, vectors, strict=True):
            missing = self.missing_ids(plan)
            if len(missing) != len(plan_vectors):
                raise ValueError(f"{plan.key}: {len(plan_vectors)} vectors for {len(missing)} new chunks")
            record = self.sources.get(plan.key)
            old_ids = set(record.chunk_ids) if record else set()
            new_ids = set(plan.ids)
            stale_ids.extend(sorted(old_ids - new_ids))
            for index, vector in zip(missing, plan_vectors):
                chunk = plan.chunks[index]
                metadata = {
                    "source": plan.name,
                    "source_path": plan.key,
                    "file_sha256": plan.file_sha256,
                    "kind": plan.kind,
                    "ordinal": chunk.ordinal,
                    "token_count": chunk.token_count,
                }
                if chunk.page is not None:
                    metadata["page"] = chunk.page
                add_ids.append(plan.ids[index])
                add_vectors.append(vector)
                add_texts.append(chunk.text)
                add_metadata.append(metadata)
            counts.append(CommitCounts(added=len(missing), removed=len(old_ids - new_ids),
                                       unchanged=len(new_ids) - len(missing)))

        for start in range(0, len(add_ids), self._max_batch):
            end = start + self._max_batch
            self.collection.upsert(
                ids=add_ids[start:end],
                embeddings=np.asarray(add_vectors[start:end], dtype=np.float32),
                documents=add_texts[start:end],
                metadatas=add_metadata[start:end],
            )
        # Unchanged chunks of a changed file keep their vectors, but their metadata must
        # carry the new file hash, or a restart would see the old one.
        refresh_ids, refresh_metadata = [], []
        for plan in plans:
            record = self.sources.get(plan.key)
            if record is None or record.file_sha256 == plan.file_sha256:
                continue
            previous_ids = set(record.chunk_ids)
            kept = [chunk_id for chunk_id in plan.ids if chunk_id in previous_ids]
            if kept:
                current = self.get_chunks(kept)
                for chunk_id in kept:
                    metadata = dict(current[chunk_id]["metadata"])
                    metadata["file_sha256"] = plan.file_sha256
                    refresh_ids.append(chunk_id)
                    refresh_metadata.append(metadata)
        for start in range(0, len(refresh_ids), self._max_batch):
            end = start + self._max_batch
            self.collection.update(ids=refresh_ids[start:end], metadatas=refresh_metadata[start:end])
        for start in range(0, len(stale_ids), self._max_batch):
            self.collection.delete(ids=stale_ids[start:start + self._max_batch])

        self.lexical.remove(stale_ids)
        self.lexical.add(add_ids, add_texts)
        for plan in plans:
            self.sources[plan.key] = SourceRecord(plan.key, plan.name, plan.file_sha256, list(plan.ids))
        return counts

    def resolve_source(self, source: str | Path) -> Optional[str]:
        """A source key from a path, a key, or a file name that names one source."""
        text = str(source)
        if text in self.sources:
            return text
        key = source_key(text)
        if key in self.sources:
            return key
        by_name = [record.key for record in self.sources.values() if record.name == text]
        return by_name[0] if len(by_name) == 1 else None

    def delete_source(self, source: str | Path) -> int:
        """Remove every chunk of one source; returns how many were removed."""
        key = self.resolve_source(source)
        if key is None:
            names = [record.name for record in self.sources.values() if record.name == str(source)]
            detail = "it names several sources; give the path" if len(names) > 1 else "no such source in the store"
            raise KeyError(f"cannot delete {str(source)!r}: {detail}")
        record = self.sources[key]
        for start in range(0, len(record.chunk_ids), self._max_batch):
            self.collection.delete(ids=record.chunk_ids[start:start + self._max_batch])
        self.lexical.remove(record.chunk_ids)
        del self.sources[key]
        return len(record.chunk_ids)

    def reload(self) -> None:
        """Resynchronise BM25 and bookkeeping with Chroma (after a failed write)."""
        self._load()


def open_store(cfg, embedding: Optional[Embedding] = None) -> RagStore:
    """Open (or create) the store described by a `rag` config."""
    return RagStore(cfg, embedding=embedding)
