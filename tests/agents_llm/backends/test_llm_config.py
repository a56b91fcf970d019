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


@pytest.mark.parametrize(
    "override, message",
    [
        ("llm.max_tokens=0", "llm.max_tokens must be an integer >= 1, got 0"),
        ("llm.max_tokens=-3", "llm.max_tokens must be an integer >= 1, got -3"),
        ("llm.max_tokens=4096", "llm.max_tokens must be below llm.n_ctx=4096"),
        ("llm.n_ctx=8", "llm.n_ctx must be an integer >= 64, got 8"),
        ("llm.episode_token_budget=0", "llm.episode_token_budget must be an integer >= 1 or null, got 0"),
        ("llm.temperature=-0.5", "llm.temperature must be a number in [0, 2], got -0.5"),
        ("llm.seed=-1", "llm.seed must be an integer >= 0 or null, got -1"),
        ("llm.retry.max_attempts=0", "llm.retry.max_attempts must be an integer >= 1, got 0"),
        ("llm.retry.backoff_s=-1", "llm.retry.backoff_s must be a number >= 0, got -1"),
    ],
)
def test_token_limits_and_call_settings_out_of_range_are_refused_naming_the_key(override, message):
    cfg = _compose("llm=llamacpp", override)
    with pytest.raises(LLMConfigError) as e:
        make_backend(cfg.llm)  # refused before any model is loaded
    assert message in str(e.value)


@pytest.mark.parametrize("name", sorted(p.stem for p in Path(CONF, "llm").glob("*.yaml")))
def test_every_shipped_llm_preset_passes_the_range_checks(name):
    from omegaconf import OmegaConf

    from agents_llm.backends.config import check_llm_settings

    check_llm_settings(OmegaConf.to_container(_compose(f"llm={name}").llm, resolve=True))
