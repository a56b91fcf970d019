"""experiments/protocol/llm_team_result.py: paired LLM-team episodes become episodes.csv, the table and the
verdict on the issue's bar, from a validate_proxy.py panel."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("rliable")
import experiments.protocol.llm_team_result as llm_team_result  # noqa: E402

TASKS = ["t1", "t2", "t3", "t4", "t5", "t6"]
PIPELINE = [0.60, 0.55, 0.70, 0.65, 0.50, 0.62]
FIXED_ID = '{"name": "handcrafted"}'


def panel_row(policy: str, task: str, score: float, tokens: float, policy_id: str) -> dict:
    return {
        "policy": policy,
        "task": task,
        "seed": 1_000_000,
        "policy_id": policy_id,
        "proxy_score": 0.5,
        "llm_score": score,
        "proxy_tokens": 1,
        "llm_tokens": tokens,
        "commit": "abc",
    }


def write_panel(folder: Path, learned: dict[str, tuple[list[float], float]], drop: tuple = ()) -> None:
    rows = [panel_row("handcrafted", t, s, 10_000, FIXED_ID) for t, s in zip(TASKS, PIPELINE)]
    rows += [panel_row("random", t, s - 0.02, 18_000, '{"name": "random"}') for t, s in zip(TASKS, PIPELINE)]
    for label, (scores, tokens) in learned.items():
        rows += [
            panel_row(label, t, s, tokens, f"qmix final.pt sha256:{label}")
            for t, s in zip(TASKS, scores)
            if (label, t) not in drop
        ]
    with open(folder / "panel.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def table(result: dict) -> dict:
    return {e["policy"]: e for e in result["table"]}


def test_two_seeds_are_one_learner_and_a_clear_gain_meets_the_bar(tmp_path):
    up = [s + 0.10 for s in PIPELINE]
    write_panel(tmp_path, {"qmix_llm_s0": (up, 20_000), "qmix_llm_s1": ([s + 0.08 for s in PIPELINE], 20_000)})
    result = llm_team_result.write_result(tmp_path, {}, margin=0.03, token_ratio=0.8, reps=500)
    with open(tmp_path / "episodes.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[:6] == ["policy", "train_seed", "task", "seed", "score", "tokens"]
    assert {(r["policy"], r["train_seed"]) for r in rows} == {
        ("handcrafted", ""),
        ("random", ""),
        ("qmix_llm", "0"),
        ("qmix_llm", "1"),
    }
    qmix = table(result)["qmix_llm"]
    assert qmix["runs"] == 2 and qmix["train_seeds"] == [0, 1]
    assert qmix["paired_difference"]["mean"] == pytest.approx(0.09)
    assert qmix["paired_difference"]["low"] > 0 and qmix["beats_pipeline"]
    assert qmix["token_ratio"] == pytest.approx(2.0) and not qmix["matches_pipeline_cheaper"]
    assert result["learned_policies_meeting_the_bar"] == ["qmix_llm"]
    # random is a fixed policy, below the pipeline on every task: never on the learned list
    assert table(result)["random"]["paired_difference"]["high"] < 0
    assert "Met by: qmix_llm" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "pareto.png").stat().st_size > 0
    assert json.loads((tmp_path / "summary.json").read_text())["tasks"] == TASKS


def test_equal_score_at_half_the_tokens_meets_the_bar_and_at_full_cost_does_not(tmp_path):
    noisy = [s + d for s, d in zip(PIPELINE, [0.04, -0.05, 0.03, -0.04, 0.02, -0.01])]  # mean -0.0017
    write_panel(tmp_path, {"cheap_s0": (noisy, 5_000), "dear_s0": (noisy, 9_000)})
    result = llm_team_result.write_result(tmp_path, {}, margin=0.03, token_ratio=0.8, reps=500)
    t = table(result)
    assert not t["cheap"]["beats_pipeline"] and t["cheap"]["matches_pipeline_cheaper"]
    assert not t["dear"]["matches_pipeline_cheaper"]  # 0.9x the tokens
    assert result["learned_policies_meeting_the_bar"] == ["cheap"]


def test_a_worse_learner_fails_the_bar_and_the_summary_says_so(tmp_path):
    write_panel(tmp_path, {"graph_pg_llm_s0": ([s - 0.05 for s in PIPELINE], 8_000)})
    result = llm_team_result.write_result(tmp_path, {}, margin=0.03, token_ratio=0.8, reps=500)
    assert result["learned_policies_meeting_the_bar"] == []
    assert "No learned policy meets it." in (tmp_path / "summary.md").read_text()


def test_unfinished_tasks_are_left_out_by_name_and_labels_can_be_renamed(tmp_path):
    write_panel(
        tmp_path,
        {"learned": ([s + 0.1 for s in PIPELINE], 20_000), "qmix_llm_s0": (PIPELINE, 20_000)},
        drop=(("qmix_llm_s0", "t6"),),
    )
    result = llm_team_result.write_result(
        tmp_path, {"learned": "qmix_proxy_s1"}, margin=0.03, token_ratio=0.8, reps=500
    )
    assert result["tasks"] == TASKS[:5]
    assert result["missing"] == {"t6": ["qmix_llm_s0"]}
    assert table(result)["qmix_proxy"]["train_seeds"] == [1]
    assert "- t6: no episode of qmix_llm_s0" in (tmp_path / "summary.md").read_text()


def test_training_logs_are_copied_and_drawn_per_learner(tmp_path):
    write_panel(tmp_path, {"qmix_llm_s0": (PIPELINE, 20_000), "qmix_llm_s1": (PIPELINE, 20_000)})
    for seed in (0, 1):
        run = tmp_path / f"run{seed}"
        run.mkdir()
        # two agents, 6 actions each (solo, broadcast, q_A, q_B, aggregate, append, terminate: 5 + 2)
        acts = ",".join(f"act/{a}/{k}" for a in "AB" for k in range(7))
        share = {("A", 5): 1.0, ("B", 2): 0.75, ("B", 6): 0.25}  # A appends; B mostly queries A
        row = ",".join(str(share.get((a, k), 0.0)) for a in "AB" for k in range(7))
        (run / "train.csv").write_text(
            f"episode,report_score,tokens,{acts}\n"
            + "".join(f"{e},{0.5 + 0.01 * e + seed * 0.02},100,{row}\n" for e in range(1, 5))
        )
        assert llm_team_result.main([str(tmp_path), "--run", f"qmix_llm_s{seed}={run}", "--reps", "200"]) == 0
    result = json.loads((tmp_path / "summary.json").read_text())
    assert result["curves"]["qmix_llm"]["runs"] == 2
    assert result["curves"]["qmix_llm"]["episodes"] == [1, 2, 3, 4]
    assert (tmp_path / "curves.png").exists()
    assert result["late_actions"]["qmix_llm_s1"]["B"] == [["q_A", 0.75], ["terminate", 0.25]]
    assert "A: append 1.00" in (tmp_path / "summary.md").read_text()


def test_a_panel_without_the_pipeline_is_refused_by_name(tmp_path, capsys):
    write_panel(tmp_path, {"qmix_llm_s0": (PIPELINE, 20_000)})
    rows = (tmp_path / "panel.csv").read_text().splitlines()
    (tmp_path / "panel.csv").write_text("\n".join(r for r in rows if not r.startswith("handcrafted")) + "\n")
    assert llm_team_result.main([str(tmp_path), "--reps", "100"]) == 2
    assert "no 'handcrafted' episodes" in capsys.readouterr().err


def test_a_graph_pg_run_shows_its_most_likely_graph_and_what_moved_from_its_start(tmp_path):
    import torch

    from algos.training import checkpoint as ckpt

    shipped = ROOT / "checkpoints" / "graph_pg_report_writing_extractive" / "final.pt"
    state = ckpt.load(shipped)
    start = state["algo"]["logits"].argmax(-1)
    logits = state["algo"]["logits"].clone()
    logits[0, 0] = -10.0
    logits[0, 0, 1] = 10.0  # round 1, first agent: broadcast now
    state["algo"]["logits"] = logits
    state["config"]["init"] = str(shipped)
    state.pop("digest", None)
    run = tmp_path / "runs" / "graph_pg_llm_s0"
    run.mkdir(parents=True)
    ckpt.save_atomic(state, run / "final.pt")
    write_panel(tmp_path, {"graph_pg_llm_s0": (PIPELINE, 9_000)})
    result = llm_team_result.write_result(tmp_path, {}, margin=0.03, token_ratio=0.8, reps=200)
    graph = result["graphs"]["graph_pg_llm_s0"]
    assert graph["changed_from_init"] == int(start[0, 0] != 1)
    assert graph["rounds"][0][0] == "broadcast"
    names = llm_team_result.action_names(graph["team"])
    assert graph["rounds"][1] == [names[a] for a in start[1].tolist()]
    assert "| 1 | broadcast |" in (tmp_path / "summary.md").read_text()
    assert torch.equal(ckpt.load(run / "final.pt")["algo"]["logits"], logits)
