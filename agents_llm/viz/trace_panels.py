"""The viewer's text panels as HTML fragments.

Everything that came from a trace (prompts, responses, titles, even agent names) is
untrusted LLM output or user input: it is escaped here, once, with `html.escape`, and
the page only ever inserts these finished fragments.
"""

from __future__ import annotations

from html import escape

from report_protocol import COLLECTOR
from report_protocol.run_labels import env_label, team_title
from agents_llm.trace import replay_report

from .trace_steps import AGENT_STEP, COLLECTOR_STEP, ViewStep

DEFAULT_MAX_TEXT_CHARS = 100_000  # per prompt message / response; keeps the page fast with huge outputs


def clip(text, max_chars: int) -> str:
    text = "" if text is None else str(text)
    if max_chars and len(text) > max_chars:
        cut = len(text) - max_chars
        return escape(text[:max_chars]) + (
            f'<span class="clip">… [{cut:,} more characters not shown; the full text is in the trace file]</span>'
        )
    return escape(text)


def _e(value) -> str:
    return escape("" if value is None else str(value))


def _fmt(value, digits: int = 3) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return _e(value if value is not None else "–")


def run_config_of(doc: dict) -> dict:
    """The trace's episode config in the shape run names read (`report_protocol.run_labels`)."""
    config = doc["episode"].get("config") or {}
    return {"env": {"llm": config.get("llm"), "extractive": config.get("extractive")}}


def episode_header_html(doc: dict, source: str) -> str:
    """The episode's header: the env and its team as run names and W&B groups say them
    (``report_writing_v0+extractive-v2``, team ``extractive proxy v2`` or ``LLM smollm2-135m``)."""
    ep, end = doc["episode"], doc["end"]
    task = ep.get("task") or {}
    config = ep.get("config") or {}
    policy = config.get("policy") or config.get("algo") or ""
    if isinstance(policy, dict):
        policy = policy.get("name", "")
    kinds = sorted({r["source"] for r in doc["rounds"]})
    run_config = run_config_of(doc)
    team = team_title(run_config) or "not recorded"
    return (
        f'<div class="hdr"><b>Episode {_e(ep.get("episode_id"))}</b> · env '
        f'<b class="env">{_e(env_label(str(ep.get("env")), run_config))}</b> · team <b class="team">{_e(team)}</b> · '
        f"topic <i>{_e(task.get('topic'))}</i> ({_e(task.get('split'))}) · "
        + (f"policy {_e(policy)} · " if policy else "")
        + f"driven by {_e('/'.join(kinds) or '–')} · {len(doc['rounds'])} round(s) · "
        f"ended: <b>{_e(end.get('reason'))}</b>"
        + (f" ({_e(end.get('detail'))})" if end.get("detail") else "")
        + f'<div class="src">{_e(source)}</div></div>'
    )


def empty_episode_html(doc: dict, source: str) -> str:
    end = doc["end"]
    return (
        episode_header_html(doc, source) + '<div class="empty"><h2>This episode has no rounds.</h2>'
        f"<p>The trace is valid but records no round to show. It ended with reason "
        f"<b>{_e(end.get('reason'))}</b>" + (f": {_e(end.get('detail'))}" if end.get("detail") else "") + ".</p></div>"
    )


def step_header_html(doc: dict, step: ViewStep, index: int, total: int) -> str:
    rnd = doc["rounds"][step.round_pos]
    groups = " → ".join("[" + ", ".join(_e(a) for a in g) + "]" for g in rnd["order"]) or "nobody ran"
    who = {
        AGENT_STEP: f"<b>{_e(step.agent)}</b> runs (group {(step.group or 0) + 1} of {len(rnd['order'])})",
        COLLECTOR_STEP: "<b>Collector</b> writes",
    }.get(step.kind, "no agent ran this round")
    phase = f" · phase <b>{_e(rnd['phase'])}</b>" if rnd.get("phase") else ""
    return (
        f'<div class="step">Round <b>{rnd["round"]}</b> of {len(doc["rounds"])} · step {index + 1} of {total}'
        f' · {who}{phase} · from {_e(rnd["source"])}<br><span class="order">order: {groups}</span></div>'
    )


def _messages_html(messages, max_chars: int) -> str:
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    parts = []
    for m in messages or []:
        role = m.get("role", "?") if isinstance(m, dict) else "?"
        content = m.get("content", "") if isinstance(m, dict) else m
        parts.append(
            f'<div class="msg"><span class="role">{_e(role)}</span><pre>{clip(content, max_chars)}</pre></div>'
        )
    return "".join(parts) or '<p class="none">(no prompt recorded)</p>'


