"""Embeddings from an Ollama server's /api/embed, batched, with graceful degradation.

A batch the server rejects is re-embedded chunk by chunk; only a chunk that keeps
failing on its own is truncated (halved until it fits). Transient failures (connection
refused, timeouts, 429 and gateway errors) are retried with backoff by tenacity.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import httpx
import numpy as np
import ollama
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from rag.tokenization import HuggingFaceTokenizer, Tokenizer, WordTokenizer
from report_protocol.url_policy import url_credential_problem

logger = logging.getLogger(__name__)

_TRANSIENT_STATUS = {408, 429, 502, 503, 504}


class EmbeddingServerError(RuntimeError):
    """The embedding server could not be reached or kept failing."""


class EmbeddingRejectedError(RuntimeError):
    """The server rejected one chunk even after truncation."""


def _is_transient(error: BaseException) -> bool:
    if isinstance(error, ollama.ResponseError):
        return error.status_code in _TRANSIENT_STATUS
    return isinstance(error, (ConnectionError, httpx.TransportError))


@dataclass
class TruncationRecord:
    index: int
    original_chars: int
    kept_chars: int


@dataclass
class OllamaEmbedStats:
    requests: int = 0
    rejected_batches: int = 0
    truncations: List[TruncationRecord] = field(default_factory=list)


class OllamaEmbedding:
    def __init__(
        self,
        host: str = "http://127.0.0.1:11434",
        model: str = "nomic-embed-text",
        batch_size: int = 32,
        timeout_s: float = 30.0,
        max_retries: int = 3,
        retry_wait_s: float = 0.5,
        min_truncated_chars: int = 32,
        tokenizer_file: Optional[str] = None,
        max_tokens: int = 256,
    ):
        problem = url_credential_problem(host or "")
        if problem:  # the host is written to configs, store metadata and logs
            raise ValueError(
                f"rag.embedding.ollama.host must not carry credentials, but it has {problem}; "
                "put them in the server's own settings"
            )
        self.host = host
        self.model = model
        self.batch_size = max(1, batch_size)
        self.max_retries = max_retries
        self.retry_wait_s = retry_wait_s
        self.min_truncated_chars = min_truncated_chars
        self.max_tokens = max_tokens
        self.identity = f"ollama:{model}"
        self.tokenizer: Tokenizer = HuggingFaceTokenizer(tokenizer_file) if tokenizer_file else WordTokenizer()
        self.stats = OllamaEmbedStats()
        # trust_env=False: a proxy from the environment must not intercept a local server.
        self._client = ollama.Client(host=host, timeout=timeout_s, trust_env=False)

    def _where(self) -> str:
        return f"Ollama embed endpoint {self.host}/api/embed (model {self.model!r})"

    def _request(self, texts: List[str]) -> List[Sequence[float]]:
        """One /api/embed call, transient failures retried."""
        retrying = Retrying(
            retry=retry_if_exception(_is_transient),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_exponential(multiplier=self.retry_wait_s, max=10 * self.retry_wait_s + 1),
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    self.stats.requests += 1
                    response = self._client.embed(model=self.model, input=texts)
        except ollama.ResponseError as error:
            if _is_transient(error):
                raise EmbeddingServerError(f"{self._where()} kept failing: {error}") from error
            raise
        except (ConnectionError, httpx.TransportError) as error:
            raise EmbeddingServerError(
                f"cannot reach {self._where()} after {self.max_retries + 1} attempts: {error}. "
                "Is `ollama serve` running and is rag.embedding.ollama.host right?"
            ) from error
        embeddings = list(response.embeddings)
        if len(embeddings) != len(texts):
            raise EmbeddingServerError(f"{self._where()} returned {len(embeddings)} embeddings for {len(texts)} inputs")
        return embeddings

    def _embed_single(self, index: int, text: str) -> Sequence[float]:
        candidate = text
        while True:
            try:
                vector = self._request([candidate])[0]
            except ollama.ResponseError as error:
                shorter = len(candidate) // 2
                if shorter < self.min_truncated_chars:
                    raise EmbeddingRejectedError(
                        f"{self._where()} rejected input {index} ({len(text)} chars, starts "
                        f"{text[:60]!r}) even truncated to {len(candidate)} chars: {error}"
                    ) from error
                logger.warning(
                    "%s rejected input %d at %d chars; truncating to %d", self._where(), index, len(candidate), shorter
                )
                candidate = candidate[:shorter]
                continue
            if len(candidate) < len(text):
                self.stats.truncations.append(TruncationRecord(index, len(text), len(candidate)))
            return vector

    def _embed_batch(self, offset: int, batch: List[str]) -> List[Sequence[float]]:
        try:
            return self._request(batch)
        except ollama.ResponseError as error:
            if len(batch) == 1:
                return [self._embed_single(offset, batch[0])]
            self.stats.rejected_batches += 1
            logger.warning("%s rejected a batch of %d (%s); embedding one by one", self._where(), len(batch), error)
            return [self._embed_single(offset + i, text) for i, text in enumerate(batch)]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        vectors: List[Sequence[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed_batch(start, texts[start : start + self.batch_size]))
        if not vectors:
            return np.zeros((0, 0), dtype=np.float32)
        matrix = np.asarray(vectors, dtype=np.float32)
        # Ollama models are not all normalised; cosine distance in Chroma does not need
        # it, but normalising keeps every backend's vectors comparable.
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        return matrix / norms

    embed_queries = embed_documents
