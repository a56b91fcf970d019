"""The report panel shows the report's text as it stood at every step, rebuilt from the
rounds' `collector.content`: it grows with each append, a revision replaces its
section's text, and older traces without the field fall back to the outline."""

from __future__ import annotations

import copy
import json
from html import escape

import jsonschema
import pytest

from agents_llm.trace import TRACE_SCHEMA
from agents_llm.viz.synthetic_trace import make_trace
from agents_llm.viz.trace_steps import build_steps
from agents_llm.viz.trace_viewer import build_payload, report_html, write_viewer

from .conftest import INJECTION, open_viewer


def _revising_trace() -> tuple[dict, int]:
    """A synthetic trace with at least two appends before a revision; returns it and the revised round's index."""
    for seed in range(50):
        doc = make_trace(rounds=10, n_agents=4, seed=seed, revise_rounds=(5, 6, 7, 8))
        statuses = [r["collector"]["status"] for r in doc["rounds"]]
        if "revised" in statuses and statuses[: statuses.index("revised")].count("appended") >= 2:
            return doc, statuses.index("revised")
    raise AssertionError("make_trace(revise_rounds=...) never revised a section")


def _expected_texts(doc: dict) -> list[dict[str, str]]:
    """Section id -> text after each round, followed round by round from the trace."""
    texts, out = {}, []
    for rnd in doc["rounds"]:
        c = rnd["collector"]
        if c["status"] in ("appended", "revised"):
            texts[c["section_id"]] = c["content"]
        out.append(dict(texts))
    return out


def _report_text(panel: str) -> str:
    assert '<pre class="report-text">' in panel, "the panel shows no report text"
    return panel.split('<pre class="report-text">', 1)[1].split("</pre>", 1)[0]


def test_every_step_shows_the_report_text_as_it_stood_growing_and_revised():
    doc, revised_pos = _revising_trace()
    jsonschema.validate(doc, TRACE_SCHEMA)
    expected = _expected_texts(doc)
    all_texts = {t for state in expected for t in state.values()}
    payload = build_payload(doc, "t.json")
    steps = build_steps(doc)
    shown_counts = []
    for i, (step, out) in enumerate(zip(steps, payload["steps"])):
        panel = report_html(payload, out["r"])
        if i == len(steps) - 1:  # the last step shows the final report
            assert "Final report" in panel and escape(doc["report_markdown"]) in panel
            continue
        pos = step.round_pos if step.kind != "agent" else step.round_pos - 1
        state = expected[pos] if pos >= 0 else {}
        if not state:
            assert '<pre class="report-text">' not in panel
            shown_counts.append(0)
            continue
        text = _report_text(panel)
        for content in state.values():
            assert escape(content) in text
        for content in all_texts - set(state.values()):
            assert escape(content) not in text  # not yet written, or replaced by a revision
        assert text.count("## ") == len(state)
        shown_counts.append(len(state))
    assert shown_counts == sorted(shown_counts) and shown_counts[-1] > shown_counts[0]  # it grows

    # The revision: the first section's old text is shown before the revised round's Collector step, not after.
    sid = doc["rounds"][revised_pos]["collector"]["section_id"]
    old, new = expected[revised_pos - 1][sid], expected[revised_pos][sid]
    assert old != new
    by_round = [(s, o) for s, o in zip(steps, payload["steps"]) if s.round_pos == revised_pos]
    before = [report_html(payload, o["r"]) for s, o in by_round if s.kind == "agent"]
    after = [report_html(payload, o["r"]) for s, o in by_round if s.kind == "collector"]
    assert before and after
    assert all(escape(old) in p and escape(new) not in p for p in before)
    assert escape(new) in after[0] and escape(old) not in after[0]


def test_each_section_text_is_shipped_once_not_once_per_step():
    doc = make_trace(rounds=30, n_agents=4, seed=2)
    payload = build_payload(doc, "t.json")
    panels = json.dumps(payload["reports"], ensure_ascii=False)  # the final report panel holds them all once
    rest = json.dumps({k: v for k, v in payload.items() if k != "reports"}, ensure_ascii=False)
    contents = [r["collector"]["content"] for r in doc["rounds"] if r["collector"]["content"]]
    assert len(contents) > 5
    for content in contents:
        shipped = json.dumps(escape(content), ensure_ascii=False)[1:-1]
        assert rest.count(shipped) == 1 and panels.count(shipped) <= 1


def test_a_trace_without_content_falls_back_to_the_outline():
    doc = make_trace(rounds=4, n_agents=4, seed=5)
    old = copy.deepcopy(doc)
    for rnd in old["rounds"]:
        rnd["collector"].pop("content")
    jsonschema.validate(old, TRACE_SCHEMA)
    payload = build_payload(old, "t.json")
    assert payload["texts"] == [] and any(payload["report_texts"]) is False
    panels = [report_html(payload, o["r"]) for o in payload["steps"]]
    assert not any("Report text" in p for p in panels)
    assert any('<table class="sections">' in p for p in panels)  # the outline is still there


def test_section_text_is_escaped():
    doc, _ = _revising_trace()
    rnd = next(r for r in doc["rounds"] if r["collector"]["status"] == "appended")
    rnd["collector"]["content"] = f"before {INJECTION} after"
    rnd["collector"]["title"] = '<img src=x onerror="alert(3)">'
    payload = build_payload(doc, "t.json")
    panels = "".join(report_html(payload, o["r"]) for o in payload["steps"])
    assert INJECTION not in panels and '<img src=x onerror="alert(3)">' not in panels
    assert escape(f"before {INJECTION} after") in panels


@pytest.mark.slow
def test_the_page_fills_the_report_text_per_step(browser, save_trace, tmp_path):
    from selenium.webdriver.common.keys import Keys

    from agents_llm.viz.headless_browser import find_deep

    from .test_viewer_browser import panel_text, wait_for

    doc, revised_pos = _revising_trace()
    steps = build_steps(doc)
    i = next(k for k, s in enumerate(steps) if s.round_pos == revised_pos and s.kind == "collector")
    assert i < len(steps) - 1
    sid = doc["rounds"][revised_pos]["collector"]["section_id"]
    new = doc["rounds"][revised_pos]["collector"]["content"]
    html = write_viewer(save_trace(doc), tmp_path / "text.html")
    open_viewer(browser, html)
    handle = find_deep(browser, ".noUi-handle")
    handle.click()
    for _ in range(i):
        handle.send_keys(Keys.ARROW_RIGHT)
    wait_for(lambda: f"step {i + 1} of" in panel_text(browser, "qv-step"), what=f"step {i + 1}")
    text = panel_text(browser, "qv-report")
    assert "Report text" in text and new[:80] in text and sid
