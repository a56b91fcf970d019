"""The reference judge's embeddings: unit-norm vectors of the texts it compares, each text
embedded once and kept in a bounded least-recently-used cache, safe to share between the
worker threads that score several episodes."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable

import numpy as np


class VectorCache:
    """Unit-norm rows for texts, embedding only those not seen before (at most `cache_size` kept)."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray], cache_size: int = 50000):
        self.embed = embed
        self.cache_size = cache_size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        # One judge may serve several episodes whose scorings run in worker threads.
        self._lock = threading.Lock()

    def rows(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return self._rows_locked(texts)

    def _rows_locked(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            mat = np.asarray(self.embed(missing), dtype=np.float64)
            if mat.ndim != 2 or mat.shape[0] != len(missing):
                raise ValueError(f"embedding returned shape {mat.shape} for {len(missing)} texts; expected (n, dim)")
            norms = np.linalg.norm(mat, axis=1, keepdims=True)
            mat = mat / np.where(norms == 0.0, 1.0, norms)
            for t, v in zip(missing, mat):
                self._vectors[t] = v
        rows = []
        for t in texts:
            self._vectors.move_to_end(t)
            rows.append(self._vectors[t])
        while len(self._vectors) > self.cache_size:
            self._vectors.popitem(last=False)
        return np.stack(rows)
