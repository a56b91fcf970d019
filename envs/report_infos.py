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
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from agents_llm.referee import FLAG_KINDS

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


def stackable(team: Mapping[str, Any], per_agent: Mapping[str, Mapping[str, Any]], graph: np.ndarray,
              agents: list[str], n_agents: int) -> dict[str, dict[str, Any]]:
    """The stackable infos of ``agents`` from the round's team and per-agent values
    (missing keys take their reset value)."""
    team_part = {k: _coerce(team.get(k), d) for k, d in STACKABLE_TEAM.items()}
    adj = adjacency(graph, n_agents)
    out = {}
    for a in agents:
        own = per_agent.get(a, {})
        out[a] = {**team_part, **{k: _coerce(own.get(k), d) for k, d in STACKABLE_AGENT.items()},
                  "comm_adjacency": adj.copy()}
    return out


def check_mode(mode: str) -> str:
    if mode not in INFO_MODES:
        raise ValueError(f"infos must be one of {', '.join(INFO_MODES)}, got {mode!r}")
    return mode
