from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from rag import HashingEmbedding, open_store
from rag.config import RagConfig


def make_rag_cfg(store_path: Path, **overrides):
    cfg = OmegaConf.structured(RagConfig)
    cfg.store.path = str(store_path)
    cfg.embedding.backend = "hashing"
    cfg.ingest.progress = False
    for dotted, value in overrides.items():
        OmegaConf.update(cfg, dotted.replace("__", "."), value, merge=False)
    return cfg


@pytest.fixture
def rag_cfg(tmp_path):
    return make_rag_cfg(tmp_path / "store")


@pytest.fixture
def store(rag_cfg):
    return open_store(rag_cfg, embedding=HashingEmbedding(dim=rag_cfg.embedding.hashing.dim))


@pytest.fixture
def docs_dir(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    return folder
