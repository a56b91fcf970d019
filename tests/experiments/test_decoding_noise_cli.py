"""decoding_noise.py reads a sampled and a greedy panel folder and prints the table it decides by."""

from __future__ import annotations

import csv
import sys

from experiments.protocol import decoding_noise


def _write(folder, rows):
    folder.mkdir()
    with open(folder / "panel.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["policy", "task", "seed", "llm_score"])
        w.writeheader()
        w.writerows(rows)


def test_the_table_covers_the_tasks_both_panels_played_and_leaves_the_pipeline_out(tmp_path, monkeypatch, capsys):
    sampled, greedy = tmp_path / "sampled", tmp_path / "greedy"
    rows = []
    for p, shift in (("preset:ring", 0.0), ("random", 0.05), ("handcrafted", -0.3)):
        for t, base in (("a", 0.5), ("b", 0.7), ("c", 0.6)):
            for r, noise in enumerate((0.02, -0.03)):
                if not (t == "c" and r == 1):  # task c has one episode only: not a sampled task
                    rows.append({"policy": p, "task": t, "seed": 1_000_000 + r, "llm_score": base + shift + noise})
    _write(sampled, rows)
    _write(greedy, [{**r, "seed": 1_000_000} for r in rows if r["seed"] == 1_000_000])
    monkeypatch.setattr(sys, "argv", ["decoding_noise.py", str(sampled), str(greedy), "--delta", "0.05"])
    decoding_noise.main()
    out = capsys.readouterr().out
    assert "policies: preset:ring, random;" in out and "handcrafted" not in out
    assert "tasks both panels played: a, b\n" in out
    assert "| greedy | 1 |" in out and "| sampled | 4 |" in out
