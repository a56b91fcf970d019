"""What the store keeps per chunk and per file: content-hash chunk ids, a chunk's locations
(every file and page its text occurs at) and the flat metadata Chroma holds, a file's
record and an ingest's plan for it. Plain data and pure functions; `rag.store` writes them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from rag.chunking import Chunk


def source_key(path: str | Path) -> str:
    """A file's identity in the store: its resolved absolute path."""
    return Path(path).expanduser().resolve().as_posix()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def chunk_id(text: str) -> str:
    """Content-hash id: the same text gets the same id in every file and every run."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def chunk_ids(chunks: Sequence[Chunk]) -> List[str]:
    return [chunk_id(chunk.text) for chunk in chunks]


Location = Tuple[str, str, Optional[int]]  # (source name, source key, page)


def decode_locations(metadata: dict) -> Dict[str, dict]:
    """A chunk's locations, {source key: {name, sha, kind, pages, begins}}; a store written before
    schema 2 has only the one location in the flat fields."""
    raw = metadata.get("locations")
    if raw:
        return json.loads(raw)
    page = metadata.get("page")
    return {
        metadata["source_path"]: {
            "name": metadata["source"],
            "sha": metadata["file_sha256"],
            "kind": metadata.get("kind", ""),
            "pages": [page],
        }
    }


def locations_of(metadata: dict) -> List[Location]:
    """Every (source name, source key, page) a chunk's text occurs at, first location first."""
    return [(entry["name"], key, page) for key, entry in decode_locations(metadata).items() for page in entry["pages"]]


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


def _plan_locations(plan: "FilePlan") -> Dict[str, dict]:
    """{chunk id: this file's location entry} for a plan, ids in first-occurrence order."""
    entries: Dict[str, dict] = {}
    for chunk, identifier in zip(plan.chunks, plan.ids):
        entry = entries.get(identifier)
        if entry is None:
            entry = entries[identifier] = {
                "name": plan.name,
                "sha": plan.file_sha256,
                "kind": plan.kind,
                "pages": [],
                # Whether its text begins a paragraph here (`Chunk.begins_paragraph`); none in a store written before.
                "begins": chunk.begins_paragraph,
            }
        if chunk.page not in entry["pages"]:
            entry["pages"].append(chunk.page)
    return entries


def _flat_metadata(locations: Dict[str, dict], ordinal: int, token_count: int) -> dict:
    key, first = next(iter(locations.items()))
    metadata = {
        "source": first["name"],
        "source_path": key,
        "file_sha256": first["sha"],
        "kind": first["kind"],
        "ordinal": ordinal,
        "token_count": token_count,
        "locations": json.dumps(locations, separators=(",", ":")),
    }
    page = first["pages"][0]
    if page is not None:
        metadata["page"] = page
    return metadata
