"""The persistent store: a Chroma collection (the source of truth) and a BM25 index
kept in step with it.

Chroma holds every chunk's text, metadata and vector. On open, the BM25 index and the
per-source bookkeeping are loaded from Chroma once, so they agree with it after any
restart; afterwards every mutation goes to Chroma first and then to BM25.

A chunk's id is the hash of its text, so identical text is stored (and returned by a
search) once however often it occurs: a file of 477 identical lines used to fill every
vector top-20 with copies of itself. Its metadata keeps every location of that text:
`locations` maps each source key to the file's name, hash, kind and the pages the text
is on; `source`, `source_path`, `page` and `file_sha256` name the first location
(`file_sha256`: the file's digest and the ingestion version that chunked it, rag.ingest.ingest_stamp).

Writers of one store are serialised across processes: :meth:`RagStore.writing` holds an
exclusive file lock (``<store>/.write.lock``) and, when another process wrote since this
one loaded (``<store>/.generation`` changed), reloads the bookkeeping from Chroma first,
so two ingests into one store at once add up instead of overwriting each other's chunk
locations. The ids, locations and metadata it writes are `rag.store_records`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple, cast

import chromadb
import numpy as np
from chromadb.api.types import Embeddable, EmbeddingFunction
from chromadb.config import Settings
from filelock import FileLock, Timeout

from rag.config import validate_rag_config
from rag.embeddings import ChromaEmbeddingAdapter, Embedding, build_embedding
from rag.lexical import LexicalIndex, build_lexical_index
from rag.store_records import (  # noqa: F401 (re-exported: ingest and retrieval import them from rag.store)
    CommitCounts,
    FilePlan,
    Location,
    SourceRecord,
    _flat_metadata,
    _plan_locations,
    chunk_id,
    chunk_ids,
    decode_locations,
    file_sha256,
    locations_of,
    source_key,
)

logger = logging.getLogger(__name__)

# 2: content-hash ids with a `locations` map (1: one id per occurrence).
_SCHEMA_VERSION = 2
_LOAD_PAGE = 5000
WRITE_LOCK = ".write.lock"  # in the store's folder: held by the process writing the store
GENERATION = ".generation"  # in the store's folder: a new value after each locked write


class RagStore:
    def __init__(self, cfg, embedding: Optional[Embedding] = None):
        validate_rag_config(cfg)
        self.cfg = cfg
        self.embedding: Embedding = embedding or build_embedding(cfg.embedding, cfg.chunking)
        self.path = Path(cfg.store.path).expanduser()
        self.path.mkdir(parents=True, exist_ok=True)
        # Chroma types the parameter EmbeddingFunction[Documents | Images] although its own text
        # functions (its default included) take documents only, as ours does; a store hands Chroma
        # no images (nor, with vectors passed explicitly, anything to embed), so the cast is safe.
        self._adapter = cast("EmbeddingFunction[Embeddable]", ChromaEmbeddingAdapter(self.embedding))
        # Two processes creating one new store: one creates it. The client too: opening a new folder,
        # Chroma creates its tables, and a second process doing so at once fails with "table
        # collections already exists" (seen in CI on test_two_processes_ingesting_into_one_store_at_once).
        with FileLock(str(self.path / WRITE_LOCK)):
            self._client = chromadb.PersistentClient(
                path=str(self.path), settings=Settings(anonymized_telemetry=False, allow_reset=False)
            )
            self.collection = self._open_collection(cfg.store.collection)
            self._generation = self._stored_generation()  # what the bookkeeping loaded below reflects
        self.lexical: LexicalIndex = build_lexical_index(
            cfg.store.bm25_backend, bm25s_min_chunks=cfg.store.bm25s_min_chunks
        )
        self.sources: Dict[str, SourceRecord] = {}
        self._writes = 0  # Chroma writes by this object (see writing())
        self._max_batch = max(1, min(self._client.get_max_batch_size(), 5000))
        self._load()

    # -- opening ---------------------------------------------------------------------

    def _open_collection(self, name: str):
        existing = {collection.name for collection in self._client.list_collections()}
        if name not in existing:
            return self._client.create_collection(
                name,
                embedding_function=self._adapter,
                configuration={
                    "hnsw": {
                        "space": "cosine",
                        "ef_construction": self.cfg.store.index_ef_construction,
                        "ef_search": self.cfg.store.index_ef_search,
                    }
                },
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
        schema = (collection.metadata or {}).get("schema", 1)
        if schema < _SCHEMA_VERSION:
            # Still readable; files ingested again (changed) are stored deduplicated.
            logger.warning(
                "store %s was written with schema %s: identical chunks may be stored several "
                "times; delete it and ingest again to store each text once",
                self.path,
                schema,
            )
        return collection

    def _load(self) -> None:
        """Rebuild BM25 and source bookkeeping from Chroma, the source of truth."""
        self.lexical = build_lexical_index(
            self.cfg.store.bm25_backend, bm25s_min_chunks=self.cfg.store.bm25s_min_chunks
        )
        self.sources = {}
        self._owners: Dict[str, Set[str]] = {}  # chunk id -> source keys whose text holds it
        # source key -> {ordinal: chunk id}, where known: a chunk's metadata names its first file's ordinal.
        self._by_place: Dict[str, Dict[int, str]] = {}
        ids: List[str] = []
        texts: List[str] = []
        for identifier, text, metadata in self.iter_chunks():
            ids.append(identifier)
            texts.append(text)
            locations = decode_locations(metadata)
            self._owners[identifier] = set(locations)
            if "ordinal" in metadata:
                self._by_place.setdefault(str(metadata["source_path"]), {})[int(metadata["ordinal"])] = identifier
            for key, entry in locations.items():
                record = self.sources.get(key)
                if record is None:
                    record = self.sources[key] = SourceRecord(key, entry["name"], entry["sha"])
                record.chunk_ids.append(identifier)
        if ids:
            self.lexical.add(ids, texts)

    # -- reading ---------------------------------------------------------------------

    def __len__(self) -> int:
        return self.collection.count()

    def source_state(self, key: str) -> Optional[SourceRecord]:
        return self.sources.get(key)

    def missing_ids(self, plan: FilePlan) -> List[int]:
        """Indices of the plan's chunks whose text is not in the store yet (those that need
        vectors): the first occurrence of each such text."""
        seen: Set[str] = set()
        missing = []
        for index, identifier in enumerate(plan.ids):
            if identifier not in self._owners and identifier not in seen:
                missing.append(index)
            seen.add(identifier)
        return missing

    def iter_chunks(self) -> Iterator[Tuple[str, str, dict]]:
        """Every stored chunk as (id, text, metadata), read from Chroma a page at a time."""
        offset = 0
        while True:
            page = self.collection.get(include=["documents", "metadatas"], limit=_LOAD_PAGE, offset=offset)
            ids = page["ids"]
            yield from zip(ids, page["documents"], page["metadatas"])
            offset += len(ids)
            if len(ids) < _LOAD_PAGE:
                return

    def get_chunks(self, ids: Sequence[str]) -> Dict[str, dict]:
        if not ids:
            return {}
        found = self.collection.get(ids=list(ids), include=["documents", "metadatas"])
        return {
            cid: {"text": text, "metadata": metadata}
            for cid, text, metadata in zip(found["ids"], found["documents"], found["metadatas"])
        }

    def chunk_before(self, metadata: dict) -> Optional[str]:
        """The id of the chunk before the one whose metadata this is, in its (first) file; None for
        a file's first chunk, or where the store does not know it (a text first stored from
        another file, in a store opened from disk)."""
        ordinal = int(metadata.get("ordinal", 0))
        if ordinal <= 0:
            return None
        return self._by_place.get(str(metadata.get("source_path", "")), {}).get(ordinal - 1)

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
        source_ids = {cid for record in self.sources.values() for cid in record.chunk_ids}
        problems = []
        if len(self.lexical) != len(chroma_ids):
            problems.append(f"BM25 holds {len(self.lexical)} chunks, Chroma {len(chroma_ids)}")
        missing_from_bm25 = [cid for cid in chroma_ids if cid not in self.lexical]
        if missing_from_bm25:
            problems.append(f"{len(missing_from_bm25)} Chroma chunks missing from BM25")
        if source_ids != chroma_ids:
            problems.append(
                f"source records list {len(source_ids - chroma_ids)} ids Chroma lacks and miss "
                f"{len(chroma_ids - source_ids)} it has"
            )
        return problems

    # -- writing ---------------------------------------------------------------------

    def commit(
        self,
        plans: Sequence[FilePlan],
        vectors: Sequence[np.ndarray],
        new_chunks: Optional[Sequence[Sequence[int]]] = None,
    ) -> List[CommitCounts]:
        """Make each planned file's chunks exactly the store's chunks for that file.

        `vectors[i]` holds embeddings for `new_chunks[i]` (default: `missing_ids(plans[i])`),
        in that order; a text new to the store needs one vector in the whole batch. New
        chunks are written before stale ones are deleted, so a failure in between leaves
        extra chunks, never a file with none.
        """
        if new_chunks is None:
            new_chunks = [self.missing_ids(plan) for plan in plans]
        new_rows: Dict[str, Tuple[np.ndarray, FilePlan, int]] = {}
        changes: Dict[str, Dict[str, Optional[dict]]] = {}
        counts: List[CommitCounts] = []
        for plan, plan_vectors, indices in zip(plans, vectors, new_chunks, strict=True):
            if len(indices) != len(plan_vectors):
                raise ValueError(f"{plan.key}: {len(plan_vectors)} vectors for {len(indices)} new chunks")
            for index, vector in zip(indices, plan_vectors):
                new_rows.setdefault(plan.ids[index], (vector, plan, index))
            entries = _plan_locations(plan)
            record = self.sources.get(plan.key)
            old_ids = set(record.chunk_ids) if record else set()
            for identifier, entry in entries.items():
                changes.setdefault(identifier, {})[plan.key] = entry
            stale = old_ids - set(entries)
            for identifier in stale:
                changes.setdefault(identifier, {})[plan.key] = None
            counts.append(CommitCounts(added=len(indices), removed=len(stale), unchanged=len(entries) - len(indices)))
        missing = [
            identifier
            for identifier in changes
            if identifier not in self._owners and identifier not in new_rows and any(changes[identifier].values())
        ]
        if missing:
            raise ValueError(f"{len(missing)} new chunk(s) have no vector (first: {missing[0]})")
        self._apply(changes, new_rows)
        for plan in plans:
            self.sources[plan.key] = SourceRecord(plan.key, plan.name, plan.file_sha256, list(_plan_locations(plan)))
            self._by_place[plan.key] = {chunk.ordinal: identifier for chunk, identifier in zip(plan.chunks, plan.ids)}
        return counts

    def _apply(
        self, changes: Dict[str, Dict[str, Optional[dict]]], new_rows: Dict[str, Tuple[np.ndarray, FilePlan, int]]
    ) -> int:
        """Apply per-chunk location changes ({chunk id: {source key: entry, or None to
        remove}}): add chunks that gain their first location, rewrite the metadata of
        those whose locations change, delete those left with none (returns how many)."""
        current = self.get_chunks([identifier for identifier in changes if identifier in self._owners])
        add_ids, add_vectors, add_texts, add_metadata = [], [], [], []
        update_ids, update_metadata, delete_ids = [], [], []
        owners: Dict[str, Set[str]] = {}
        for identifier, per_source in changes.items():
            entry = current.get(identifier)
            locations = decode_locations(entry["metadata"]) if entry else {}
            before = json.dumps(locations, sort_keys=True)
            for key, location in per_source.items():
                if location is None:
                    locations.pop(key, None)
                else:
                    locations[key] = location
            if not locations:
                if entry is not None:
                    delete_ids.append(identifier)
                continue
            owners[identifier] = set(locations)
            if entry is not None:
                if json.dumps(locations, sort_keys=True) != before or "locations" not in entry["metadata"]:
                    update_ids.append(identifier)
                    update_metadata.append(
                        _flat_metadata(
                            locations, entry["metadata"].get("ordinal", 0), entry["metadata"].get("token_count", 0)
                        )
                    )
                continue
            vector, plan, index = new_rows[identifier]
            chunk = plan.chunks[index]
            add_ids.append(identifier)
            add_vectors.append(vector)
            add_texts.append(chunk.text)
            add_metadata.append(_flat_metadata(locations, chunk.ordinal, chunk.token_count))

        for start in range(0, len(add_ids), self._max_batch):
            end = start + self._max_batch
            self.collection.upsert(
                ids=add_ids[start:end],
                embeddings=np.asarray(add_vectors[start:end], dtype=np.float32),
                documents=add_texts[start:end],
                metadatas=add_metadata[start:end],
            )
        for start in range(0, len(update_ids), self._max_batch):
            end = start + self._max_batch
            self.collection.update(ids=update_ids[start:end], metadatas=update_metadata[start:end])
        for start in range(0, len(delete_ids), self._max_batch):
            self.collection.delete(ids=delete_ids[start : start + self._max_batch])

        self._writes += 1
        self.lexical.remove(delete_ids)
        self.lexical.add(add_ids, add_texts)
        for identifier in delete_ids:
            self._owners.pop(identifier, None)
        self._owners.update(owners)
        return len(delete_ids)

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
        """Remove one source; returns how many chunks were deleted (a chunk whose text
        another source also holds stays, with that source as its location)."""
        key = self.resolve_source(source)
        if key is None:
            names = [record.name for record in self.sources.values() if record.name == str(source)]
            detail = "it names several sources; give the path" if len(names) > 1 else "no such source in the store"
            raise KeyError(f"cannot delete {str(source)!r}: {detail}")
        record = self.sources[key]
        deleted = self._apply({identifier: {key: None} for identifier in record.chunk_ids}, {})
        del self.sources[key]
        self._by_place.pop(key, None)
        return deleted

    def reload(self) -> None:
        """Resynchronise BM25 and bookkeeping with Chroma (after a failed write)."""
        self._load()

    @contextmanager
    def writing(self) -> Iterator["RagStore"]:
        """Hold the store's write lock (waiting, and saying so, while another process holds
        it), with the bookkeeping reloaded from Chroma: what another writer added meanwhile
        is seen, and nothing it wrote is overwritten."""
        lock = FileLock(str(self.path / WRITE_LOCK))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            print(f"waiting for another process writing the store {self.path} ...", file=sys.stderr, flush=True)
            lock.acquire()
        try:
            if self._stored_generation() != self._generation:  # another process wrote since we loaded
                self._load()
            writes = self._writes
            yield self
        finally:
            try:
                if self._writes != writes:  # tell the other processes' next write to reload
                    self._generation = uuid.uuid4().hex
                    tmp = self.path / f"{GENERATION}.tmp-{os.getpid()}"
                    tmp.write_text(self._generation)
                    os.replace(tmp, self.path / GENERATION)
            finally:
                lock.release()

    def _stored_generation(self) -> str:
        try:
            return (self.path / GENERATION).read_text()
        except FileNotFoundError:
            return ""


def open_store(cfg, embedding: Optional[Embedding] = None) -> RagStore:
    """Open (or create) the store described by a `rag` config."""
    return RagStore(cfg, embedding=embedding)
