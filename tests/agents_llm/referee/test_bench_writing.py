"""experiments/protocol/bench_writing.py counts what it says it counts: the agents' outputs come from
the env's full round record (``last_round_info``), not from step infos that hold numbers only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow  # a subprocess that builds the store and runs 4 rounds: ~20-45 s
def test_bench_writing_counts_the_agents_outputs_and_appended_sections(tmp_path):
    out = tmp_path / "rows.json"
    res = subprocess.run(
        [
            sys.executable,
            str(ROOT / "experiments" / "protocol" / "bench_writing.py"),
            "--episodes",
            "1",
            "--out",
            str(out),
            "--",
            "llm=scripted",
            "rag=hashing",
            "judge=reference",
            "judge.embedding=hashing",
            "env.max_rounds=4",
            "env.min_rounds_before_terminate=4",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    row = json.loads(out.read_text())["rows"][0]
    # A random policy over 4 rounds: every round some agent writes; the scripted backend never returns "".
    assert row["outputs"] >= 4, row
    assert row["queries"] >= 1 and row["searched"] >= 1, row
    assert 0 <= row["flagged_outputs"] <= row["outputs"] and 0 <= row["flagged_sections"] <= row["appended"], row
