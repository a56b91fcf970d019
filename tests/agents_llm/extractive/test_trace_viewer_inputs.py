"""The trace viewer on a real extractive episode: the header names the proxy and its rules' version,
and each role shows what it received and produced, not an LLM prompt nobody sent."""

from __future__ import annotations

import json

from report_protocol import ActionTable

AGENTS = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(4)


def joint(**kw):
    return {a: kw.get(a, T.solo) for a in AGENTS}


def _episode(make_env):
    from agents_llm.viz.trace_loading import parse_trace_text

    env = make_env()
    env.reset(seed=0)
    env.step(joint(Researcher=T.append))
    env.step(joint(LeadArchitect=T.query(1), Reviewer=T.append))  # the LeadArchitect hears the Researcher
    doc = env.trace.to_dict()
    return parse_trace_text(json.dumps(doc), "extractive.json")  # valid against the trace schema


def test_the_trace_records_what_each_extractive_role_received_and_no_prompt(make_env):
    doc = _episode(make_env)
    assert doc["episode"]["config"]["extractive"] == {"version": 2}
    lead = doc["rounds"][1]["agents"]["LeadArchitect"]
    assert lead["prompt"] == [] and lead["charged_prompt"]  # nothing sent; what its tokens were charged for
    inbox = lead["inputs"]["inbox"]
    assert [m["sender"] for m in inbox] == ["Researcher"] and "[source:" in inbox[0]["text"]
    assert lead["inputs"]["rules"] == "v2" and lead["inputs"]["topic"] == "Solid-state batteries"
    assert lead["inputs"]["section_titles"] == [doc["rounds"][0]["collector"]["title"]]
    researcher = doc["rounds"][0]["agents"]["Researcher"]
    assert researcher["inputs"]["retrieved"] and all(c["text"] for c in researcher["inputs"]["retrieved"])
    assert doc["rounds"][1]["agents"]["Reviewer"]["inputs"]["key_terms"] == ["electrolyte", "dendrite", "manufacturing"]
    collector = doc["rounds"][0]["collector"]
    assert [m["sender"] for m in collector["inputs"]["contributions"]] == ["Researcher"]
    assert collector["draft"].startswith("## ")


def test_the_viewer_names_the_extractive_proxy_and_shows_inputs_not_prompts(make_env):
    from html import escape

    from agents_llm.viz.trace_panels import episode_header_html
    from agents_llm.viz.trace_viewer import build_payload

    doc = _episode(make_env)
    header = episode_header_html(doc, "extractive.json")
    assert '<b class="env">report_writing_v0+extractive-v2</b>' in header
    assert '<b class="team">extractive proxy v2</b>' in header
    payload = build_payload(doc, "extractive.json")
    panels = {(s["round"], s["agent"]): s["g"] for s in payload["steps"]}
    assert all("<h4>Prompt</h4>" not in g for g in panels.values())
    lead = panels[(2, "LeadArchitect")]
    assert "What it received" in lead and "What it produced" in lead
    received = doc["rounds"][1]["agents"]["LeadArchitect"]["inputs"]["inbox"][0]["text"]
    assert escape(received) in lead  # the Researcher's message, as the role got it
    assert escape(doc["rounds"][1]["agents"]["LeadArchitect"]["response"]) in lead
    collector = panels[(1, "Collector")]
    assert "What it received" in collector and escape(doc["rounds"][0]["collector"]["draft"]) in collector
