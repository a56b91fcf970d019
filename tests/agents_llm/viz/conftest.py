"""Shared helpers for the viz tests: synthetic traces on disk and a headless browser."""

from __future__ import annotations

import json
import time

import jsonschema
import pytest

from agents_llm.trace import TRACE_SCHEMA
from agents_llm.viz.synthetic_trace import make_trace

INJECTION = "</script><script>alert(1)</script>"


def first_active_agent(doc: dict) -> str:
    return doc["rounds"][0]["order"][0][0]


def injected_trace() -> dict:
    """A trace whose first active agent answers with a script-injection attempt."""
    doc = make_trace(rounds=2, n_agents=4, seed=3)
    agent = first_active_agent(doc)
    doc["rounds"][0]["agents"][agent]["response"] = f"before {INJECTION} after"
    doc["rounds"][0]["agents"][agent]["prompt"][1]["content"] = '<img src=x onerror="alert(2)">'
    doc["report_markdown"] = INJECTION
    return doc


@pytest.fixture
def save_trace(tmp_path):
    def save(doc: dict, name: str = "trace.json", validate: bool = True):
        if validate:
            jsonschema.validate(doc, TRACE_SCHEMA)
        path = tmp_path / name
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path

    return save


@pytest.fixture(scope="module")
def browser():
    from agents_llm.viz.headless_browser import browser_unavailable_reason, headless_chromium

    reason = browser_unavailable_reason()
    if reason:
        pytest.skip(f"browser test skipped: {reason}")
    with headless_chromium() as driver:
        yield driver


def open_viewer(driver, html_path, timeout_s: float = 20.0) -> float:
    """Load the page and wait for BokehJS to finish building it; returns the ready time in ms."""
    driver.get(html_path.resolve().as_uri())
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready = driver.execute_script("return window.__qmix_viewer_ready")
        if ready:
            return float(ready)
        time.sleep(0.05)
    raise AssertionError(f"{html_path}: the viewer did not finish rendering within {timeout_s} s")
