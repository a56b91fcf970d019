"""A trace as a sequence of viewer steps: who is active, which edges show, how nodes look.

Pure Python and data only (no plotting library), so the step logic is tested on its
own. A round becomes one step per agent in execution order (the `order` groups,
flattened), then a Collector step when anything reached the Collector; a round in
which nobody ran is a single idle step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from report_protocol import COLLECTOR

AGENT_STEP, COLLECTOR_STEP, IDLE_STEP = "agent", "collector", "idle"

# Colours: what ran this round vs. not yet vs. not acting, the active one stands out.
ACTIVE_FILL, ACTIVE_LINE = "#ffd166", "#d62828"
DONE_FILL, PENDING_FILL, IDLE_FILL, COLLECTOR_FILL = "#a8dadc", "#f1f1f1", "#d0d0d0", "#b7e4c7"
NODE_LINE = "#3d405b"
EDGE_IN, EDGE_OUT, EDGE_APPEND, EDGE_OTHER = "#e76f51", "#264653", "#2a9d8f", "#a0a0a0"


@dataclass(frozen=True)
class Node:
    name: str
    role: str
    x: float
    y: float


@dataclass(frozen=True)
class ViewStep:
    round_pos: int  # index into trace["rounds"]
    round: int  # the round number as recorded
    kind: str  # AGENT_STEP | COLLECTOR_STEP | IDLE_STEP
    agent: str | None  # the active node (an agent, "Collector" or None)
    group: int | None  # index of the agent's group in the round's `order`


def layout_nodes(doc: dict) -> list[Node]:
    """Agents on a circle in priority order, clockwise from the top; the Collector at the centre.

    Names that appear in rounds but not in the team still get a node, so a trace
    from a team changed mid-run is drawn rather than refused.
    """
    team = sorted(doc["episode"].get("team", []), key=lambda m: m.get("index", 0))
    names = [m["name"] for m in team]
    roles = {m["name"]: m.get("role", "") for m in team}
    for rnd in doc["rounds"]:
        seen = (
            list(rnd["actions"])
            + list(rnd["agents"])
            + [e["sender"] for e in rnd["edges"]]
            + [e["receiver"] for e in rnd["edges"]]
            + [a for group in rnd["order"] for a in group]
        )
        for name in seen:
            if name not in names and name != COLLECTOR:
                names.append(name)
    n = max(len(names), 1)
    nodes = [
        Node(
            name,
            roles.get(name, "?"),
            round(math.cos(math.pi / 2 - 2 * math.pi * i / n), 6),
            round(math.sin(math.pi / 2 - 2 * math.pi * i / n), 6),
        )
        for i, name in enumerate(names)
    ]
    nodes.append(Node(COLLECTOR, "Collector", 0.0, 0.0))
    return nodes


def node_radius(n_agents: int) -> float:
    spacing = 2 * math.sin(math.pi / max(n_agents, 2))
    return min(0.15, 0.33 * spacing)


def round_steps(round_pos: int, rnd: dict) -> list[ViewStep]:
    steps = []
    for g, group in enumerate(rnd["order"]):
        steps += [ViewStep(round_pos, rnd["round"], AGENT_STEP, a, g) for a in group]
    to_collector = any(e["receiver"] == COLLECTOR for e in rnd["edges"])
    if to_collector or rnd["collector"].get("status") not in (None, "idle"):
        steps.append(ViewStep(round_pos, rnd["round"], COLLECTOR_STEP, COLLECTOR, None))
    if not steps:
        steps.append(ViewStep(round_pos, rnd["round"], IDLE_STEP, None, None))
    return steps


def build_steps(doc: dict) -> list[ViewStep]:
    return [s for pos, rnd in enumerate(doc["rounds"]) for s in round_steps(pos, rnd)]


def _unit(dx: float, dy: float) -> tuple[float, float]:
    d = math.hypot(dx, dy) or 1.0
    return dx / d, dy / d


def edge_curve(src: Node, dst: Node, radius: float) -> dict:
    """A cubic Bezier from node border to node border, plus the arrowhead's place and angle.

    Agent-to-agent edges bend to their left, so the two edges of a mutual pair never
    overlap; a self edge loops outside the circle.
    """
    if src.name == dst.name:
        ux, uy = _unit(src.x, src.y) if (src.x, src.y) != (0.0, 0.0) else (0.0, 1.0)
        vx, vy = -uy, ux
        x0, y0 = src.x + radius * (ux * 0.7 + vx * 0.7), src.y + radius * (uy * 0.7 + vy * 0.7)
        x1, y1 = src.x + radius * (ux * 0.7 - vx * 0.7), src.y + radius * (uy * 0.7 - vy * 0.7)
        reach = 3.2 * radius
        cx0, cy0 = src.x + reach * (ux + vx * 0.8), src.y + reach * (uy + vy * 0.8)
        cx1, cy1 = src.x + reach * (ux - vx * 0.8), src.y + reach * (uy - vy * 0.8)
    else:
        dx, dy = dst.x - src.x, dst.y - src.y
        length = math.hypot(dx, dy) or 1.0
        bend = 0.0 if COLLECTOR in (src.name, dst.name) else 0.3 * length  # keeps clear of the centre node
        px, py = -dy / length, dx / length
        mx, my = (src.x + dst.x) / 2 + bend * px, (src.y + dst.y) / 2 + bend * py
        sx, sy = _unit(mx - src.x, my - src.y)
        ex, ey = _unit(mx - dst.x, my - dst.y)
        x0, y0 = src.x + radius * sx, src.y + radius * sy
        x1, y1 = dst.x + radius * ex, dst.y + radius * ey
        cx0 = cx1 = mx
        cy0 = cy1 = my
    tx, ty = _unit(x1 - cx1, y1 - cy1)
    # Scatter's triangle points up at angle 0: rotate it onto the tangent.
    return {
        "x0": x0,
        "y0": y0,
        "x1": x1,
        "y1": y1,
        "cx0": cx0,
        "cy0": cy0,
        "cx1": cx1,
        "cy1": cy1,
        "ax": x1 - 0.035 * tx,
        "ay": y1 - 0.035 * ty,
        "angle": math.atan2(ty, tx) - math.pi / 2,
    }


def short_action(rnd: dict, agent: str) -> str:
    entry = rnd["actions"].get(agent)
    if agent in rnd.get("terminate_votes", []):
        return "terminate (vote)"
    if not entry:
        return ""
    effective = entry.get("effective") or ""
    chosen = entry.get("name")
    label = effective.replace("selective_query_", "query ").replace("_process", "").replace("_all", "")
    if chosen and effective and chosen != effective and effective not in ("acting", "idle"):
        return f"{chosen.replace('selective_query_', 'query ')} → {label}"
    return label


def node_style(nodes: list[Node], step: ViewStep, rnd: dict) -> dict[str, list]:
    """Per-node fill, outline and action label for one step."""
    finished_groups = rnd["order"][: step.group] if step.kind == AGENT_STEP else rnd["order"]
    ran = {a for group in finished_groups for a in group}
    acting = {a for group in rnd["order"] for a in group}
    fill, line, width, label = [], [], [], []
    for node in nodes:
        active = node.name == step.agent
        if node.name == COLLECTOR:
            base = COLLECTOR_FILL
            label.append(rnd["collector"].get("status", "") if step.kind == COLLECTOR_STEP else "")
        else:
            base = DONE_FILL if node.name in ran else (PENDING_FILL if node.name in acting else IDLE_FILL)
            label.append(short_action(rnd, node.name))
        fill.append(ACTIVE_FILL if active else base)
        line.append(ACTIVE_LINE if active else NODE_LINE)
        width.append(4.0 if active else 1.5)
    return {"fill": fill, "line": line, "width": width, "action": label}


def edge_style(edge: dict, step: ViewStep) -> tuple[str, float]:
    if step.agent is not None and edge["receiver"] == step.agent:
        return EDGE_IN, 3.5
    if step.agent is not None and edge["sender"] == step.agent:
        return EDGE_OUT, 3.0
    if edge["receiver"] == COLLECTOR:
        return EDGE_APPEND, 2.0
    return EDGE_OTHER, 1.5
