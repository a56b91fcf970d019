"""Joint discrete actions -> a `RoundPlan`: masks, edges, cycle resolution, votes.

Edge semantics (receiver gets the sender's output):

* solo_process: no edge.
* broadcast_all by i: i -> j for every other running agent j.
* selective_query_j by i: j -> i.
* aggregate_refine by i: j -> i for every other agent j.
* append by i: i -> Collector.
* terminate by i: a vote; i does not run this round.

Agents are processed in priority order (team order, index 0 first). An agent's edges
are accepted only if the execution order stays acyclic; otherwise all of that agent's
edges are dropped and it falls back to solo_process (the lower-priority agent loses).
A mutual pair (i -> j and j -> i) is not a cycle: the higher-priority agent runs first
with the other's previous-round output, and the other then gets its fresh output.
A sender that does not run this round (it voted terminate) delivers its previous
output, which imposes no order.
"""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter
from typing import Callable, Mapping, Sequence

import numpy as np

from report_protocol import COLLECTOR, ActionTable, Denial, RoundPlan


def action_mask(
    table: ActionTable, agent_index: int, *, round_index: int, min_rounds_before_terminate: int, report_empty: bool
) -> tuple[np.ndarray, dict[int, str]]:
    """(int8 mask, {action: reason}) for one agent at one decision point."""
    mask = np.ones(table.size, dtype=np.int8)
    reasons: dict[int, str] = {}
    reasons[table.query(agent_index)] = "an agent cannot query itself (its previous output is already its memory)"
    if table.n_agents == 1:
        reasons[table.broadcast] = "no other agent to broadcast to"
        reasons[table.aggregate] = "no other agent to aggregate from"
    if report_empty:
        reasons[table.terminate] = "the report is empty"
    elif round_index < min_rounds_before_terminate:
        reasons[table.terminate] = f"terminate is allowed from round {min_rounds_before_terminate + 1} on"
    for a in reasons:
        mask[a] = 0
    return mask, reasons


def _agent_edges(
    table: ActionTable, team: Sequence[str], i: int, action: int, running: set[str]
) -> list[tuple[str, str]]:
    kind, target = table.decode(action)
    me = team[i]
    if kind == "broadcast":
        return [(me, other) for other in team if other != me and other in running]
    if kind == "query":
        assert target is not None, "a query action names its target (ActionTable.decode)"
        return [(team[target], me)]
    if kind == "aggregate":
        return [(other, me) for other in team if other != me]
    if kind == "append":
        return [(me, COLLECTOR)]
    return []


def execution_order_edges(
    edges: Sequence[tuple[str, str]], priority: Mapping[str, int], running: set[str]
) -> set[tuple[str, str]]:
    """The 'must run before' pairs implied by message edges (mutual pairs: higher priority first)."""
    pairs = set(edges)
    order = set()
    for s, r in pairs:
        if r == COLLECTOR or s == r or s not in running or r not in running:
            continue
        if (r, s) in pairs:  # mutual: higher priority (lower index) first
            hi, lo = (s, r) if priority[s] < priority[r] else (r, s)
            order.add((hi, lo))
        else:
            order.add((s, r))
    return order


def chain_costs(
    acting: Sequence[str], order: set[tuple[str, str]], cost: Callable[[str], int] = lambda agent: 1
) -> dict[str, int]:
    """Each acting agent's costliest chain of senders in the execution graph, itself included."""
    ts: TopologicalSorter = TopologicalSorter({a: set() for a in acting})
    for s, r in order:
        ts.add(r, s)
    costs: dict[str, int] = {}
    for a in ts.static_order():
        costs[a] = cost(a) + max((costs[s] for s, r in order if r == a), default=0)
    return costs


def execution_depths(acting: Sequence[str], order: set[tuple[str, str]]) -> dict[str, int]:
    """Each acting agent's depth in the execution graph: 0 without senders, else 1 + its deepest sender's."""
    return {a: chain - 1 for a, chain in chain_costs(acting, order).items()}


def is_acyclic(nodes: Sequence[str], order: set[tuple[str, str]]) -> bool:
    ts: TopologicalSorter = TopologicalSorter({n: set() for n in nodes})
    for s, r in order:
        ts.add(r, s)
    try:
        ts.prepare()
    except CycleError:
        return False
    return True


def plan_from_actions(
    team: Sequence[str],
    actions: Mapping[str, int],
    *,
    masks: Mapping[str, tuple[np.ndarray, Mapping[int, str]]] | None = None,
    phase: str | None = None,
) -> RoundPlan:
    """The RoundPlan for a joint action (already validated: every agent present, in range).

    `masks` maps an agent to (mask, reasons); a masked choice becomes solo_process and a
    recorded denial.
    """
    table = ActionTable(len(team))
    priority = {a: i for i, a in enumerate(team)}
    denied: list[Denial] = []
    effective: dict[str, int] = {}
    for a in team:
        act = int(actions[a])
        if masks is not None and a in masks and not masks[a][0][act]:
            reason = masks[a][1].get(act, "masked")
            denied.append(Denial(a, act, table.name(act, team), f"masked: {reason}"))
            act = table.solo
        effective[a] = act

    votes = [a for a in team if effective[a] == table.terminate]
    running = {a for a in team if a not in votes}
    accepted: list[tuple[str, str]] = []
    for i, a in enumerate(team):
        if a not in running:
            continue
        mine = _agent_edges(table, team, i, effective[a], running)
        if not mine:
            continue
        candidate = accepted + [e for e in mine if e not in accepted]
        if is_acyclic(team, execution_order_edges(candidate, priority, running)):
            accepted = candidate
        else:
            denied.append(
                Denial(
                    a,
                    effective[a],
                    table.name(effective[a], team),
                    "cycle: its edges "
                    + ", ".join(f"{s}->{r}" for s, r in mine)
                    + " would close a cycle with higher-priority edges",
                )
            )
            effective[a] = table.solo

    # Edges to an agent that does not run would carry nothing anywhere.
    edges = [(s, r) for s, r in accepted if r == COLLECTOR or r in running]
    plan = RoundPlan(
        acting=[a for a in team if a in running],
        edges=edges,
        phase=phase,
        actions={a: int(actions[a]) for a in team},
        denied=denied,
        terminate_votes=votes,
    )
    plan.terminate = 2 * len(votes) >= len(team) and len(votes) > 0
    plan.effective = {a: table.name(effective[a], team) for a in team}
    return plan
