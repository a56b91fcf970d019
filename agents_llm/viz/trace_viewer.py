"""The interactive trace viewer: one self-contained HTML file per episode trace.

Bokeh draws the communication graph (a node per agent and the Collector, an edge per
message) and the controls (timeline slider, play/pause, previous/next); the side
panels show the active agent's action, prompt and response, and the report as it
stood at that step (its text rebuilt by replaying the rounds' collector contents).
BokehJS is inlined (`bokeh.resources.INLINE`), so the page opens without a network.
All step data is computed here and shipped as one JSON string that a small CustomJS
callback reads; panel HTML is escaped in `trace_panels`.
"""

from __future__ import annotations

import json
from pathlib import Path

from bokeh.document import Document
from bokeh.embed import file_html
from bokeh.events import DocumentReady
from bokeh.layouts import column, row
from bokeh.models import ColumnDataSource, CustomJS, HoverTool, InlineStyleSheet, Range1d

# From their defining modules: bokeh.models re-exports these through star imports of packages
# whose __init__ has no stub, so a type checker does not see them there.
from bokeh.models.annotations.labels import LabelSet
from bokeh.models.widgets.buttons import Button, Toggle
from bokeh.models.widgets.markups import Div
from bokeh.models.widgets.sliders import Slider
from bokeh.plotting import figure
from bokeh.resources import INLINE

from agents_llm.trace import replay_report

from .config import DEFAULT_PLAY_INTERVAL_MS
from .trace_loading import read_trace
from .trace_panels import (
    DEFAULT_MAX_TEXT_CHARS,
    REPORT_TEXT_SLOT,
    agent_panel_html,
    empty_episode_html,
    episode_header_html,
    report_panel_html,
    section_text_html,
    shown_sections,
    step_header_html,
)
from .trace_steps import (
    AGENT_STEP,
    EDGE_APPEND,
    EDGE_IN,
    EDGE_OTHER,
    EDGE_OUT,
    build_steps,
    edge_curve,
    edge_style,
    layout_nodes,
    node_radius,
    node_style,
)

_GEOMETRY = ("x0", "y0", "x1", "y1", "cx0", "cy0", "cx1", "cy1")

PANEL_CSS = """
:host { overflow-y: auto; font-family: system-ui, sans-serif; font-size: 13px; }
pre { white-space: pre-wrap; word-break: break-word; background: #f7f7f9; border: 1px solid #e3e3e8;
      padding: 6px; margin: 2px 0 8px 0; max-height: 360px; overflow-y: auto; }
h3 { margin: 4px 0; } h4 { margin: 10px 0 2px 0; }
.role { color: #6c757d; font-weight: normal; font-size: 12px; }
.kv { margin: 2px 0; } .none { color: #888; font-style: italic; }
.error, .denied, .referee { color: #b00020; } .clip { color: #b00020; font-style: italic; }
table { border-collapse: collapse; margin: 4px 0; } td, th { border: 1px solid #ddd; padding: 2px 6px; }
.src, .order { color: #6c757d; font-size: 12px; }
.empty h2 { color: #b00020; }
"""

# Reads the step table once (parsed on first use), then redraws graph and panels for the slider's value.
_SHOW_STEP_JS = """
const cache = (window.__qmix_trace_viewer ??= {});
const data = (cache[key] ??= JSON.parse(payload));
const i = Math.max(0, Math.min(data.steps.length - 1, Math.round(slider.value) - 1));  // slider is 1-based
const s = data.steps[i];
nodes.data = Object.assign({}, data.nodes, s.n);
fresh.data = s.f;
previous.data = s.p;
arrows.data = s.a;
header.text = s.h;
agent_panel.text = s.g;
// The report panel: its HTML with the slot filled by this state's section texts (each shipped once).
report_panel.text = data.reports[s.r].split(slot).join(data.report_texts[s.r].map((j) => data.texts[j]).join(""));
"""

_PLAY_JS = """
const timers = (window.__qmix_trace_timers ??= {});
clearInterval(timers[key]);
if (toggle.active) {
  if (slider.value >= slider.end) { slider.value = slider.start; }
  toggle.label = "❚❚ Pause";
  timers[key] = setInterval(() => {
    if (slider.value >= slider.end) { toggle.active = false; return; }
    slider.value = slider.value + 1;
  }, interval);
} else {
  toggle.label = "▶ Play";
}
"""


def _round4(values):
    return [round(v, 4) for v in values]


def _edge_columns(edges: list[dict], geometry: list[dict], step) -> dict[str, list]:
    cols: dict[str, list] = {k: [] for k in _GEOMETRY + ("color", "width", "label")}
    for edge, geo in zip(edges, geometry):
        color, width = edge_style(edge, step)
        for k in _GEOMETRY:
            cols[k].append(round(geo[k], 4))
        cols["color"].append(color)
        cols["width"].append(width)
        cols["label"].append(f"{edge['sender']} → {edge['receiver']} ({edge['timing']})")
    return cols


