"""The report env's ``infos``: a fixed-shape numeric part every library can stack, and the
full round record (text, lists, nested dicts) beside it.

TorchRL's ``PettingZooWrapper`` (and BenchMARL through it) builds its info spec from the
*reset* infos and writes every later info value into that spec as a tensor: a string,
a dict or a key that appears only at some steps breaks it. So ``infos="stackable"``
(the default) gives every agent, at reset and at every step, exactly the keys of
:data:`STACKABLE_TEAM` and :data:`STACKABLE_AGENT` (numbers and bools) plus
``comm_adjacency``, an ``(N, N)`` float32 array: ``comm_adjacency[j, i] = 1`` when agent i
received agent j's output in the round just run (the ``comm_graph()`` edges as a
fixed-shape matrix; zeros after reset).

``infos="full"`` adds the text and nested data of the round to each agent's dict
(``round_outputs``, ``sections``, ``collector``, ``collector_section``, ``action`` as a
name, ``effective_action``, ``denied`` reasons, ``end_reason``, ``budget_exhausted``
reasons, ``task_id``/``topic`` at reset). ``env.last_round_info()`` always returns that
full form of the last reset or step, whatever the mode: a fixed policy that reads the
round's text (the handcrafted pipeline) gets it there.

A key added to the round record is stackable only once it is listed here, with its
default (the value at reset).

:class:`RoundOutcome` is one finished round as the env saw it; :func:`round_infos` turns
it into the infos of both forms and :func:`trace_round` into the trace's round entry, so
the env itself only runs the round and decides how the episode goes on; :func:`call_failures`
reads an episode's LLM failures back from that trace (the env contract's ``call_failures()``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from agents_llm.referee import FLAG_KINDS, flag_counts
from report_protocol import ActionTable, RoundPlan

from envs import CallFailures

if TYPE_CHECKING:
    from agents_llm.engine import RoundResult
    from agents_llm.referee import Flag
    from agents_llm.trace import ExecutionTrace
    from agents_llm.report_state import ReportState

INFO_MODES = ("stackable", "full")

# Team numbers (the same in every agent's dict): name -> value at reset.
STACKABLE_TEAM: dict[str, Any] = {
    "round": 0,  # rounds run so far
    "report_score": 0.0,  # judge score of the report after this round, in [0, 1]
    "length_score": 0.0,  # length term of the reward
    "delta_score": 0.0,  # change of report_score this round
    "delta_length": 0.0,  # change of length_score this round
    "tokens": 0,  # tokens spent in this round (all agents)
    "episode_tokens": 0,  # tokens spent in the episode so far
    "chars": 0,  # report length in characters
    "rounds_since_append": 0,  # k >= 1 on a round whose reward covers k rounds, else 0
    "appended": False,  # the Collector appended or revised a section this round
    "terminate_votes": 0,  # agents that voted terminate
    "rag_exhausted": False,  # retrieval returned nothing new
    "judge_flagged": False,  # the judge fell back (its score is not trustworthy)
    "gate_checked": False,  # a gate check ran this round (handcrafted pipeline)
    "gate_passed": False,  # ... and passed
    "out_of_budget": False,  # the episode's token budget ran out
    "llm_calls": 0,  # LLM calls this round
    "llm_errors": 0,  # ... of which failed (train.llm_error_share_stop watches the share)
    "llm_failed": False,  # the round ended the episode on an LLM failure (full infos: llm_error)
    # Prompt tokens of this round's calls the model computed, and those it reused from the state of
    # earlier prompts (the llamacpp backend's prompt reuse); the same two summed over the episode.
    "prompt_tokens_evaluated": 0,
    "prompt_tokens_reused": 0,
    "episode_prompt_tokens_evaluated": 0,
    "episode_prompt_tokens_reused": 0,
    # On the round that ends the episode at its budget: whether the agents could see that limit
    # (the env's declaration, overridden for a token budget the observation does not scale by).
    "time_limit_observable": True,
    # Referee flags this round (agents_llm.referee.flag_counts): per kind, all, on the report, on outputs.
    **{f"referee/{kind}": 0 for kind in FLAG_KINDS},
    "referee/flags": 0,
    "referee/report_flags": 0,
    "referee/agent_flags": 0,
}
# Per-agent numbers: name -> value at reset.
STACKABLE_AGENT: dict[str, Any] = {
    "action_index": -1,  # the action the agent's part of the round amounts to (-1 at reset)
    "agent_tokens": 0,  # tokens this agent spent this round
    "was_denied": False,  # its chosen action was masked and fell back to solo_process
}


def adjacency(graph: np.ndarray, n_agents: int) -> np.ndarray:
    """(2, E) edges over agent indices -> (N, N) float32 with a[j, i] = 1 for j -> i."""
    adj = np.zeros((n_agents, n_agents), dtype=np.float32)
    if graph.size:
        adj[graph[0], graph[1]] = 1.0
    return adj


def _coerce(value: Any, default: Any) -> Any:
    if value is None:
        return default
    if isinstance(default, bool):
        return bool(value)
    if isinstance(default, int):
        return int(value)
    return float(value)


def stackable(
    team: Mapping[str, Any],
    per_agent: Mapping[str, Mapping[str, Any]],
    graph: np.ndarray,
    agents: list[str],
    n_agents: int,
) -> dict[str, dict[str, Any]]:
    """The stackable infos of ``agents`` from the round's team and per-agent values
    (missing keys take their reset value)."""
    team_part = {k: _coerce(team.get(k), d) for k, d in STACKABLE_TEAM.items()}
    adj = adjacency(graph, n_agents)
    out = {}
    for a in agents:
        own = per_agent.get(a, {})
        out[a] = {
            **team_part,
            **{k: _coerce(own.get(k), d) for k, d in STACKABLE_AGENT.items()},
            "comm_adjacency": adj.copy(),
        }
    return out


def check_mode(mode: str) -> str:
    if mode not in INFO_MODES:
        raise ValueError(f"infos must be one of {', '.join(INFO_MODES)}, got {mode!r}")
    return mode


@dataclass
class RoundOutcome:
    """One finished round: what the engine returned and what the env made of it."""

    round: int  # rounds run so far, this one included
    source: str  # "actions" (a joint action) or "plan" (a fixed policy's RoundPlan)
    plan: RoundPlan
    result: "RoundResult"
    reward: float
    report_score: float
    length_score: float
    rounds_since_append: int  # k >= 1 when this round's reward covers k rounds, else 0
    scores: dict[str, Any]  # the reward tracker's step (empty when nothing was scored)
    flags: list["Flag"]  # the referee's flags
    last_actions: dict[str, int]  # the action each agent's part amounts to (observations, infos)
    episode_tokens: int
    chars: int
    sections: list[list[Any]]  # ReportState.list_sections() as lists
    rag_exhausted: bool
    budget_exhausted: str | None
    end_reason: str  # "" while the episode goes on
    truncated: bool
    time_limit_observable: bool  # on a truncated round: could the agents see the limit
    graph: np.ndarray = field(default_factory=lambda: np.zeros((2, 0), dtype=np.int64))
    # (evaluated, reused) prompt tokens of the episode so far (EpisodeContext)
    episode_prompt_tokens: tuple[int, int] = (0, 0)


def report_snapshot(report: "ReportState", changed: str | None) -> dict[str, Any]:
    """The report's outline after a round, for the trace (the changed section's text is the
    round's collector.content: not copied a second time)."""
    snap: dict[str, Any] = {
        "chars": report.chars,
        "progress_summary": report.progress_summary,
        "sections": [
            {
                "id": s.id,
                "title": s.title,
                "chars": s.chars,
                "revision": s.revision,
                "sources": [r.label() for r in s.sources],
            }
            for s in report.sections
        ],
        "changed_section": None,
    }
    if changed:
        s = report.get(changed)
        snap["changed_section"] = {
            "id": s.id,
            "title": s.title,
            "sources": [{"source": r.source, "page": r.page, "chunk_id": r.chunk_id} for r in s.sources],
        }
    return snap