def _calls_html(rnd: dict, agent: str) -> str:
    rows = [c for c in rnd.get("calls", []) if c.get("agent") == agent]
    if not rows:
        return ""
    body = "".join(
        f"<tr><td>{_e(c.get('kind'))}</td><td>{_fmt(c.get('prompt_tokens'))}</td>"
        f"<td>{_fmt(c.get('completion_tokens'))}</td><td>{_fmt(c.get('latency_s'), 2)}</td>"
        f"<td>{'yes' if c.get('cached') else ''}</td><td>{_e(c.get('error') or '')}</td></tr>"
        for c in rows
    )
    return (
        '<table class="calls"><tr><th>call</th><th>prompt tok</th><th>completion tok</th><th>latency s</th>'
        f"<th>cached</th><th>error</th></tr>{body}</table>"
    )


def _agent_html(doc: dict, rnd: dict, agent: str, max_chars: int) -> str:
    rec = rnd["agents"].get(agent, {})
    action = rnd["actions"].get(agent, {})
    chosen = action.get("name")
    if action.get("action") is not None:
        chosen = f"{chosen} (#{action['action']})"
    timing = {(e["sender"], e["receiver"]): e["timing"] for e in rnd["edges"]}
    senders = ", ".join(f"{_e(s)} ({_e(timing.get((s, agent), '?'))})" for s in rec.get("senders", [])) or "none"
    receivers = ", ".join(_e(r) for r in rec.get("receivers", [])) or "none"
    denied = "".join(
        f"<li>denied {_e(d.get('action_name'))}: {_e(d.get('reason'))} → {_e(d.get('fallback'))}</li>"
        for d in rnd.get("denied", [])
        if d.get("agent") == agent
    )
    html = (
        f'<h3>{_e(agent)} <span class="role">{_e(_role(doc, agent))}</span></h3>'
        f'<div class="kv">action: <b>{_e(chosen or "(from the plan)")}</b> · effective: '
        f"<b>{_e(action.get('effective'))}</b></div>"
        f'<div class="kv">receives from: {senders}</div><div class="kv">sends to: {receivers}</div>'
    )
    if denied:
        html += f'<ul class="denied">{denied}</ul>'
    if rec.get("error"):
        html += f'<div class="error">error: {clip(rec["error"], max_chars)}</div>'
    retrieval = rec.get("retrieval")
    if retrieval:
        chunks = ", ".join(f"{_e(c.get('source'))} p.{_e(c.get('page'))}" for c in retrieval.get("chunks", []))
        html += (
            f'<div class="kv">retrieval: queries {_e("; ".join(map(str, retrieval.get("queries", []))))}'
            f" · chunks: {chunks or 'none'}"
            + (" · <b>exhausted</b>" if retrieval.get("exhausted") else "")
            + (f" · error {_e(retrieval.get('error'))}" if retrieval.get("error") else "")
            + "</div>"
        )
    html += referee_html(rnd.get("referee"), agent)
    html += _calls_html(rnd, agent)
    response = rec.get("response")
    produced = (
        f'<pre class="response">{clip(response, max_chars)}</pre>' if response else '<p class="none">(no response)</p>'
    )
    if "inputs" in rec:  # the extractive team: no prompt was sent, its rules worked from these
        return html + inputs_html(rec["inputs"], max_chars) + "<h4>What it produced</h4>" + produced
    html += "<h4>Prompt</h4>" + _messages_html(rec.get("prompt"), max_chars)
    return html + "<h4>Response</h4>" + produced


EXTRACTIVE_NOTE = (
    '<p class="none">Extractive team: no language model, no prompt sent. The role\'s rules '
    "(docs/extractive_team.md) worked from what is shown here; its calls are charged the tokens of the prompt "
    "the LLM team would have been sent (<code>charged_prompt</code> in the trace).</p>"
)


def _texts_html(items, max_chars: int) -> str:
    return (
        "".join(
            f'<div class="msg"><span class="role">from {_e(m.get("sender"))}</span><pre>{clip(m.get("text"), max_chars)}'
            "</pre></div>"
            for m in items
        )
        or '<p class="none">(nothing received)</p>'
    )


