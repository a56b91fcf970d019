"""Structured configs for the `llm` Hydra group.

Each backend has a dataclass; `conf/llm/<name>.yaml` starts from `base_<name>`, so a
wrong key or a wrongly typed value fails when Hydra composes, naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hydra.core.config_store import ConfigStore

from .openai_compat import JsonMode


@dataclass
class RetryConfig:
    max_attempts: int = 3  # attempts per call, first one included
    backoff_s: float = 0.5  # first wait between attempts; doubles each time
    backoff_max_s: float = 8.0


@dataclass
class ResponseCacheConfig:
    enabled: bool = False  # on: identical requests are answered from sqlite (exact replay)
    path: str = "${oc.env:QMIX_CACHE_DIR,${oc.env:HOME}/.cache/qmix-report-gym}/llm_responses.sqlite"


@dataclass
class LLMConfig:
    backend: str = "llamacpp"
    model: str = "smollm2-135m"
    timeout_s: float = 120.0  # per call, retries not included
    max_tokens: int = 256  # default completion budget per call; prompts may ask for less
    temperature: float = 0.0  # 0 = greedy: reproducible runs
    seed: Optional[int] = 0
    episode_token_budget: Optional[int] = None  # None = unlimited; reached -> the episode stops cleanly
    # Requests of this backend in flight at once (all episodes of a process); the rest wait
    # their turn. None = no limit. Set it to the server's slots with many episodes in flight.
    max_concurrent_requests: Optional[int] = None
    # How many requests the server decodes at once (vLLM --max-num-seqs, SGLang
    # --max-running-requests, llama.cpp --parallel); more in flight is warned about once.
    server_slots: Optional[int] = None
    retry: RetryConfig = field(default_factory=RetryConfig)
    cache: ResponseCacheConfig = field(default_factory=ResponseCacheConfig)


@dataclass
class LlamaCppConfig(LLMConfig):
    backend: str = "llamacpp"
    model: str = "smollm2-135m"  # a registered name (agents_llm.backends.models.MODELS) or a .gguf path
    n_ctx: int = 4096
    n_threads: int = 1  # two threads on a busy 2-core machine collapse; raise on idle many-core hosts
    model_cache_dir: Optional[str] = None  # where split models are joined; default ~/.cache/qmix-report-gym
    chat_format: Optional[str] = None  # None: the chat template stored in the GGUF
    # Divides the logits of recently generated tokens (llama.cpp's repeat penalty; 1.0 = off). Greedy
    # decoding of a 135M model loops on stock sentences without it (conf/llm/llamacpp.yaml sets the default).
    repeat_penalty: float = 1.0
    # With a schema: constrain decoding by llama.cpp's grammar (true), or generate freely and hold the
    # text to the schema by parsing and validation, with retries (false). A grammar call that fails in
    # Python is redone without the grammar either way, and the answer says so (LLMResponse.fallback).
    json_grammar: bool = True
    # Keep the model's state of the last `reuse_states` prompts and evaluate only what a new prompt
    # does not share with the best of them (agents_llm.backends.llama_prefix). Same output either way:
    # prompts are evaluated in aligned batches of `prompt_batch` tokens with reuse on and off.
    prompt_reuse: bool = True
    reuse_states: int = 8
    prompt_batch: int = 64


@dataclass
class OpenAIConfig(LLMConfig):
    backend: str = "openai"
    model: str = "local-model"
    base_url: str = "http://127.0.0.1:8000/v1"  # no user:password@ in it (refused: it is written to configs and logs)
    api_key_env: str = "OPENAI_API_KEY"  # the variable's name; the key itself never sits in a config
    json_mode: JsonMode = JsonMode.json_schema
    # Largest answer body read, in bytes (>= 1024); a larger one is a malformed response
    # (retried, then an LLM failure). A 256-token completion is a few kB.
    max_response_bytes: int = 1_000_000


@dataclass
class OllamaConfig(LLMConfig):
    backend: str = "ollama"
    model: str = "qwen2.5:0.5b"
    host: str = "http://127.0.0.1:11434"  # no credentials in the URL (refused: it is written to configs and logs)
    max_response_bytes: int = 1_000_000  # largest answer body read, in bytes (>= 1024); see OpenAIConfig


@dataclass
class ScriptedConfig(LLMConfig):
    """TEST DOUBLE settings: deterministic answers, no model. For unit tests only."""

    backend: str = "scripted"
    model: str = "scripted-test-double"
    latency_s: float = 0.0


@dataclass
class ExtractiveConfig(LLMConfig):
    """NOT a language model: the extractive team (agents_llm.extractive), rule-based roles whose
    calls are charged the tokens the LLM team would pay. Only the env's engine reads it."""

    backend: str = "extractive"
    model: str = "extractive-team"  # a name for logs; no model is loaded
    tokenizer_model: str = "smollm2-135m"  # whose tokenizer counts the tokens an LLM team would pay


def _bad_int(value: object, low: int) -> bool:
    return isinstance(value, bool) or not isinstance(value, int) or value < low


def check_llm_settings(cfg: Mapping[str, Any]) -> None:
    """Range-check an ``llm`` config's call and budget settings (a plain mapping), naming the
    key: a completion budget of 0 tokens, a negative episode budget or a temperature of 5
    would otherwise run and produce nothing useful."""
    from .errors import LLMConfigError

    def refuse(key: str, rule: str) -> None:
        raise LLMConfigError(f"llm.{key} must be {rule}, got {cfg.get(key)!r}")

    if "max_tokens" in cfg and _bad_int(cfg["max_tokens"], 1):
        refuse("max_tokens", "an integer >= 1")
    if cfg.get("episode_token_budget") is not None and _bad_int(cfg["episode_token_budget"], 1):
        refuse("episode_token_budget", "an integer >= 1 or null")
    if "n_ctx" in cfg:
        if _bad_int(cfg["n_ctx"], 64):
            refuse("n_ctx", "an integer >= 64")
        if isinstance(cfg.get("max_tokens"), int) and cfg["max_tokens"] >= cfg["n_ctx"]:
            refuse("max_tokens", f"below llm.n_ctx={cfg['n_ctx']} (the prompt needs room too)")
    temperature = cfg.get("temperature", 0.0)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
        refuse("temperature", "a number in [0, 2]")
    if cfg.get("seed") is not None and _bad_int(cfg["seed"], 0):
        refuse("seed", "an integer >= 0 or null")
    retry = cfg.get("retry") or {}
    if "max_attempts" in retry and _bad_int(retry["max_attempts"], 1):
        raise LLMConfigError(f"llm.retry.max_attempts must be an integer >= 1, got {retry['max_attempts']!r}")
    for key in ("backoff_s", "backoff_max_s"):
        v = retry.get(key, 0.0)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise LLMConfigError(f"llm.retry.{key} must be a number >= 0, got {v!r}")


SCHEMAS = {
    "llamacpp": LlamaCppConfig,
    "openai": OpenAIConfig,
    "ollama": OllamaConfig,
    "scripted": ScriptedConfig,
    "extractive": ExtractiveConfig,
}


def register_configs() -> None:
    cs = ConfigStore.instance()
    for name, node in SCHEMAS.items():
        cs.store(group="llm", name=f"base_{name}", node=node)
