import json

import matplotlib.image as mpimg
import pytest

from agents_llm.viz.eval_report import pareto_front, write_eval_report

AGENTS = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
N_ACTIONS = 9


def _metrics(score: float, tokens: float, favourite: int = 0, top: float = 0.5, drop=()) -> dict:
    """Metrics as experiments/evaluate.py writes them (mean metrics + act/<agent>/<a> frequencies)."""
    m = {
        "return": score * 2,
        "return_std": 0.1,
        "length": 12.0,
        "report_score": score,
        "length_score": 0.4,
        "tokens": tokens,
    }
    for agent in AGENTS:
        for a in range(N_ACTIONS):
            m[f"act/{agent}/{a}"] = top if a == favourite else (1 - top) / (N_ACTIONS - 1)
        m[f"act/{agent}/top"] = top
    return {k: v for k, v in m.items() if k not in drop}


def _write(path, algo: str, metrics: dict, split: str | None = None):
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "algo": algo,
        "env": "report_writing_v0",
        "source": {"kind": "fixed_policy"},
        "episodes": 3,
        "seconds": 1.0,
        "metrics": metrics,
        "per_episode": [
            {
                "return": 1.0,
                "length": 12,
                "actions": [],
                "report_score": metrics.get("report_score", 0) + d,
                "tokens": metrics.get("tokens", 0) + 100 * d,
            }
            for d in (-0.05, 0.0, 0.05)
        ],
    }
    if split:
        doc["split"] = split
    path.write_text(json.dumps(doc))
    return path


def test_pareto_front_keeps_only_undominated_points_sorted_by_cost():
    points = [(100, 0.5), (200, 0.7), (150, 0.4), (300, 0.7), (50, 0.1)]
    # (150, 0.4) loses to (100, 0.5); (300, 0.7) loses to (200, 0.7): same score, more tokens
    assert pareto_front(points) == [4, 0, 1]
    assert pareto_front([(1, 1), (1, 1)]) == [0, 1]  # ties dominate nobody
    assert pareto_front([]) == []


def test_report_marks_the_front_compares_splits_and_flags_collapsed_agents(tmp_path):
    runs = tmp_path / "evals"
    _write(runs / "qmix" / "holdout" / "metrics.json", "qmix", _metrics(0.6, 8000, favourite=7, top=1.0))
    _write(runs / "qmix" / "train" / "metrics.json", "qmix", _metrics(0.7, 8200))
    _write(runs / "handcrafted" / "metrics.json", "handcrafted", _metrics(0.8, 20000), split="holdout")
    _write(runs / "random" / "metrics.json", "random", _metrics(0.3, 12000))  # dominated by qmix holdout
    result = write_eval_report([str(runs)], tmp_path / "report")
    md = result.report.read_text()
    assert result.report == tmp_path / "report" / "eval_report.md"
    assert [p.name for p in result.files] == ["score_vs_tokens.png", "action_mix.png", "holdout_vs_train.png"]
    assert result.front == ["qmix (holdout)", "handcrafted (holdout)"]  # by tokens; train points are not ranked
    rows = {
        line.split(" | ")[0].strip("| ") + "/" + line.split(" | ")[1]: line
        for line in md.splitlines()
        if line.startswith("| ") and not line.startswith("| policy")
    }
    assert set(rows) == {"qmix/holdout", "qmix/train", "handcrafted/holdout", "random/holdout"}
    assert "| yes |" in rows["qmix/holdout"] and "| yes |" in rows["handcrafted/holdout"]
    assert "| yes |" not in rows["random/holdout"] and "| yes |" not in rows["qmix/train"]
    assert rows["qmix/holdout"].endswith("| LeadArchitect, Researcher, DataAnalyst, Reviewer |")  # top = 1.0
    assert rows["random/holdout"].endswith("| none |")
    assert "![Holdout against train](holdout_vs_train.png)" in md
    assert "taken as holdout (evaluate.py evaluates on the holdout settings)" in md  # random has no split
    assert "taken as train (from its path)" in md
    assert mpimg.imread(result.files[0]).shape[:2] == (540, 810)


def test_missing_tokens_fall_back_to_rounds_and_the_report_says_so(tmp_path):
    a = _write(tmp_path / "a" / "metrics.json", "vdn", _metrics(0.5, 0, drop=("tokens",)))
    b = _write(tmp_path / "b" / "metrics.json", "iql", _metrics(0.4, 0, drop=("tokens",)))
    result = write_eval_report([str(a), str(b)], tmp_path / "out")
    assert "no policy logged 'tokens': the chart uses 'length' instead" in result.notes
    assert any("no policy was evaluated on both" in n for n in result.notes)
    assert [p.name for p in result.files] == ["score_vs_tokens.png", "action_mix.png"]


def test_two_evaluations_of_one_policy_are_told_apart_by_folder(tmp_path):
    a = _write(tmp_path / "ckpt100" / "metrics.json", "qmix", _metrics(0.5, 100))
    b = _write(tmp_path / "ckpt200" / "metrics.json", "qmix", _metrics(0.6, 100))
    md = write_eval_report([str(a), str(b)], tmp_path / "out").report.read_text()
    assert "| qmix [ckpt100/metrics] |" in md and "| qmix [ckpt200/metrics] |" in md


def test_bad_inputs_are_refused_by_name(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nowhere: no such file or folder"):
        write_eval_report([str(tmp_path / "nowhere")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"empty: no metrics JSON"):
        write_eval_report([str(tmp_path / "empty")])
    bad = tmp_path / "bad.json"
    bad.write_text('{"algo": "qmix",\n "metrics": {')
    with pytest.raises(ValueError, match=r"bad\.json: invalid JSON at line 2"):
        write_eval_report([str(bad)])
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="no evaluate.py metrics among"):
        write_eval_report([str(other)])


def test_an_eval_compare_folder_reports_every_policy_of_its_comparison(tmp_path):
    """visualize.py eval=<an eval.compare run> failed: its folder holds comparison.json, not metrics.json."""
    rows = [
        {"policy": "handcrafted", "algo": "handcrafted", "metrics": _metrics(0.30, 10_000), "per_episode": []},
        {"policy": "preset:ring", "algo": "preset", "metrics": _metrics(0.55, 12_000), "per_episode": []},
        {"policy": "preset:chain", "algo": "preset", "metrics": _metrics(0.20, 15_000), "per_episode": []},
    ]
    doc = {"env": "report_writing_v0", "split": "holdout", "episodes": 2, "seed": 0, "rows": rows}
    (tmp_path / "comparison.json").write_text(json.dumps(doc))
    result = write_eval_report([str(tmp_path)])
    table = (tmp_path / "eval_report.md").read_text()
    for name in ("handcrafted", "preset:ring", "preset:chain"):
        assert name in table
    assert set(result.front) == {"handcrafted (holdout)", "preset:ring (holdout)"}  # chain: dearer and worse
