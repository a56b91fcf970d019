from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf.errors import ConfigAttributeError, ValidationError

from rag.config import EmbeddingBackend, QueryMode, register_configs

CONF_DIR = str(Path(__file__).resolve().parents[2] / "conf")


@pytest.fixture(autouse=True)
def _hydra():
    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        yield
    GlobalHydra.instance().clear()


def test_defaults_compose_for_both_apps():
    ingest = compose("ingest", overrides=["docs=some/folder"])
    assert ingest.docs == "some/folder" and list(ingest.delete) == []
    assert ingest.rag.embedding.backend == EmbeddingBackend.minilm
    assert ingest.rag.query.rrf_k == 60 and ingest.rag.query.max_cosine_distance == 0.7
    assert ingest.rag.query.max_queries == 3 and ingest.rag.query.mode == QueryMode.hybrid
    query = compose("query", overrides=["q=[a,b]", "rag=hashing"])
    assert list(query.q) == ["a", "b"] and query.rag.embedding.backend == EmbeddingBackend.hashing


def test_rag_group_composes_on_its_own():
    cfg = compose("rag/default")
    assert cfg.rag.chunking.max_tokens == 256


@pytest.mark.parametrize(
    "override, error, key",
    [
        ("rag.query.top_k=abc", ValidationError, "rag.query.top_k"),
        ("rag.query.topk=3", ConfigAttributeError, "rag.query.topk"),
        ("rag.embedding.backend=word2vec", ValidationError, "rag.embedding.backend"),
        ("rag.chunking.overlap_tokens=1.5", ValidationError, "rag.chunking.overlap_tokens"),
        ("rag.guard.enabled=maybe", ValidationError, "rag.guard.enabled"),
    ],
)
def test_wrong_key_or_type_fails_at_compose_naming_the_key(override, error, key):
    with pytest.raises(Exception) as raised:
        compose("ingest", overrides=["docs=x", override])
    chain, current = [], raised.value
    while current is not None:
        chain.append(current)
        current = current.__cause__ or current.__context__
    assert any(isinstance(item, error) for item in chain), chain
    assert key in "\n".join(str(item) for item in chain)


def test_wrong_key_in_a_yaml_file_of_the_group_fails(tmp_path):
    (tmp_path / "rag").mkdir()
    (tmp_path / "rag" / "mine.yaml").write_text("defaults:\n  - base_rag\n  - _self_\nquery:\n  topk: 3\n")
    (tmp_path / "app.yaml").write_text("defaults:\n  - rag: mine\n  - _self_\n")
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(tmp_path), version_base="1.3"):
        with pytest.raises(Exception, match="topk"):
            compose("app")
