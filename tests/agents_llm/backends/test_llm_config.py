"""The llm config group: structured, validated at compose time, buildable."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException

from agents_llm.backends import make_backend, make_ledger, LLMConfigError
from agents_llm.backends.config import register_configs

CONF = str(Path(__file__).resolve().parents[3] / "conf")


def _compose(*overrides):
    register_configs()
    from hydra.core.config_store import ConfigStore
    from dataclasses import dataclass
    from typing import Any

    @dataclass
    class Root:
        llm: Any = None
        prompt: str = ""
        system: str = ""
        json_schema: Any = None

    ConfigStore.instance().store(name="base_chat", node=Root)
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(config_name="chat", overrides=list(overrides))


@pytest.mark.parametrize("name", ["llamacpp", "openai", "ollama", "scripted"])
def test_each_backend_config_composes(name):
    cfg = _compose(f"llm={name}")
    assert cfg.llm.backend == name


def test_unknown_key_fails_naming_it():
    with pytest.raises(ConfigCompositionException) as e:
        _compose("llm=scripted", "llm.temprature=0.5")
    assert "temprature" in str(e.value.__cause__) or "temprature" in str(e.value)


def test_wrong_type_fails_naming_the_key():
    with pytest.raises(ConfigCompositionException) as e:
        _compose("llm.timeout_s=soon")
    assert "llm.timeout_s" in str(e.value.__cause__)


def test_bad_json_mode_is_refused():
    with pytest.raises(ConfigCompositionException) as e:
        _compose("llm=openai", "llm.json_mode=yaml")
    assert "json_mode" in str(e.value.__cause__)


def test_scripted_backend_builds_from_composed_config():
    cfg = _compose("llm=scripted", "llm.latency_s=0.01", "llm.retry.max_attempts=1")
    backend = make_backend(cfg.llm)
    assert backend.name == "scripted" and backend.latency_s == 0.01 and backend.retry.max_attempts == 1


def test_zero_episode_budget_fails_naming_the_key():
    cfg = _compose("llm=scripted", "llm.episode_token_budget=0")
    with pytest.raises(LLMConfigError, match="llm.episode_token_budget"):
        make_ledger(cfg.llm)


def test_unknown_backend_name_is_refused():
    with pytest.raises(LLMConfigError, match="unknown llm.backend 'gpt'"):
        make_backend({"backend": "gpt", "model": "x"})
