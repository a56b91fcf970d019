import json

import jsonschema
import pytest

from agents_llm.trace import TRACE_SCHEMA
from agents_llm.viz.synthetic_trace import make_trace
from agents_llm.viz.trace_loading import TraceError, read_trace


@pytest.mark.parametrize("rounds,source", [(0, "actions"), (1, "actions"), (30, "plan"), (100, "actions")])
def test_synthetic_traces_follow_the_schema(rounds, source):
    doc = make_trace(rounds=rounds, n_agents=5, source=source)
    jsonschema.validate(doc, TRACE_SCHEMA)
    assert len(doc["rounds"]) == rounds


def test_a_valid_trace_is_read_back(save_trace):
    doc = make_trace(rounds=3)
    assert read_trace(save_trace(doc)) == doc


def test_truncated_json_is_named_as_truncated_with_the_file_and_position(tmp_path):
    path = tmp_path / "cut.json"
    text = json.dumps(make_trace(rounds=3), indent=1)
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(TraceError) as err:
        read_trace(path)
    message = str(err.value)
    assert str(path) in message and "truncated JSON" in message and "line" in message


def test_malformed_json_that_is_not_truncated_says_invalid_at_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n "schema": "x",, "rounds": []\n}', encoding="utf-8")
    with pytest.raises(TraceError, match=r"bad\.json: invalid JSON at line 2, column 16"):
        read_trace(path)


def test_empty_file_and_missing_file_are_refused_by_name(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(TraceError, match=r"empty\.json: the file is empty"):
        read_trace(empty)
    with pytest.raises(TraceError, match=r"nope\.json: no such trace file"):
        read_trace(tmp_path / "nope.json")


def test_wrong_schema_name_and_version_are_refused(save_trace):
    doc = make_trace(rounds=1)
    doc["schema"] = "something-else"
    with pytest.raises(TraceError, match="not a qmix-report-gym/trace document"):
        read_trace(save_trace(doc, validate=False))
    doc = make_trace(rounds=1)
    doc["version"] = 99
    with pytest.raises(TraceError, match="version 99 is not supported"):
        read_trace(save_trace(doc, validate=False))


def test_schema_violation_names_the_field_path(save_trace):
    doc = make_trace(rounds=2)
    del doc["rounds"][1]["edges"]
    doc["rounds"][0]["collector"]["status"] = "exploded"
    with pytest.raises(TraceError) as err:
        read_trace(save_trace(doc, validate=False))
    message = str(err.value)
    assert "2 problem(s)" in message
    assert "rounds[1]: 'edges' is a required property" in message
    assert "rounds[0].collector.status" in message
