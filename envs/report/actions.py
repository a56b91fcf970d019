"""The actions a report env's step takes: a joint action checked against the team and the
action table (`joint_action`: every live agent acts, with an integer its `Discrete` space
holds), and each agent's action mask for the next decision (`action_masks`)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from agents_llm.engine import action_mask
from report_protocol import ActionTable


def action_masks(
    table: ActionTable,
    agents: Sequence[str],
    round_index: int,
    min_rounds_before_terminate: int,
    report_empty: bool,
) -> dict[str, tuple[np.ndarray, dict[int, str]]]:
    """{agent: (mask, {masked action: why})} for every agent of the team, in team order."""
    return {
        a: action_mask(
            table,
            i,
            round_index=round_index,
            min_rounds_before_terminate=min_rounds_before_terminate,
            report_empty=report_empty,
        )
        for i, a in enumerate(agents)
    }


def joint_action(
    actions: Mapping[str, Any], live: Sequence[str], possible: Sequence[str], table: ActionTable
) -> dict[str, int]:
    """{live agent: action index} from a step's ``actions``; an error naming what is wrong otherwise."""
    if not isinstance(actions, Mapping):
        raise TypeError(f"actions must be a dict {{agent: int}}, got {type(actions).__name__}")
    unknown = [a for a in actions if a not in possible]
    if unknown:
        raise KeyError(f"unknown agent name(s) {unknown}; agents are {list(possible)}")
    missing = [a for a in live if a not in actions]
    if missing:
        raise KeyError(f"missing action(s) for {missing}; every live agent acts each round")
    joint = {}
    for a in live:
        raw = actions[a]
        try:
            value = int(np.asarray(raw).item())
        except (TypeError, ValueError):
            raise ValueError(f"action for {a} must be an integer, got {raw!r}") from None
        if not 0 <= value < table.size or float(np.asarray(raw).item()) != value:
            raise ValueError(
                f"action {raw!r} for {a} is out of range: Discrete({table.size}) "
                f"takes 0..{table.size - 1} ({', '.join(table.names(list(possible)))})"
            )
        joint[a] = value
    return joint