def inputs_html(inputs: dict, max_chars: int) -> str:
    """What an extractive role received (`ExtractiveEngine.turn_inputs`), in place of a prompt."""
    kv = [("rules", inputs.get("rules")), ("topic", inputs.get("topic")), ("objective", inputs.get("objective"))]
    if "directive" in inputs:
        kv += [("directive", inputs.get("directive")), ("focus", inputs.get("focus"))]
    if "key_terms" in inputs:
        kv.append(("key terms (its brief)", "; ".join(map(str, inputs["key_terms"]))))
    kv.append(("section titles", "; ".join(map(str, inputs.get("section_titles") or [])) or "none yet"))
    html = "<h4>What it received</h4>" + EXTRACTIVE_NOTE
    html += "".join(f'<div class="kv">{_e(k)}: <b>{_e(v) or "–"}</b></div>' for k, v in kv)
    html += "<h4>Messages</h4>" + _texts_html(inputs.get("inbox") or [], max_chars)
    memory = inputs.get("memory")
    html += "<h4>Its previous output</h4>" + (
        f"<pre>{clip(memory, max_chars)}</pre>" if memory else '<p class="none">(none)</p>'
    )
    if inputs.get("progress_summary"):
        html += f"<h4>Progress summary</h4><pre>{clip(inputs['progress_summary'], max_chars)}</pre>"
    retrieved = inputs.get("retrieved") or []
    if retrieved:
        html += f"<h4>Retrieved ({len(retrieved)} chunk(s))</h4>" + "".join(
            f'<div class="msg"><span class="src">{_e(c.get("source"))} p.{_e(c.get("page"))}</span>'
            f"<pre>{clip(c.get('text'), max_chars)}</pre></div>"
            for c in retrieved
        )
    return html


def referee_html(flags, agent: str | None = None) -> str:
    """The referee's flags of a round (agents_llm.referee), or only those on one agent's output."""
    shown = [f for f in flags or [] if agent is None or f.get("target") == agent]
    if not shown:
        return ""
    items = "".join(
        f"<li><b>{_e(f.get('kind'))}</b> on {_e(f.get('target'))}: {_e(f.get('reason'))}"
        + (" (penalised)" if f.get("penalised") else "")
        + (f'<div class="src">{_e(f.get("evidence"))}</div>' if f.get("evidence") else "")
        + "</li>"
        for f in shown
    )
    return f'<h4 class="referee">Referee flags</h4><ul class="referee">{items}</ul>'


def _role(doc: dict, agent: str) -> str:
    return next((m.get("role", "") for m in doc["episode"].get("team", []) if m.get("name") == agent), "")


def _collector_html(rnd: dict, max_chars: int) -> str:
    c = rnd["collector"]
    appenders = ", ".join(_e(e["sender"]) for e in rnd["edges"] if e["receiver"] == COLLECTOR) or "nobody"
    html = (
        f'<h3>Collector</h3><div class="kv">status: <b>{_e(c.get("status"))}</b>'
        + (f" · {_e(c.get('reason'))}" if c.get("reason") else "")
        + "</div>"
        f'<div class="kv">appended by: {appenders}</div>'
    )
    if c.get("title") or c.get("section_id"):
        html += f'<div class="kv">section {_e(c.get("section_id"))}: <b>{_e(c.get("title"))}</b></div>'
    if c.get("removed_sentences"):
        html += f'<div class="kv">report filter removed {_e(c.get("removed_sentences"))} sentence(s)</div>'
    html += referee_html([f for f in rnd.get("referee") or [] if f.get("on_report", True)])
    html += _calls_html(rnd, COLLECTOR)
    inputs = c.get("inputs")
    if inputs is not None:  # the extractive Collector: what it received and the section its rules composed
        html += (
            "<h4>What it received</h4>"
            + EXTRACTIVE_NOTE
            + f'<div class="kv">objective: <b>{_e(inputs.get("objective")) or "–"}</b></div>'
            + _texts_html(inputs.get("contributions") or [], max_chars)
            + "<h4>What it produced (before the report filter)</h4>"
            + (f"<pre>{clip(c['draft'], max_chars)}</pre>" if c.get("draft") else '<p class="none">(nothing)</p>')
        )
    gate = rnd.get("gate")
    if gate:
        html += (
            f'<h4>Gate check ({_e(gate.get("agent"))})</h4><div class="kv">{_e(gate.get("question"))} → '
            f"<b>{_e(gate.get('passed'))}</b></div><pre>{clip(gate.get('response'), max_chars)}</pre>"
        )
    return html


