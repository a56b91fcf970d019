"""experiments/protocol/validate_proxy.py: the panel stores each LLM-team episode as it ends and a rerun
continues where it stopped. The LLM team here is the scripted test double (the real panel runs
SmolLM2, minutes an episode); what is tested is the panel's bookkeeping and its figures."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAST = ["rag=hashing", "judge.embedding=hashing"]


def run_panel(tmp_path: Path, tasks: int, extra: tuple | list = ()) -> subprocess.CompletedProcess:
    llm = ["env=report_writing", "env.max_rounds=8", "llm=scripted", *FAST]
    proxy = ["env=report_writing_extractive", "env.max_rounds=8", *FAST]
    quoted = lambda xs: "[" + ",".join(f'"{x}"' for x in xs) + "]"  # noqa: E731
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "experiments" / "protocol" / "validate_proxy.py"),
            f"validate.llm_overrides={quoted(llm)}",
            f"validate.proxy_overrides={quoted(proxy)}",
            "validate.policies=[handcrafted,preset:full,random]",
            f"validate.tasks={tasks}",
            "validate.workers=1",
            "validate.replicates=1",  # a greedy panel (scripted model): one episode per cell
            f"validate.out={tmp_path / 'out'}",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=dict(os.environ, QMIX_CACHE_DIR=str(tmp_path / "cache")),
    )


@pytest.mark.slow
def test_the_panel_resumes_without_rerunning_finished_episodes(tmp_path):
    first = run_panel(tmp_path, tasks=2)
    assert first.returncode == 0, first.stderr[-3000:]
    panel = tmp_path / "out" / "panel.csv"
    rows = list(csv.DictReader(open(panel)))
    assert len(rows) == 6 and {r["task"] for r in rows} == {"text-comparison", "heaps-and-bisection"}
    assert all(r["proxy_score"] and r["llm_score"] for r in rows), "each LLM row carries its proxy episode"
    assert all(r["commit"] for r in rows), "each row names the code revision that played it"
    reports = sorted((tmp_path / "out" / "episodes").glob("*/*/episode_*/report.md"))
    assert len(reports) == 6, "each LLM-team episode keeps its report"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["tasks"] == ["text-comparison", "heaps-and-bisection"]
    assert set(summary["agreement"]["per_task_tau"]) == set(summary["tasks"])
    assert "within-task Kendall tau" in (tmp_path / "out" / "summary.md").read_text()

    # An interrupt while the last two episodes were in flight: they never reached the file.
    lines = panel.read_text().splitlines(keepends=True)
    panel.write_text("".join(lines[:-2]))
    kept = "".join(lines[:-2])
    second = run_panel(tmp_path, tasks=2)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "LLM team: 4 episode(s) stored, 2 to run" in second.stdout
    assert panel.read_text().startswith(kept), "finished rows are kept as they were"
    again = list(csv.DictReader(open(panel)))
    assert sorted((r["policy"], r["task"]) for r in again) == sorted((r["policy"], r["task"]) for r in rows)
    assert [r["llm_score"] for r in again[-2:]] == [r["llm_score"] for r in rows[-2:]], "greedy: the same episodes"


@pytest.mark.slow
def test_replaying_the_proxy_refiles_its_columns_and_keeps_the_llm_ones(tmp_path):
    """After the proxy's code or store changed, validate.replay_proxy plays every cell's proxy
    episode again: the proxy columns are what a fresh proxy episode gives, the LLM columns stay."""
    first = run_panel(tmp_path, tasks=1)
    assert first.returncode == 0, first.stderr[-3000:]
    panel, proxy = tmp_path / "out" / "panel.csv", tmp_path / "out" / "proxy.csv"
    rows = list(csv.DictReader(open(panel)))
    stale = [dict(r, proxy_score="0.111", proxy_tokens="7") for r in rows]  # what an older proxy had said
    with open(panel, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(stale)
    proxy.write_text(proxy.read_text().replace(rows[0]["proxy_score"], "0.111"))

    replay = run_panel(tmp_path, tasks=1, extra=["validate.replay_proxy=true", "validate.run_episodes=false"])
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert "proxy: 3 episode(s) replayed, 3 panel row(s) refiled" in replay.stdout
    again = list(csv.DictReader(open(panel)))
    assert [(r["proxy_score"], r["proxy_tokens"]) for r in again] == [
        (r["proxy_score"], r["proxy_tokens"]) for r in rows
    ]
    assert [r["llm_score"] for r in again] == [r["llm_score"] for r in rows]
    assert "0.111" not in proxy.read_text() and len(list(csv.DictReader(open(proxy)))) == 3


def test_two_checkpoints_under_one_label_are_two_policies(tmp_path):
    """A row of the panel belongs to the checkpoint that played it: another checkpoint under the
    label `learned` must not find that row and skip its own episodes (the digest used to be empty)."""
    import experiments.protocol.validate_proxy as vp

    from algos.training import checkpoint as ckpt

    shipped = ROOT / "checkpoints" / "qmix_report_writing_extractive" / "final.pt"
    state = ckpt.load(shipped)
    state["progress"] = dict(state.get("progress") or {}, episode=-1)  # another checkpoint of the same algorithm
    other = tmp_path / "final.pt"
    ckpt.save_atomic(state, other)

    def ident(path):
        vcfg = vp.ValidateConfig(policies=["learned"], checkpoint=str(path), replicates=1)
        (job,) = vp.policy_jobs(vcfg, {}, ["sqlite"], [])
        return job["policy_id"]

    assert ident(shipped) == ident(shipped)
    assert ident(shipped) != ident(other)
    assert ident(shipped).startswith("qmix final.pt sha256:") and len(ident(shipped).split(":")[-1]) == 16


def test_replicates_and_ablated_cells_are_planned_and_averaged():
    import experiments.protocol.validate_proxy as vp

    vcfg = vp.ValidateConfig(policies=["random", "ablated:random"], replicates=2, seed=10)
    with __import__("hydra").initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
        jobs = vp.policy_jobs(vcfg, {"engine": {"reuse_sources": True}}, ["sqlite"], [])
    assert [(j["label"], j["seed"]) for j in jobs] == [
        ("random", 10),
        ("random", 11),
        ("ablated:random", 10),
        ("ablated:random", 11),
    ]
    assert [j["env"]["engine"].get("deliver_messages") for j in jobs] == [None, None, False, False]
    assert jobs[2]["policy_id"].startswith(vp.ABLATED) and not jobs[0]["policy_id"].startswith(vp.ABLATED)
    # Two tasks x two replicates of three policies: each cell is its replicates' mean, and the
    # ablated policy is a diagnostic, not a policy the agreement ranks.
    rows = [
        {"policy": p, "task": t, "seed": s, "proxy_score": base + s / 100, "llm_score": base + s / 100}
        for p, base in (("a", 0.1), ("b", 0.5), ("c", 0.9), ("ablated:a", 0.0))
        for t in ("t1", "t2")
        for s in (0, 2)
    ]
    result = vp.summarize(rows, vp.ValidateConfig(policies=["a", "b", "c", "ablated:a"]), ["t1", "t2"], 0.0)
    assert result["policies"] == ["a", "b", "c"]
    assert result["table"]["a"]["llm"] == pytest.approx(0.11)


def test_sampled_replicates_give_the_llm_teams_noise_ceiling_beside_the_proxys_tau():
    import experiments.protocol.validate_proxy as vp

    # Replicate 0 orders a < b < c on both tasks; replicate 1 swaps a and b on t2 (sampling noise).
    llm = {
        (0, "t1"): (0.1, 0.5, 0.9),
        (0, "t2"): (0.1, 0.5, 0.9),
        (1, "t1"): (0.1, 0.5, 0.9),
        (1, "t2"): (0.6, 0.5, 0.9),
    }
    rows = [
        {"policy": p, "task": t, "seed": s, "proxy_score": (0.1, 0.5, 0.9)[i], "llm_score": llm[(s, t)][i]}
        for i, p in enumerate(("a", "b", "c"))
        for t in ("t1", "t2")
        for s in (0, 1)
    ]
    vcfg = vp.ValidateConfig(policies=["a", "b", "c"], bootstrap=200)
    ceiling = vp.summarize(rows, vcfg, ["t1", "t2"], 0.0)["noise_ceiling"]
    assert ceiling["seeds"] == [0, 1]
    assert ceiling["within_task_tau"] == pytest.approx((1 + 1 / 3) / 2)
    assert ceiling["proxy_vs_one_replicate"] == pytest.approx((1 + 1 + 1 + 1 / 3) / 4)
    text = vp.markdown(vp.summarize(rows, vcfg, ["t1", "t2"], 0.0))
    assert "noise ceiling (within-task tau between replicates, seeds [0, 1]): 0.667" in text
    assert "target at least half: met" in text
    # One episode per cell (greedy): no ceiling, and the summary says what it would need.
    single = vp.summarize([r for r in rows if r["seed"] == 0], vcfg, ["t1", "t2"], 0.0)
    assert "noise_ceiling" not in single and "noise ceiling: not measured" in vp.markdown(single)

    # A third task on which the replicates order the policies the other way round: the ceiling's
    # interval reaches below 0, and a proxy twice that "ceiling" has shown nothing.
    llm[(0, "t3")], llm[(1, "t3")] = (0.1, 0.5, 0.9), (0.9, 0.5, 0.1)
    rows += [
        {"policy": p, "task": "t3", "seed": s, "proxy_score": (0.1, 0.5, 0.9)[i], "llm_score": llm[(s, "t3")][i]}
        for i, p in enumerate(("a", "b", "c"))
        for s in (0, 1)
    ]
    loose = vp.summarize(rows, vcfg, ["t1", "t2", "t3"], 0.0)
    assert loose["noise_ceiling"]["ci"][0] < 0 and loose["noise_ceiling"]["proxy_share"] >= 0.5
    assert not loose["noise_ceiling"]["half_met"]
    assert "target at least half: not judged (the ceiling's interval reaches 0" in vp.markdown(loose)