def _arrow_columns(edges: list[dict], geometry: list[dict], step) -> dict[str, list]:
    cols: dict[str, list] = {"ax": [], "ay": [], "angle": [], "color": []}
    for edge, geo in zip(edges, geometry):
        cols["ax"].append(round(geo["ax"], 4))
        cols["ay"].append(round(geo["ay"], 4))
        cols["angle"].append(round(geo["angle"], 4))
        cols["color"].append(edge_style(edge, step)[0])
    return cols


def build_payload(doc: dict, source: str, max_text_chars: int = DEFAULT_MAX_TEXT_CHARS) -> dict:
    """Everything the page needs per step, as plain JSON-able data."""
    nodes = layout_nodes(doc)
    by_name = {n.name: n for n in nodes}
    radius = node_radius(len(nodes) - 1)
    steps = build_steps(doc)
    geometry = [
        [edge_curve(by_name[e["sender"]], by_name[e["receiver"]], radius) for e in rnd["edges"]]
        for rnd in doc["rounds"]
    ]
    replayed = replay_report(doc["rounds"])  # the report's sections after each round, once
    report_keys: dict[tuple, int] = {}
    reports: list[str] = []
    report_texts: list[list[int]] = []  # per report: indices into `texts`, in report order
    text_keys: dict[tuple, int] = {}
    texts: list[str] = []  # each distinct section text once, escaped
    out_steps = []
    for i, step in enumerate(steps):
        rnd = doc["rounds"][step.round_pos]
        final = i == len(steps) - 1
        # After the Collector (or an idle round) the round's report stands; the last step shows the end state.
        after = step.kind != AGENT_STEP or final
        key = (step.round_pos, after, final)
        if key not in report_keys:
            report_keys[key] = len(reports)
            reports.append(
                report_panel_html(doc, step.round_pos, after, final, max_text_chars, replayed, text_slot=True)
            )
            indices = []
            for section in shown_sections(doc, step.round_pos, after, final, replayed) or []:
                tkey = (section["title"], section["content"])
                if tkey not in text_keys:
                    text_keys[tkey] = len(texts)
                    texts.append(section_text_html(section, max_text_chars))
                indices.append(text_keys[tkey])
            report_texts.append(indices)
        split: dict[str, list[tuple[dict, dict]]] = {"fresh": [], "previous": []}  # (edge, its curve) by timing
        for edge, geo in zip(rnd["edges"], geometry[step.round_pos]):
            split["fresh" if edge["timing"] == "fresh" else "previous"].append((edge, geo))
        out_steps.append(
            {
                "n": node_style(nodes, step, rnd),
                "f": _edge_columns([e for e, _ in split["fresh"]], [g for _, g in split["fresh"]], step),
                "p": _edge_columns([e for e, _ in split["previous"]], [g for _, g in split["previous"]], step),
                "a": _arrow_columns(rnd["edges"], geometry[step.round_pos], step),
                "h": step_header_html(doc, step, i, len(steps)),
                "g": agent_panel_html(doc, step, max_text_chars),
                "r": report_keys[key],
                "agent": step.agent,
                "round": step.round,
            }
        )
    return {
        "source": source,
        "radius": radius,
        "nodes": {
            "x": [n.x for n in nodes],
            "y": [n.y for n in nodes],
            "name": [n.name for n in nodes],
            "role": [n.role for n in nodes],
        },
        "steps": out_steps,
        "reports": reports,
        "report_texts": report_texts,
        "texts": texts,
    }


def report_html(payload: dict, index: int) -> str:
    """Report panel `index` of a payload, assembled as the page does it."""
    texts = "".join(payload["texts"][j] for j in payload["report_texts"][index])
    return payload["reports"][index].replace(REPORT_TEXT_SLOT, texts)


def _panel(text: str, width: int, height: int | None, css_class: str) -> Div:
    return Div(
        text=text, width=width, height=height, css_classes=[css_class], stylesheets=[InlineStyleSheet(css=PANEL_CSS)]
    )


def _graph_figure(payload: dict, first: dict):
    radius = payload["radius"]
    plot = figure(
        width=560,
        height=560,
        x_range=Range1d(start=-1.75, end=1.75),  # what figure() makes of a (start, end) tuple
        y_range=Range1d(start=-1.75, end=1.75),
        tools="pan,wheel_zoom,reset",
        toolbar_location="above",
        title="Communication graph (arrow: message; dashed: previous-round output)",
    )
    plot.axis.visible = False
    plot.grid.visible = False
    plot.outline_line_color = None
    nodes = ColumnDataSource({**payload["nodes"], **first["n"]})
    fresh, previous, arrows = ColumnDataSource(first["f"]), ColumnDataSource(first["p"]), ColumnDataSource(first["a"])
    for source, dash in ((fresh, "solid"), (previous, "dashed")):
        plot.bezier(
            x0="x0",
            y0="y0",
            x1="x1",
            y1="y1",
            cx0="cx0",
            cy0="cy0",
            cx1="cx1",
            cy1="cy1",
            source=source,
            line_color="color",
            line_width="width",
            line_dash=dash,
        )
    plot.scatter(
        x="ax", y="ay", angle="angle", marker="triangle", size=11, source=arrows, fill_color="color", line_color="color"
    )
    node_glyphs = plot.circle(
        x="x", y="y", radius=radius, source=nodes, fill_color="fill", line_color="line", line_width="width"
    )
    plot.add_tools(
        HoverTool(renderers=[node_glyphs], tooltips=[("agent", "@name"), ("role", "@role"), ("action", "@action")])
    )
    plot.add_layout(
        LabelSet(
            x="x",
            y="y",
            text="name",
            source=nodes,
            text_align="center",
            text_font_size="12px",
            text_font_style="bold",
            y_offset=-radius * 160 - 14,
        )
    )
    plot.add_layout(
        LabelSet(
            x="x",
            y="y",
            text="action",
            source=nodes,
            text_align="center",
            text_font_size="11px",
            text_color="#6c757d",
            y_offset=-radius * 160 - 28,
        )
    )
    return plot, nodes, fresh, previous, arrows


