"""The Optuna presets in conf/hydra/sweeper/: maximise the mean held-out greedy return over seeds."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

from experiments.sweep_objective import trial_objective  # noqa: E402


def test_trial_objective_is_the_mean_or_the_iqm_over_seeds():
    assert trial_objective([8.0, 7.0, 7.0]) == pytest.approx(22 / 3)
    assert trial_objective([0.0, 7.0, 7.0, 8.0], "iqm") == pytest.approx(7.0)  # trims one score each side
    assert trial_objective([float("nan"), 7.0]) == 7.0
    with pytest.raises(ValueError, match="sweep.objective must be one of mean, iqm"):
        trial_objective([1.0], "median")


@pytest.mark.slow  # two trials x two seeds of train.py on the two-step game
def test_qmix_preset_sweeps_the_two_step_game_and_writes_the_results_next_to_the_multirun(tmp_path):
    pytest.importorskip("hydra_plugins.hydra_optuna_sweeper", reason="needs the sweep extra")
    sweep_dir = tmp_path / "sweep"
    args = [
        "-m",
        "hydra/sweeper=qmix",
        "algo=qmix",
        "env=two_step",
        "logger=csv",
        "hydra.sweeper.n_trials=2",
        "sweep.seeds=[0,1]",
        "train.episodes=40",
        "train.eval_every=0",
        "algo.batch_size=8",
        "algo.learning_starts=8",
        "algo.epsilon_anneal_steps=40",
        "algo.target_update_interval=5",
        f"hydra.sweep.dir={sweep_dir}",
    ]
    res = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "train.py"), *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    best = yaml.safe_load((sweep_dir / "optimization_results.yaml").read_text())
    with open(sweep_dir / "trials.csv", newline="") as f:
        trials = list(csv.DictReader(f))
    assert len(trials) == 2
    for trial in trials:  # the objective is the mean of the seeds' final greedy (eval) returns
        job = sweep_dir / trial["job"]
        returns = []
        for seed in (0, 1):
            with open(job / f"seed_{seed}" / "eval.csv", newline="") as f:
                returns.append(float(list(csv.DictReader(f))[-1]["return"]))
        assert float(trial["objective"]) == pytest.approx(sum(returns) / 2)
        assert trial["values"].split() == [f"{r:.6g}" for r in returns] and trial["metric"] == "return"
    assert best["best_value"] == pytest.approx(max(float(t["objective"]) for t in trials))  # maximised
    assert set(best["best_params"]) <= {"algo.lr", "algo.mixing_embed_dim", "algo.target_update_interval"}
    import optuna

    study = optuna.load_study(study_name="qmix", storage=f"sqlite:///{sweep_dir / 'optuna.db'}")
    assert study.direction == optuna.study.StudyDirection.MAXIMIZE and len(study.trials) == 2


def test_a_preset_for_another_algorithm_fails_before_training(tmp_path):
    from omegaconf import OmegaConf

    from experiments.sweep_objective import train_seeds

    cfg = OmegaConf.create({"algo": {"name": "vdn"}, "sweep": {"algo": "qmix", "seeds": [0], "objective": "mean"}})
    with pytest.raises(ValueError, match="search space is for algo=qmix, but the run trains algo=vdn"):
        train_seeds(cfg, lambda *a, **k: pytest.fail("trained"), tmp_path)


def test_the_sweep_metric_defaults_to_the_benchmarks_report_score():
    from experiments.sweep_objective import sweep_metric

    assert sweep_metric("auto", {"return": 0.97, "report_score": 0.44}) == "report_score"
    assert sweep_metric("auto", {"return": 8.0}) == "return"  # the matrix games
    assert sweep_metric("tokens", {"return": 1.0, "tokens": 9.0}) == "tokens"
    with pytest.raises(ValueError, match="sweep.metric='score' is not among"):
        sweep_metric("score", {"return": 1.0})


def _trial(job_dir, objective, values):
    job_dir.mkdir(parents=True)
    record = {"objective": objective, "statistic": "iqm", "metric": "return", "seeds": [0, 1], "values": values}
    (job_dir / "trial.json").write_text(json.dumps({**record, "overrides": [f"algo.lr={objective}"]}))


def test_a_sweep_whose_trials_tie_says_the_best_is_arbitrary(tmp_path, capsys):
    from experiments.sweep_objective import write_trials_table

    _trial(tmp_path / "tied" / "0_a", 8.0, [8.0, 8.0])
    _trial(tmp_path / "tied" / "1_b", 8.0, [8.0, 8.0])
    write_trials_table(tmp_path / "tied")
    assert "cannot tell them apart" in capsys.readouterr().err
    _trial(tmp_path / "apart" / "0_a", 8.0, [8.0, 8.0])
    _trial(tmp_path / "apart" / "1_b", 7.0, [7.0, 7.0])
    out = write_trials_table(tmp_path / "apart")
    assert "cannot tell" not in capsys.readouterr().err
    with open(out, newline="") as f:
        assert [r["metric"] for r in csv.DictReader(f)] == ["return", "return"]
