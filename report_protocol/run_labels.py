"""Who plays the env's agents, as run names, W&B groups and tags and the trace viewer say it.

Read off a resolved run config (or the config a trace records), with the standard library
only, so that `algos` (loggers) and `agents_llm` (the viewer) name a run the same way.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional


def team_label(config: Mapping[str, Any]) -> Optional[str]:
    """Who plays the env's agents, for run names: the LLM (``smollm2-135m``), or the
    extractive proxy and its rules' version (``extractive``, ``extractive-v2``); None for an
    env without a team (the matrix games)."""
    env = config.get("env") or {}
    llm = env.get("llm") if isinstance(env, Mapping) else None
    if not isinstance(llm, Mapping):
        llm = config.get("llm")
    if not isinstance(llm, Mapping) or not llm.get("backend"):
        return None
    backend = str(llm["backend"])
    if backend == "extractive":  # the proxy's rules version: env.extractive.version
        extractive = env.get("extractive") if isinstance(env, Mapping) else None
        version = extractive.get("version") if isinstance(extractive, Mapping) else None
        return f"extractive-v{version}" if version is not None else "extractive"
    if backend == "scripted":  # the test double: its model name means nothing
        return backend
    model = str(llm.get("model") or "").rsplit("/", 1)[-1]
    return model or backend


def env_label(env: str, config: Mapping[str, Any]) -> str:
    """The env's registry id and its team: ``report_writing_v0+extractive-v2`` and
    ``report_writing_v0+smollm2-135m`` are different experiments and never share a group."""
    team = team_label(config)
    return f"{env}+{team}" if team else env


def team_title(config: Mapping[str, Any]) -> Optional[str]:
    """`team_label` in words, for a page header: ``LLM smollm2-135m``, ``extractive proxy v2``."""
    label = team_label(config)
    if label is None:
        return None
    if label.startswith("extractive"):
        version = label.partition("-v")[2]
        return f"extractive proxy v{version}" if version else "extractive proxy (rules version not recorded)"
    if label == "scripted":
        return "scripted test double (no model)"
    return f"LLM {label}"