def agent_panel_html(doc: dict, step: ViewStep, max_chars: int = DEFAULT_MAX_TEXT_CHARS) -> str:
    rnd = doc["rounds"][step.round_pos]
    if step.kind == AGENT_STEP:
        assert step.agent is not None, "an agent step names its agent (trace_steps.round_steps)"
        return _agent_html(doc, rnd, step.agent, max_chars)
    if step.kind == COLLECTOR_STEP:
        return _collector_html(rnd, max_chars)
    votes = ", ".join(_e(a) for a in rnd.get("terminate_votes", [])) or "nobody"
    return f'<h3>No agent ran in round {rnd["round"]}</h3><div class="kv">terminate votes: {votes}</div>'


# Where the report panel's section texts go. The viewer ships each distinct section text
# once and fills this slot per step, so a long episode's page does not repeat the whole
# report at every step. Escaped text can never contain it (its "<" is escaped).
REPORT_TEXT_SLOT = "<!--qv-report-text-->"


def shown_sections(
    doc: dict, round_pos: int, after: bool, final: bool, replayed: list[list[dict]]
) -> list[dict] | None:
    """The replayed sections whose text the report panel shows, or None: nothing written
    yet, a trace without section texts (older than `collector.content`: the outline is
    all there is), or the last step, which shows the final report instead."""
    shown_pos = round_pos if after else round_pos - 1
    if shown_pos < 0 or (final and doc.get("report_markdown")):
        return None
    sections = replayed[shown_pos]
    return sections if any(s.get("content") is not None for s in sections) else None


def section_text_html(section: dict, max_chars: int = DEFAULT_MAX_TEXT_CHARS) -> str:
    """One replayed section as escaped markdown text (clipped like any other text)."""
    content = section.get("content")
    return clip(f"## {section.get('title')}\n\n{'(text not recorded)' if content is None else content}\n\n", max_chars)


def report_panel_html(
    doc: dict,
    round_pos: int,
    after: bool,
    final: bool,
    max_chars: int = DEFAULT_MAX_TEXT_CHARS,
    replayed: list[list[dict]] | None = None,
    text_slot: bool = False,
) -> str:
    """The report as it stood: before round `round_pos` (after the previous one) or after it.

    Its text is rebuilt from the rounds' collector contents (`replayed`, from
    `replay_report`, computed here when not given); the last step shows the final report.
    With `text_slot`, the section texts are left out and `REPORT_TEXT_SLOT` marks their place.
    """
    rounds = doc["rounds"]
    rnd = rounds[round_pos]
    shown_pos = round_pos if after else round_pos - 1
    shown = rounds[shown_pos] if shown_pos >= 0 else None
    title = f"after round {rnd['round']}" if after else f"at the start of round {rnd['round']}"
    if shown is None:
        return f'<h3>Report {title}</h3><p class="none">(empty: nothing written yet)</p>'
    report = shown["report"]
    scores = " · ".join(
        f"{k} {_fmt(shown.get(k))}" for k in ("report_score", "length_score", "reward") if shown.get(k) is not None
    )
    tokens = shown.get("tokens", {})
    rows = "".join(
        f"<tr><td>{_e(s.get('id'))}</td><td>{_e(s.get('title'))}</td><td>{_fmt(s.get('chars'))}</td>"
        f"<td>{_e(', '.join(map(str, s.get('sources', []))))}</td></tr>"
        for s in report.get("sections", [])
    )
    html = (
        f'<h3>Report {title}</h3><div class="kv">{_fmt(report.get("chars"))} characters · '
        f"{len(report.get('sections', []))} section(s)"
        + (f" · {scores}" if scores else "")
        + f" · tokens: round {_fmt(tokens.get('round'))}, episode {_fmt(tokens.get('episode'))}</div>"
    )
    html += referee_html([f for f in shown.get("referee") or [] if f.get("on_report", True)])
    html += (
        f'<table class="sections"><tr><th>id</th><th>title</th><th>chars</th><th>sources</th></tr>{rows}</table>'
        if rows
        else '<p class="none">(no sections yet)</p>'
    )
    sections = shown_sections(doc, round_pos, after, final, replayed if replayed is not None else replay_report(rounds))
    if sections is not None:
        topic = (doc["episode"].get("task") or {}).get("topic") or ""
        body = REPORT_TEXT_SLOT if text_slot else "".join(section_text_html(s, max_chars) for s in sections)
        html += f'<h4>Report text</h4><pre class="report-text">{_e("# " + topic)}\n\n{body}</pre>'
    html += f"<h4>Progress summary</h4><pre>{clip(report.get('progress_summary'), max_chars)}</pre>"
    if final:
        end = doc["end"]
        html += (
            f"<h4>Final report (episode ended: {_e(end.get('reason'))})</h4>"
            f'<pre class="final">{clip(doc.get("report_markdown"), max_chars) or "(empty)"}</pre>'
        )
    return html
