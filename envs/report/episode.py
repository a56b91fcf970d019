"""Where a report-env episode starts and ends: what its trace records at reset (the header:
task, team, actions, settings), and how a round's outcome ends the episode or not
(termination on a majority terminate vote, truncation on the round or token budget or an
LLM failure, the end reason and its detail)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


def trace_header(env: Any, seed: Optional[int]) -> dict[str, Any]:
    """The trace's episode header for the episode `env.reset` just began (`env.task`, `env.team`, `env.config`)."""
    return {
        "env": env.metadata["name"],
        "episode_id": env.episode_id,
        "seed": seed,
        "task": env.task.as_dict(),
        "team": [{"name": m.name, "role": m.role.name, "index": m.index} for m in env.team],
        "action_names": env.action_names(),
        "config": {
            "max_rounds": env.config.max_rounds,
            "min_rounds_before_terminate": env.config.min_rounds_before_terminate,
            "llm": env.config.llm,
            "judge": env.config.judge,
            "engine": vars(env.config.engine),
            # The extractive proxy's rules version (the viewer names the team by it, as W&B does)
            **({"extractive": {"version": env.engine.version}} if env.config.extractive_team else {}),
        },
    }


@dataclass(frozen=True)
class RoundEnd:
    """Whether the round just run ends the episode, and why ('' when it goes on)."""

    terminated: bool
    truncated: bool
    reason: str
    detail: str


def round_end(
    *, terminate: bool, llm_failure: Optional[str], budget: Optional[str], round: int, max_rounds: int
) -> RoundEnd:
    """Termination on the plan's terminate vote unless the LLM failed; truncation at the round
    budget, when the token budget ran out, or on an LLM failure."""
    terminated = bool(terminate) and llm_failure is None
    truncated = not terminated and (round >= max_rounds or budget is not None or llm_failure is not None)
    reason = (
        "llm_error"
        if llm_failure
        else "terminated"
        if terminated
        else "budget_exhausted"
        if budget
        else "truncated"
        if truncated
        else ""
    )
    detail = ""
    if terminated or truncated:
        detail = llm_failure or budget or ("majority voted terminate" if terminated else f"round budget {max_rounds}")
    return RoundEnd(terminated, truncated, reason, detail)
