"""A sqlite response cache that makes a run replayable.

The key hashes everything that determines a completion: backend, endpoint (the server's
URL, so one server's answers are never replayed for another), model, messages, JSON
schema and sampling parameters. With temperature 0 or a fixed seed, a replay from the
cache yields exactly the texts and token counts of the original run.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any


def cache_key(**parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


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
                " prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL)"
            )
            self._db.commit()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> tuple[str, int, int] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens FROM responses WHERE key=?", (key,)
            ).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return row[0], int(row[1]), int(row[2])

    def put(self, key: str, text: str, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                (key, text, int(prompt_tokens), int(completion_tokens)),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
