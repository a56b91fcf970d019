"""Stopping a training run whose LLM calls fail.

The env reports each episode's calls and failed calls (``call_failures()``, the env
contract in ``envs/__init__.py``; the recorder keeps it in ``EpisodeStats.failures``).
When at least ``train.llm_error_share_stop`` of one episode's calls failed, training stops
with the first failure as the cause rather than learn from rounds the team never really played.
"""

from __future__ import annotations

from envs import CallFailures


class LLMFailureStop(RuntimeError):
    """Too many of an episode's LLM calls failed: training stops, keeping the last checkpoint."""


def check_llm_failures(failures: CallFailures, *, episode: int, stop_share: float) -> None:
    """Raise :class:`LLMFailureStop` (numbering the episode from 1, naming the setting and the
    cause) when at least ``stop_share`` of episode ``episode``'s LLM calls failed."""
    if failures.failed and failures.share >= stop_share:
        raise LLMFailureStop(
            f"episode {episode + 1}: {failures.failed} of {failures.calls} LLM calls "
            f"failed ({failures.share:.0%} >= train.llm_error_share_stop={stop_share:g}); "
            f"cause: {failures.cause}"
        )