def _legend_html() -> str:
    swatch = '<span style="display:inline-block;width:18px;height:4px;background:{};margin:0 4px 2px 8px"></span>{}'
    return (
        "<div style='font-size:12px'>"
        + swatch.format(EDGE_IN, "into the active agent")
        + swatch.format(EDGE_OUT, "out of it")
        + swatch.format(EDGE_APPEND, "append to the Collector")
        + swatch.format(EDGE_OTHER, "other")
        + "</div>"
    )


def _page(layout, title: str) -> str:
    document = Document()
    document.add_root(layout)
    # Lets a test or benchmark know when BokehJS has built the page.
    document.js_on_event(DocumentReady, CustomJS(code="window.__qmix_viewer_ready = performance.now();"))
    return file_html(document, INLINE, title)


def build_viewer_html(
    doc: dict,
    source: str,
    *,
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    play_interval_ms: int = DEFAULT_PLAY_INTERVAL_MS,
) -> str:
    """The page for a validated trace document (see `trace_loading.read_trace`)."""
    title = f"Trace {doc['episode'].get('episode_id', '')}"
    if not doc["rounds"]:
        return _page(column(_panel(empty_episode_html(doc, source), 900, None, "qv-empty")), title)

    payload = build_payload(doc, source, max_text_chars)
    first = payload["steps"][0]
    plot, nodes, fresh, previous, arrows = _graph_figure(payload, first)
    total = len(payload["steps"])
    slider = Slider(
        start=1,
        end=max(total, 2),
        value=1,
        step=1,
        title=f"Step (of {total})",
        width=560,
        disabled=total == 1,
        css_classes=["qv-slider"],
    )
    play = Toggle(label="▶ Play", active=False, width=100, css_classes=["qv-play"], disabled=total == 1)
    prev_button = Button(label="◀ Prev", width=80, css_classes=["qv-prev"])
    next_button = Button(label="Next ▶", width=80, css_classes=["qv-next"])
    header = _panel(first["h"], 560, None, "qv-step")
    agent_panel = _panel(first["g"], 560, 760, "qv-agent")
    report_panel = _panel(report_html(payload, first["r"]), 440, 760, "qv-report")
    key = f"{source}:{doc['episode'].get('episode_id', '')}"
    slider.js_on_change(
        "value",
        CustomJS(
            args=dict(
                payload=json.dumps(payload, ensure_ascii=False, separators=(",", ":")),
                key=key,
                slider=slider,
                nodes=nodes,
                fresh=fresh,
                previous=previous,
                arrows=arrows,
                header=header,
                agent_panel=agent_panel,
                report_panel=report_panel,
                slot=REPORT_TEXT_SLOT,
            ),
            code=_SHOW_STEP_JS,
        ),
    )
    play.js_on_change(
        "active", CustomJS(args=dict(toggle=play, slider=slider, interval=play_interval_ms, key=key), code=_PLAY_JS)
    )
    prev_button.js_on_event(
        "button_click",
        CustomJS(args=dict(slider=slider), code="slider.value = Math.max(slider.start, slider.value - 1);"),
    )
    next_button.js_on_event(
        "button_click",
        CustomJS(args=dict(slider=slider), code="slider.value = Math.min(slider.end, slider.value + 1);"),
    )
    layout = column(
        _panel(episode_header_html(doc, source), 1580, None, "qv-header"),
        row(
            column(plot, row(prev_button, play, next_button), slider, header, Div(text=_legend_html(), width=560)),
            agent_panel,
            report_panel,
        ),
    )
    return _page(layout, title)


def write_viewer(
    trace_path: str | Path, out_path: str | Path | None = None, *, doc: dict | None = None, **options
) -> Path:
    """Read, validate and render `trace_path` (or `doc`, already read from it); returns the HTML path
    (default: next to the trace)."""
    trace_path = Path(trace_path)
    doc = read_trace(trace_path) if doc is None else doc
    out = Path(out_path) if out_path else trace_path.with_suffix(".html")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_viewer_html(doc, str(trace_path), **options), encoding="utf-8")
    return out
