import math

from agents_llm.viz.synthetic_trace import make_trace
from agents_llm.viz.trace_steps import (
    ACTIVE_FILL,
    AGENT_STEP,
    COLLECTOR_STEP,
    DONE_FILL,
    EDGE_APPEND,
    EDGE_IN,
    EDGE_OUT,
    IDLE_FILL,
    IDLE_STEP,
    PENDING_FILL,
    build_steps,
    edge_curve,
    edge_style,
    layout_nodes,
    node_radius,
    node_style,
)


def _round(order, edges, status="idle", votes=()):
    names = ["A", "B", "C"]
    return {
        "round": 1,
        "source": "actions",
        "phase": None,
        "actions": {n: {"action": 0, "name": "solo_process", "effective": "solo_process"} for n in names},
        "denied": [],
        "terminate_votes": list(votes),
        "edges": [{"sender": s, "receiver": r, "timing": "fresh"} for s, r in edges],
        "order": order,
        "agents": {},
        "calls": [],
        "collector": {"status": status, "reason": ""},
        "tokens": {"round": 0, "episode": 0},
        "report": {"chars": 0, "sections": [], "progress_summary": ""},
    }


def _doc(*rounds):
    team = [{"name": n, "role": "Role" + n, "index": i} for i, n in enumerate("ABC")]
    return {"episode": {"team": team}, "rounds": list(rounds)}


def test_a_round_is_its_agents_in_execution_order_then_the_collector():
    doc = _doc(_round([["A"], ["C", "B"]], [("A", "Collector"), ("A", "B")], status="appended"))
    steps = build_steps(doc)
    assert [(s.kind, s.agent, s.group) for s in steps] == [
        (AGENT_STEP, "A", 0),
        (AGENT_STEP, "C", 1),
        (AGENT_STEP, "B", 1),
        (COLLECTOR_STEP, "Collector", None),
    ]


def test_a_round_where_nobody_ran_is_one_idle_step_and_a_skipped_collector_still_shows():
    doc = _doc(_round([], [], votes=("A", "B")), _round([["A"]], [], status="skipped"))
    assert [(s.round_pos, s.kind) for s in build_steps(doc)] == [(0, IDLE_STEP), (1, AGENT_STEP), (1, COLLECTOR_STEP)]


def test_agents_sit_on_a_unit_circle_in_priority_order_with_the_collector_at_the_centre():
    doc = _doc(_round([["A"]], [("A", "Stranger")]))
    nodes = layout_nodes(doc)
    assert [n.name for n in nodes] == ["A", "B", "C", "Stranger", "Collector"]
    assert (nodes[0].x, nodes[0].y) == (0.0, 1.0)  # first priority at the top
    assert nodes[1].x > 0  # then clockwise
    for n in nodes[:-1]:
        assert math.isclose(math.hypot(n.x, n.y), 1.0, abs_tol=1e-5)
    assert (nodes[-1].x, nodes[-1].y) == (0.0, 0.0)


def test_node_style_marks_the_active_agent_those_done_pending_and_idle():
    rnd = _round([["A"], ["B"]], [("A", "B")])
    doc = _doc(rnd)
    nodes = layout_nodes(doc)
    step_b = build_steps(doc)[1]
    style = node_style(nodes, step_b, rnd)
    fills = dict(zip([n.name for n in nodes], style["fill"]))
    assert fills["B"] == ACTIVE_FILL and fills["A"] == DONE_FILL and fills["C"] == IDLE_FILL
    step_a = build_steps(doc)[0]
    fills = dict(zip([n.name for n in nodes], node_style(nodes, step_a, rnd)["fill"]))
    assert fills["A"] == ACTIVE_FILL and fills["B"] == PENDING_FILL


def test_edges_touching_the_active_agent_are_highlighted_by_direction():
    step = build_steps(_doc(_round([["A"], ["B"]], [("A", "B")])))[1]  # B active
    assert edge_style({"sender": "A", "receiver": "B"}, step)[0] == EDGE_IN
    assert edge_style({"sender": "B", "receiver": "C"}, step)[0] == EDGE_OUT
    assert edge_style({"sender": "C", "receiver": "Collector"}, step)[0] == EDGE_APPEND


def test_edge_curves_start_and_end_on_node_borders_and_a_mutual_pair_does_not_overlap():
    nodes = {n.name: n for n in layout_nodes(_doc(_round([["A"]], [])))}
    radius = node_radius(3)
    ab, ba = edge_curve(nodes["A"], nodes["B"], radius), edge_curve(nodes["B"], nodes["A"], radius)
    for curve, src, dst in ((ab, nodes["A"], nodes["B"]), (ba, nodes["B"], nodes["A"])):
        assert math.isclose(math.hypot(curve["x0"] - src.x, curve["y0"] - src.y), radius, rel_tol=1e-6)
        assert math.isclose(math.hypot(curve["x1"] - dst.x, curve["y1"] - dst.y), radius, rel_tol=1e-6)
    assert math.hypot(ab["cx0"] - ba["cx0"], ab["cy0"] - ba["cy0"]) > radius
    loop = edge_curve(nodes["A"], nodes["A"], radius)
    assert loop["cy0"] > nodes["A"].y + radius  # a self edge loops outside the circle (A is at the top)


def test_synthetic_100_round_trace_has_a_step_per_executed_agent_plus_collector_steps():
    doc = make_trace(rounds=100, n_agents=5, seed=7)
    steps = build_steps(doc)
    runs = sum(len(group) for rnd in doc["rounds"] for group in rnd["order"])
    collector_rounds = sum(1 for rnd in doc["rounds"] if rnd["collector"]["status"] != "idle")
    idle_rounds = sum(1 for rnd in doc["rounds"] if not rnd["order"] and rnd["collector"]["status"] == "idle")
    assert len(steps) == runs + collector_rounds + idle_rounds
    assert sorted({s.round for s in steps}) == list(range(1, 101))
