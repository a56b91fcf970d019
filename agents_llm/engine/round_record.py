"""The round's record: its calls as they happen, each agent's part, and the trace entry.

`CallRecorder` logs every LLM call of a round with start/end times; `agent_record` and
`round_record` assemble what the trace keeps of the round (`agents_llm.trace`), and
`RoundResult` is what the engine returns to the env.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from report_protocol import ActionTable, RoundFeedback, RoundPlan

from ..collector import CollectorResult


@dataclass
class AgentTurn:
    """What one agent's turn produced. `output` None: the turn stopped before it had one
    (the token budget ran out during its search), so its receivers get nothing from it."""

    output: str | None
    senders: list[str] = field(default_factory=list)
    prompt: list = field(default_factory=list)
    response: str = ""
    error: str | None = None
    retrieval: dict[str, Any] | None = None
    objective: str | None = None  # the objective this turn set (a role that sets_objective); the runner applies it
    # A team without a model (the extractive proxy): what the role's rules worked from, and the LLM prompt whose
    # tokens its call was charged (never sent; `prompt` stays empty).
    inputs: dict[str, Any] | None = None
    charged_prompt: list | None = None
    # With engine.conversation on: the turn's place in the agent's chat ({"turn": n, "restarted": bool}).
    chat: dict[str, Any] | None = None


@dataclass
class RoundResult:
    outputs: dict[str, str]
    order: list[list[str]]
    collector: CollectorResult
    tokens: int  # spent in this round
    calls: list[dict]
    record: dict  # the round's trace entry (the env adds reward fields)
    gate_passed: bool | None = None
    budget_exhausted: str | None = None
    wall_s: float = 0.0
    llm_calls: int = 0  # LLM calls this round asked for (token-budget skips not counted)
    llm_errors: int = 0  # of those, the ones that failed or were skipped after a fatal failure
    llm_failure: str | None = None  # set: the round's calls failed; the cause (see module docstring)
    feedback: RoundFeedback = field(default_factory=RoundFeedback)  # the outputs read (engine.feedback)

    @property
    def appended(self) -> bool:
        return self.collector.status in ("appended", "revised")


class CallRecorder:
    """Collects the calls of one round, with start/end times relative to the round start."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.calls: list[dict] = []

    def now(self) -> float:
        return round(time.perf_counter() - self.t0, 4)

    def start_call(self, agent: str, kind: str) -> dict:
        """Record a call as it starts; the caller fills in tokens, latency, error, end."""
        entry = {
            "agent": agent,
            "kind": kind,
            "prompt_tokens": 0,
            "prompt_tokens_evaluated": 0,  # computed by the model (every attempt; 0 for a cached reply)
            "prompt_tokens_reused": 0,  # served from state kept from earlier prompts
            "completion_tokens": 0,
            "latency_s": 0.0,
            "start_s": self.now(),
            "end_s": None,
            "cached": False,
            "error": None,
        }
        self.calls.append(entry)
        return entry


def own_call_error(rec: "CallRecorder", agent: str) -> str:
    """Why `agent`'s turn call failed. Agents run concurrently, so the last call recorded
    may be another agent's: look up this agent's own."""
    mine = (c["error"] for c in reversed(rec.calls) if c["agent"] == agent and c["kind"] == "agent")
    return next(mine, None) or "call failed"


def agent_record(receivers: list[str], turn: AgentTurn | None) -> dict[str, Any]:
    """The trace's entry for one agent of the round (a turn that never ran: receivers only)."""
    record: dict[str, Any] = {"receivers": receivers, "senders": [], "prompt": [], "response": "", "error": None}
    if turn is not None:
        record.update(senders=turn.senders, prompt=turn.prompt, response=turn.response, error=turn.error)
        if turn.output is not None and turn.response and turn.output != turn.response:
            record["output"] = turn.output  # what its receivers got instead of the response
        if turn.retrieval is not None:
            record["retrieval"] = turn.retrieval
        if turn.inputs is not None:  # the extractive team: what its rules received (it has no prompt)
            record["inputs"] = turn.inputs
        if turn.chat is not None:
            record["chat"] = turn.chat
        if turn.charged_prompt is not None:
            record["charged_prompt"] = turn.charged_prompt
    return record


def llm_counts(calls: Sequence[dict], failure: str | None) -> tuple[int, int, str | None]:
    """(LLM calls asked for, of which failed, the round's failure): all calls failing is a failure too."""
    llm_calls = [c for c in calls if "llm_failed" in c]
    llm_errors = [c for c in llm_calls if c["llm_failed"]]
    if llm_calls and len(llm_errors) == len(llm_calls) and failure is None:
        failure = f"all {len(llm_calls)} LLM calls of the round failed; the first: {llm_errors[0]['error']}"
    return len(llm_calls), len(llm_errors), failure


def round_record(
    plan: RoundPlan,
    names: Sequence[str],
    *,
    timing: dict,
    order: list[list[str]],
    agents: dict[str, dict],
    rec: CallRecorder,
    collector: CollectorResult,
    gate: dict | None,
    objective: str,
    rag_exhausted: bool,
    budget_exhausted: str | None,
    llm: tuple[int, int, str | None],
) -> dict[str, Any]:
    """The round's trace entry (the env adds the round number, reward and report fields)."""
    table = ActionTable(len(names))
    running = set(plan.acting)
    return {
        "phase": plan.phase,
        "actions": {
            a: {
                "action": plan.actions.get(a),
                "name": table.name(plan.actions[a], names) if a in plan.actions else None,
                "effective": plan.effective.get(a) or ("acting" if a in running else "idle"),
            }
            for a in names
        },
        "denied": [vars(d) for d in plan.denied],
        "terminate_votes": list(plan.terminate_votes),
        "edges": [{"sender": s, "receiver": r, "timing": timing[(s, r)]} for s, r in plan.edges],
        "order": order,
        "agents": agents,
        "calls": rec.calls,
        "collector": collector.as_dict(),
        "gate": gate,
        "objective": objective,
        "rag_exhausted": rag_exhausted,
        "budget_exhausted": budget_exhausted,
        "llm": {"calls": llm[0], "errors": llm[1], "failure": llm[2]},
        "timing": {"wall_s": rec.now()},
    }