def prompt_token_counts(o: RoundOutcome) -> dict[str, int]:
    """Prompt tokens the model computed and reused, in the round and in the episode so far."""
    calls = o.result.calls
    return {
        "prompt_tokens_evaluated": sum(int(c.get("prompt_tokens_evaluated", 0)) for c in calls),
        "prompt_tokens_reused": sum(int(c.get("prompt_tokens_reused", 0)) for c in calls),
        "episode_prompt_tokens_evaluated": o.episode_prompt_tokens[0],
        "episode_prompt_tokens_reused": o.episode_prompt_tokens[1],
    }


def trace_round(o: RoundOutcome, report: "ReportState") -> dict[str, Any]:
    """The trace's entry for the round (the engine's record plus reward, scores and report)."""
    result = o.result
    return {
        "round": o.round,
        "source": o.source,
        **result.record,
        "tokens": {
            "round": result.tokens,
            "episode": o.episode_tokens,
            **prompt_token_counts(o),
        },
        "reward": o.reward,
        "report_score": o.report_score,
        "length_score": o.length_score,
        "rounds_since_append": o.rounds_since_append,
        "scores": o.scores,
        "referee": [f.as_dict() for f in o.flags],
        "report": report_snapshot(report, result.collector.section_id),
    }


def call_failures(trace: "ExecutionTrace | None") -> CallFailures:
    """An episode's LLM calls, failed calls, tokens and first failure, from its trace: the
    rounds' ``llm`` counts and ``tokens``, the end (reason ``llm_error``: its detail), else the
    first call that failed."""
    if trace is None:
        return CallFailures()
    calls = sum(int((r.get("llm") or {}).get("calls", 0)) for r in trace.rounds)
    failed = sum(int((r.get("llm") or {}).get("errors", 0)) for r in trace.rounds)
    tokens = sum(int((r.get("tokens") or {}).get("round", 0)) for r in trace.rounds)
    cause = ""
    if failed:
        if trace.end.get("reason") == "llm_error":
            cause = trace.end.get("detail") or "llm_error"
        else:
            errors = [c["error"] for r in trace.rounds for c in r.get("calls", []) if c.get("llm_failed")]
            cause = errors[0] if errors else "unknown"
    return CallFailures(calls=calls, failed=failed, tokens=tokens, cause=cause)


