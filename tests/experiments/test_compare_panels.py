"""experiments/protocol/compare_panels.py: two panels of the same cells, paired cell by cell."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from experiments.protocol.compare_panels import main

FIELDS = [
    "policy",
    "task",
    "seed",
    "llm_score",
    "llm_seconds",
    "llm_prompt_tokens_evaluated",
    "llm_prompt_tokens_reused",
]


def write_panel(folder, rows):
    folder.mkdir()
    with open(folder / "panel.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for policy, task, score, evaluated, reused in rows:
            w.writerow(dict(zip(FIELDS, [policy, task, "7", score, "10", evaluated, reused])))


def test_cells_are_paired_and_the_difference_and_reuse_are_per_setting(tmp_path, capsys):
    base, chats = tmp_path / "stand_alone", tmp_path / "chats"
    write_panel(
        base,
        [("pipeline", "t1", 0.5, 80, 20), ("pipeline", "t2", 0.7, 80, 20), ("qmix", "t1", 0.6, 90, 10),
         ("qmix", "t2", 0.6, 90, 10), ("qmix", "t3", 0.9, 90, 10)],
    )  # fmt: skip
    write_panel(
        chats,
        [("pipeline", "t1", 0.6, 30, 70), ("pipeline", "t2", 0.8, 30, 70), ("qmix", "t1", 0.4, 40, 60),
         ("qmix", "t2", 0.4, 40, 60)],
    )  # fmt: skip
    assert main([str(base), str(chats), "--out", str(tmp_path / "out"), "--reps", "200"]) == 0
    result = json.loads((tmp_path / "out" / "summary.json").read_text())
    pipeline, qmix, both = (result["policies"][k] for k in ("pipeline", "qmix", "all cells"))
    assert pipeline["difference"]["mean"] == pytest.approx(0.1) and qmix["difference"]["mean"] == pytest.approx(-0.2)
    assert both["cells"] == 4 and both["difference"]["mean"] == pytest.approx(-0.05)  # t3 has no pair
    assert pipeline["base_cost"]["evaluated_per_sent"] == pytest.approx(0.8)
    assert both["other_cost"]["evaluated_per_sent"] == pytest.approx(140 / 400)
    assert result["unpaired"] == [["qmix", "t3", "7"]]
    assert "| qmix | 2 | 0.600 | 0.400 | -0.200" in capsys.readouterr().out


def test_panels_without_a_common_cell_are_refused(tmp_path):
    write_panel(tmp_path / "a", [("pipeline", "t1", 0.5, 1, 1)])
    write_panel(tmp_path / "b", [("pipeline", "t2", 0.5, 1, 1)])
    with pytest.raises(SystemExit, match="share no"):
        main([str(tmp_path / "a"), str(tmp_path / "b")])
    with pytest.raises(SystemExit, match="no panel.csv"):
        main([str(tmp_path / "a"), str(tmp_path / "missing")])


def test_every_row_prints_its_minimum_detectable_difference_and_says_when_it_cannot_resolve_005(tmp_path, capsys):
    base, other = tmp_path / "a", tmp_path / "b"
    write_panel(base, [("ring", t, 0.5, 10, 0) for t in ("t1", "t2", "t3")])
    write_panel(other, [("ring", t, 0.5 + d, 10, 0) for t, d in (("t1", 0.0), ("t2", 0.2), ("t3", -0.1))])
    assert main([str(base), str(other), "--out", str(tmp_path / "out"), "--reps", "200"]) == 0
    out = capsys.readouterr().out
    sd = float(np.std([0.0, 0.2, -0.1], ddof=1))
    mdd = (1.959964 + 0.841621) * sd / np.sqrt(3)  # (z_a + z_b) sd / sqrt(n), two-sided 0.05, 80 %
    assert f"| {mdd:.3f} |" in out
    assert "CANNOT resolve a difference of 0.05" in out
