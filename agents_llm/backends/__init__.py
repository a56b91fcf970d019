"""LLM backends behind one async interface.

    backend = make_backend(cfg.llm)            # from a Hydra/OmegaConf node or a dataclass
    resp = await backend.chat(messages, schema=None, max_tokens=256, temperature=0.0, seed=0,
                              caller="Researcher", ledger=episode_ledger)
    resp.text, resp.prompt_tokens, resp.completion_tokens, resp.latency_s, resp.parsed

Backends: `llamacpp` (embedded default), `openai` (any OpenAI-compatible server),
`ollama` (native client), `scripted` (a TEST DOUBLE for unit tests). A new backend is a
subclass of LLMBackend plus `register_backend(name, factory)`.
"""

from __future__ import annotations

from typing import Any, Callable

from .accounting import TokenLedger, Usage
from .base import ChatRequest, Completion, LLMBackend, LLMResponse, RetryPolicy
from .cache import ResponseCache
from .errors import (
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMOutputError,
    LLMServerError,
    LLMTimeoutError,
    TokenBudgetExceeded,
)

Factory = Callable[..., LLMBackend]
_BACKENDS: dict[str, Factory] = {}


def register_backend(name: str, factory: Factory) -> None:
    _BACKENDS[name] = factory


def _llamacpp(**kw: Any) -> LLMBackend:
    from .llamacpp import LlamaCppBackend  # imports llama_cpp only when chosen

    kw["cache_dir"] = kw.pop("model_cache_dir", None)
    return LlamaCppBackend(**kw)


def _openai(**kw: Any) -> LLMBackend:
    from .openai_compat import OpenAIBackend

    return OpenAIBackend(**kw)


def _ollama(**kw: Any) -> LLMBackend:
    from .ollama_native import OllamaBackend

    return OllamaBackend(**kw)


def _scripted(**kw: Any) -> LLMBackend:
    from .scripted import ScriptedBackend

    return ScriptedBackend(**kw)


for _name, _factory in {"llamacpp": _llamacpp, "openai": _openai, "ollama": _ollama, "scripted": _scripted}.items():
    register_backend(_name, _factory)

# Keys of the llm config that describe a call or an episode, not how to build the backend.
_CALL_KEYS = {"backend", "max_tokens", "temperature", "seed", "episode_token_budget", "retry", "cache"}


def make_backend(cfg: Any) -> LLMBackend:
    """Build the backend an `llm` config names (OmegaConf node, dataclass or dict)."""
    from omegaconf import OmegaConf

    if not isinstance(cfg, dict):
        cfg = OmegaConf.to_container(OmegaConf.structured(cfg) if not OmegaConf.is_config(cfg) else cfg, resolve=True)
    from .config import check_llm_settings

    name = cfg.get("backend")
    check_llm_settings(cfg)
    if name not in _BACKENDS:
        raise LLMConfigError(f"unknown llm.backend {name!r}: expected one of {sorted(_BACKENDS)}")
    retry = cfg.get("retry") or {}
    cache_cfg = cfg.get("cache") or {}
    cache = ResponseCache(cache_cfg["path"]) if cache_cfg.get("enabled") else None
    kwargs = {k: v for k, v in cfg.items() if k not in _CALL_KEYS}
    if hasattr(kwargs.get("json_mode"), "value"):
        kwargs["json_mode"] = kwargs["json_mode"].value
    return _BACKENDS[name](retry=RetryPolicy(**retry), cache=cache, **kwargs)


def make_ledger(cfg: Any) -> TokenLedger:
    """A fresh per-episode ledger with the config's budget (validated: positive or None)."""
    budget = cfg.get("episode_token_budget") if hasattr(cfg, "get") else getattr(cfg, "episode_token_budget")
    try:
        return TokenLedger(budget=budget)
    except ValueError as e:
        raise LLMConfigError(f"llm.episode_token_budget: {e}") from None


__all__ = [
    "ChatRequest",
    "Completion",
    "LLMBackend",
    "LLMResponse",
    "RetryPolicy",
    "ResponseCache",
    "TokenLedger",
    "Usage",
    "LLMError",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMOutputError",
    "LLMServerError",
    "LLMTimeoutError",
    "TokenBudgetExceeded",
    "make_backend",
    "make_ledger",
    "register_backend",
]