def round_infos(
    o: RoundOutcome, agents: Sequence[str], possible_agents: Sequence[str], table: ActionTable
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """(stackable, full) infos of the live ``agents`` after the round."""
    result, plan = o.result, o.plan
    denied = {d.agent: d.reason for d in plan.denied}
    common: dict[str, Any] = {
        "report_score": o.report_score,
        "length_score": o.length_score,
        "tokens": result.tokens,
        "rounds_since_append": o.rounds_since_append,
        "appended": result.appended,
        "collector": result.collector.status,
        "terminate_votes": len(plan.terminate_votes),
        "round": o.round,
        "chars": o.chars,
        "rag_exhausted": o.rag_exhausted,
        "judge_flagged": bool(o.scores.get("judge_flagged", False)),
        "delta_score": float(o.scores.get("delta_score", 0.0)),
        "delta_length": float(o.scores.get("delta_length", 0.0)),
        "llm_calls": result.llm_calls,
        "llm_errors": result.llm_errors,
        **prompt_token_counts(o),
        "referee": [f.as_dict() for f in o.flags],
        **flag_counts(o.flags),
    }
    if result.llm_failure:
        common["llm_error"] = result.llm_failure
    if result.gate_passed is not None:
        common["gate_passed"] = result.gate_passed
    # What a plan-emitting fixed policy (algos.handcrafted) reads back: plain data only.
    common["round_outputs"] = dict(result.outputs)
    common["collector_section"] = result.collector.section_id
    common["sections"] = o.sections
    common["feedback"] = o.result.feedback.to_dict()  # the engine's reading of the outputs (report_protocol)
    if o.budget_exhausted:
        common["budget_exhausted"] = o.budget_exhausted
    if o.end_reason:
        common["end_reason"] = o.end_reason
    if o.truncated:
        common["time_limit_observable"] = o.time_limit_observable
    full = {
        a: dict(
            common,
            action=table.name(o.last_actions[a], list(possible_agents)),
            effective_action=plan.effective.get(a, "acting" if a in plan.acting else "idle"),
            denied=denied.get(a, ""),
            agent_tokens=sum(c["prompt_tokens"] + c["completion_tokens"] for c in result.calls if c["agent"] == a),
        )
        for a in agents
    }
    team = {
        **common,
        "episode_tokens": o.episode_tokens,
        "gate_checked": result.gate_passed is not None,
        "gate_passed": bool(result.gate_passed),
        "out_of_budget": bool(o.budget_exhausted),
        "llm_failed": bool(result.llm_failure),
    }
    per_agent = {
        a: {
            "action_index": o.last_actions[a],
            "agent_tokens": full[a]["agent_tokens"],
            "was_denied": bool(denied.get(a)),
        }
        for a in agents
    }
    return stackable(team, per_agent, o.graph, list(agents), len(possible_agents)), full
