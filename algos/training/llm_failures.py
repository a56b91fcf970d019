"""Stopping a training run whose LLM calls fail.

Each episode's infos count its LLM calls and failed calls (``llm_calls``,
``llm_errors``; ``envs/report_infos.py``). When at least ``train.llm_error_share_stop``
of one episode's calls failed, training stops with the first error as the cause rather
than learn from rounds the team never really played.
"""

from __future__ import annotations

from typing import Any, Mapping


class LLMFailureStop(RuntimeError):
    """Too many of an episode's LLM calls failed: training stops, keeping the last checkpoint."""


def llm_error_share(infos: Mapping[str, float]) -> float:
    """The share of an episode's LLM calls that failed (0 for an episode without calls)."""
    calls = infos.get("llm_calls", 0.0)
    return infos.get("llm_errors", 0.0) / calls if calls else 0.0


def llm_failure_cause(env: Any) -> str:
    """The first LLM error of the env's last episode (its trace), or what the trace says ended it."""
    trace = getattr(getattr(env, "unwrapped", env), "trace", None)
    if trace is None:
        return "unknown (the env keeps no trace)"
    if trace.end.get("reason") == "llm_error":
        return trace.end.get("detail") or "llm_error"
    errors = [c["error"] for r in trace.rounds for c in r.get("calls", []) if c.get("llm_failed")]
    return errors[0] if errors else "unknown"


def check_llm_failures(infos: Mapping[str, float], *, episode: int, stop_share: float, env: Any) -> None:
    """Raise :class:`LLMFailureStop` (numbering the episode from 1, naming the setting and the
    cause) when at least ``stop_share`` of episode ``episode``'s LLM calls failed."""
    share = llm_error_share(infos)
    if infos.get("llm_errors") and share >= stop_share:
        raise LLMFailureStop(
            f"episode {episode + 1}: {int(infos['llm_errors'])} of {int(infos['llm_calls'])} LLM calls "
            f"failed ({share:.0%} >= train.llm_error_share_stop={stop_share:g}); "
            f"cause: {llm_failure_cause(env)}"
        )
