"""Reading metric names as train.py and evaluate.py write them (algos.training).

Per-agent action frequencies are `act/<agent>/<action index>` (and `act/<agent>/top`,
the share of the most frequent action); TensorBoard/W&B copies carry a `train/` or
`eval/` prefix, which is accepted here too.
"""

from __future__ import annotations

import re

from report_protocol import ActionTable

_ACTION_COLUMN = re.compile(r"^(?:[a-z_]+/)?act/(?P<agent>.+)/(?P<action>\d+)$")


def action_columns(columns) -> dict[str, dict[int, str]]:
    """{agent: {action index: column name}}, agents in first-seen order."""
    out: dict[str, dict[int, str]] = {}
    for col in columns:
        m = _ACTION_COLUMN.match(col)
        if m:
            out.setdefault(m["agent"], {})[int(m["action"])] = col
    return out


def action_labels(agents: list[str], n_actions: int) -> list[str]:
    """Names for action indices: the report env's table when the count fits `5 + N`, else the index."""
    if agents and n_actions == ActionTable(len(agents)).size:
        return ActionTable(len(agents)).names(agents)
    return [str(a) for a in range(n_actions)]
