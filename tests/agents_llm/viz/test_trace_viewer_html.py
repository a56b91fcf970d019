import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agents_llm.viz.synthetic_trace import make_trace
from agents_llm.viz.trace_panels import clip, episode_header_html
from agents_llm.viz.trace_steps import build_steps
from agents_llm.viz.trace_viewer import build_payload, build_viewer_html, write_viewer

from .conftest import INJECTION, first_active_agent, injected_trace

REPO = Path(__file__).resolve().parents[3]


def test_the_page_is_self_contained_no_external_script_or_stylesheet():
    html = build_viewer_html(make_trace(rounds=2), "t.json")
    assert "Bokeh" in html  # BokehJS is inlined...
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, re.IGNORECASE)  # ...not loaded from anywhere
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']?(https?:)?//", html, re.IGNORECASE)
    assert not re.search(r"@import\s+url\(\s*[\"']?https?:", html, re.IGNORECASE)


def test_untrusted_text_never_reaches_the_page_unescaped():
    doc = injected_trace()
    html = build_viewer_html(doc, "t.json")
    assert INJECTION not in html
    assert '<img src=x onerror="alert(2)">' not in html
    # the text itself is kept (escaped), so the reader still sees what the agent said
    step_html = build_payload(doc, "t.json")["steps"][0]["g"]
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in step_html


def test_payload_has_one_entry_per_step_with_the_active_agent():
    doc = make_trace(rounds=30, n_agents=5, seed=2)
    payload = build_payload(doc, "t.json")
    steps = build_steps(doc)
    assert [s["agent"] for s in payload["steps"]] == [s.agent for s in steps]
    assert len(payload["nodes"]["name"]) == 6 and payload["nodes"]["name"][-1] == "Collector"
    edges_shown = len(payload["steps"][0]["f"]["x0"]) + len(payload["steps"][0]["p"]["x0"])
    assert edges_shown == len(doc["rounds"][0]["edges"])


def test_the_report_panel_shows_the_state_before_the_collector_and_after_it():
    doc = make_trace(rounds=4, n_agents=4, seed=5)
    payload = build_payload(doc, "t.json")
    steps = build_steps(doc)
    for i, (step, out) in enumerate(zip(steps, payload["steps"])):
        text = payload["reports"][out["r"]]
        if step.kind == "agent" and i < len(steps) - 1:  # the last step always shows the end state
            assert f"start of round {step.round}" in text
        else:
            assert f"after round {step.round}" in text
    assert "Final report" in payload["reports"][payload["steps"][-1]["r"]]


def test_a_one_megabyte_response_is_clipped_with_a_notice_unless_asked_for_in_full():
    doc = make_trace(rounds=1, n_agents=4, seed=1)
    agent = first_active_agent(doc)
    doc["rounds"][0]["agents"][agent]["response"] = "x" * 1_000_000
    clipped = build_payload(doc, "t.json", max_text_chars=100_000)["steps"][0]["g"]
    assert "900,000 more characters not shown" in clipped
    assert "x" * 100_000 in clipped and "x" * 100_001 not in clipped
    full = build_payload(doc, "t.json", max_text_chars=0)["steps"][0]["g"]
    assert "x" * 1_000_000 in full and "not shown" not in full


def test_clip_escapes_before_counting_is_not_fooled_by_markup():
    assert clip("<b>" * 3, 4).startswith("&lt;b&gt;&lt;")
    assert "2 more characters" in clip("<b>" * 3, 7)


def test_an_empty_trace_renders_a_page_that_says_so():
    doc = make_trace(rounds=0)
    html = build_viewer_html(doc, "empty.json")
    assert "This episode has no rounds." in html
    assert doc["end"]["detail"] in html


def test_write_viewer_puts_the_html_next_to_the_trace_by_default(save_trace):
    path = save_trace(make_trace(rounds=1), name="episode_7.json")
    out = write_viewer(path)
    assert out == path.with_suffix(".html") and out.stat().st_size > 100_000


def _visualize(*overrides):
    return subprocess.run(
        [sys.executable, str(REPO / "experiments" / "visualize.py"), *overrides],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # starts Python, Hydra and Bokeh in a subprocess: several seconds on a busy 2-core machine
def test_cli_writes_the_viewer(save_trace, tmp_path):
    good = save_trace(make_trace(rounds=2), name="good.json")
    run = _visualize(f"trace={good}", f"out={tmp_path / 'view.html'}")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "view.html").is_file() and "view.html" in run.stdout


def test_cli_refuses_a_truncated_trace_with_exit_status_2(save_trace, tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(make_trace(rounds=2))[:3000])
    run = _visualize(f"trace={cut}")
    assert run.returncode == 2
    assert f"{cut}: truncated JSON" in run.stderr
    assert not cut.with_suffix(".html").exists()


def test_cli_rejects_an_unknown_key_by_name():
    run = _visualize("trcae=x.json")
    assert run.returncode != 0
    assert "Key 'trcae' not in 'VisualizeConfig'" in run.stderr


def test_payload_is_plain_json():
    payload = build_payload(make_trace(rounds=3), "t.json")
    assert json.loads(json.dumps(payload)) == payload


def test_the_header_names_the_env_and_the_llm_team_and_agents_show_their_prompts():
    doc = make_trace(rounds=2, n_agents=4, seed=1)
    header = episode_header_html(doc, "t.json")
    # As run names and W&B groups say it (report_protocol.run_labels), not the bare registry id.
    assert '<b class="env">report_writing_v0+smollm2-135m</b>' in header
    assert '<b class="team">LLM smollm2-135m</b>' in header
    assert "report_writing_v0+smollm2-135m" in build_viewer_html(doc, "t.json")  # the page's header panel
    step = build_payload(doc, "t.json")["steps"][0]["g"]
    assert "<h4>Prompt</h4>" in step and "<h4>Response</h4>" in step
    assert "What it received" not in step
