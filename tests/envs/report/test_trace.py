"""The execution trace: versioned schema, every round's fields, secrets redacted."""

from __future__ import annotations

import json

import jsonschema
import pytest

from report_protocol import ActionTable
from agents_llm.report_state import ReportState
from agents_llm.trace import REDACTED, SCHEMA_NAME, TRACE_SCHEMA, ExecutionTrace, load_trace, redact

from .conftest import StubRetriever, make_env

T = ActionTable(4)
TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]


def test_redaction_of_keys_tokens_and_environment_secrets(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_API_KEY", "s3cr3t-value-123456")
    doc = {
        "llm": {"api_key": "abc123456789", "api_key_env": "OPENAI_API_KEY", "max_tokens": 96},
        "headers": {"Authorization": "Bearer eyJhbGciOi.JIUzI1NiJ9"},
        "text": (
            "call with Bearer abcdefghijklmnop and sk-proj-ABCDEFGHIJKLMNOP1234 "
            "password=hunter2hunter2 and s3cr3t-value-123456"
        ),
        "prompt_tokens": 12,
    }
    out = redact(doc)
    assert out["llm"]["api_key"] == REDACTED and out["llm"]["api_key_env"] == "OPENAI_API_KEY"
    assert out["llm"]["max_tokens"] == 96 and out["prompt_tokens"] == 12
    assert out["headers"]["Authorization"] == REDACTED
    text = out["text"]
    for secret in ("abcdefghijklmnop", "sk-proj-ABCDEFGHIJKLMNOP1234", "hunter2hunter2", "s3cr3t-value-123456"):
        assert secret not in text
    assert text.count(REDACTED) == 4


def test_episode_trace_validates_against_the_schema_and_hides_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("QMIX_TEST_TOKEN", "tok-0123456789abcdef")
    # A document that leaks a key into a prompt: the saved trace must not carry it.
    retriever = StubRetriever(texts=("Use the key tok-0123456789abcdef with Bearer zzzzzzzzzzzzzzzz to call it.",))
    env = make_env(
        retriever=retriever,
        output_dir=str(tmp_path),
        save_episodes=True,
        max_rounds=3,
        llm={"backend": "scripted", "api_key": "sk-live-SHOULDNOTAPPEAR000"},
    )
    env.reset(seed=0)
    actions = [
        # The DataAnalyst hears the Researcher, so the section it appends next round can cite its chunk.
        {
            **{a: T.solo for a in TEAM},
            "LeadArchitect": T.broadcast,
            "Researcher": T.query(0),
            "DataAnalyst": T.query(1),
        },
        {**{a: T.solo for a in TEAM}, "DataAnalyst": T.append},
        {**{a: T.solo for a in TEAM}, "Reviewer": T.aggregate},
    ]
    for acts in actions:
        env.step(acts)
    [folder] = list(tmp_path.iterdir())
    raw = (folder / "trace.json").read_text()
    for secret in ("tok-0123456789abcdef", "zzzzzzzzzzzzzzzz", "sk-live-SHOULDNOTAPPEAR000"):
        assert secret not in raw
    doc = load_trace(folder / "trace.json")
    jsonschema.validate(doc, TRACE_SCHEMA)
    assert doc["schema"] == SCHEMA_NAME and doc["version"] == 1
    assert [r["round"] for r in doc["rounds"]] == [1, 2, 3] and doc["end"]["reason"] == "truncated"
    r1, r2, r3 = doc["rounds"]
    assert r1["actions"]["LeadArchitect"] == {
        "action": T.broadcast,
        "name": "broadcast_all",
        "effective": "broadcast_all",
    }
    assert r1["order"][0] == ["LeadArchitect"] and "Researcher" in r1["order"][1]
    assert r1["agents"]["LeadArchitect"]["receivers"] == ["Researcher", "DataAnalyst", "Reviewer"]
    assert r1["agents"]["Researcher"]["senders"] == ["LeadArchitect"]
    assert r1["agents"]["Researcher"]["retrieval"]["chunks"][0]["source"] == "doc0.md"
    assert all(c["prompt_tokens"] > 0 for c in r1["calls"])
    assert sum(c["prompt_tokens"] + c["completion_tokens"] for c in r2["calls"]) == r2["tokens"]["round"]
    assert r2["collector"]["status"] == "appended" and r2["collector"]["content"]
    assert r2["report"]["changed_section"]["id"] == r2["collector"]["section_id"]
    # The append was scored; the scripted double's hash text has no supported length, so it earns nothing.
    assert r2["rounds_since_append"] == 2 and "judge_score" in r2["scores"] and r2["scores"]["length_chars"] == 0.0
    assert r3["report"]["sections"][0]["id"] == "S1"
    assert doc["report_markdown"].startswith("# ")
    assert (folder / "report.md").read_text() == doc["report_markdown"]
    # The final report's state is kept whole, with the chunks each section cites, so another judge
    # can score the report the env's judge read (experiments/protocol/episode_reports.py).
    state = ReportState.from_dict(doc["report_state"])
    assert state.to_markdown() == doc["report_markdown"]
    cited = state.sections[0].sources
    assert cited and all(s.text and s.chunk_id for s in cited) and cited[0].source == "doc0.md"


def test_load_trace_refuses_other_documents(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"schema": "something-else", "version": 1}))
    with pytest.raises(ValueError, match="not a"):
        load_trace(path)
    t = ExecutionTrace({"env": "e"})
    doc = t.to_dict()
    doc["version"] = 99
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="unsupported"):
        load_trace(path)
