"""A sqlite response cache that makes a run replayable.

The key hashes everything that determines a completion: backend, endpoint (the server's
URL, so one server's answers are never replayed for another), model, messages, JSON
schema and sampling parameters. With temperature 0 or a fixed seed, a replay from the
cache yields exactly the texts and token counts of the original run, and the note of an
answer the backend could only produce by a fallback (`Completion.fallback`): a replayed
fallback stays flagged (the LLM judge and the referee read it).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, NamedTuple


def cache_key(**parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CachedResponse(NamedTuple):
    text: str
    prompt_tokens: int
    completion_tokens: int
    fallback: str  # the backend's fallback note ("" when the answer needed none)


class ResponseCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # One connection shared across threads, guarded by our lock; WAL lets several
        # processes of a sweep read and write the same file.
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, text TEXT NOT NULL,"
                " prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,"
                " fallback TEXT NOT NULL DEFAULT '')"
            )
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
            if "fallback" not in columns:  # a cache written before fallbacks were recorded: none were
                self._db.execute("ALTER TABLE responses ADD COLUMN fallback TEXT NOT NULL DEFAULT ''")
            self._db.commit()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> CachedResponse | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens, fallback FROM responses WHERE key=?", (key,)
            ).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return CachedResponse(row[0], int(row[1]), int(row[2]), row[3])

    def put(self, key: str, text: str, prompt_tokens: int, completion_tokens: int, fallback: str = "") -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, text, prompt_tokens, completion_tokens, fallback)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, text, int(prompt_tokens), int(completion_tokens), fallback),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
