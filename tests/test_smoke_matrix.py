"""Every registered algorithm on every env config trains a few episodes and evaluates its
checkpoint: a new algorithm or env that breaks another's path fails here, not in a user's run.
The report env plays on the scripted test double and on the extractive team (hashing
retrieval and judge: seconds). A fixed policy that does not fit an env (the handcrafted
pipeline, the presets and solo speak the report env's actions) must refuse it when built, naming
the env, rather than play it wrongly."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

ROOT = Path(__file__).resolve().parents[1]

import algos  # noqa: E402
from experiments.run_config import register_configs  # noqa: E402

register_configs()
FAST_REPORT = ["rag=hashing", "judge.embedding=hashing", "env.max_rounds=3", "env.min_rounds_before_terminate=1"]
ENVS = {
    "two_step": ["env=two_step"],
    "one_step_3x3": ["env=one_step_3x3"],
    "delayed_reward": ["env=delayed_reward"],
    "teammate_signal": ["env=teammate_signal"],
    "report_scripted": ["env=report_writing", "llm=scripted", *FAST_REPORT],
    "report_extractive": ["env=report_writing_extractive", *FAST_REPORT],
}
# A few episodes that still make gradient updates: the learners' batch and start made small.
SMALL_BATCH = {"batch_size": 2, "learning_starts": 2, "target_update_interval": 1}


def compose_run(algo: str, env_overrides: list[str], run_dir: Path) -> object:
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        base = compose("config", overrides=[f"algo={algo}", *env_overrides])
        small = [f"algo.{k}={v}" for k, v in SMALL_BATCH.items() if k in base.algo]
        return compose(
            "config",
            overrides=[
                f"algo={algo}",
                *env_overrides,
                *small,
                "train.episodes=4",
                "train.eval_episodes=1",
                "train.log_every=2",
                "logger=csv",
                f"eval.out={run_dir / 'eval' / 'metrics.json'}",
                "eval.episodes=2",
            ],
        )


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One corpus store for every case of the module, not one per case."""
    return tmp_path_factory.mktemp("smoke_cache")


@pytest.mark.parametrize("env_name", list(ENVS))
@pytest.mark.parametrize("algo", algos.available())
def test_every_algorithm_trains_and_evaluates_on_every_env(algo, env_name, tmp_path, monkeypatch, shared_cache):
    import experiments.evaluate as evaluate
    import experiments.train as train

    from algos.training.env_configs import make_env

    monkeypatch.setenv("QMIX_CACHE_DIR", str(shared_cache))
    cfg = compose_run(algo, ENVS[env_name], tmp_path)
    spec = algos.EnvSpec.from_env(make_env(cfg.env))
    try:
        algos.build(cfg.algo.name, spec, cfg.algo, seed=0)
    except ValueError as e:
        assert not env_name.startswith("report"), f"{algo} refused the report env: {e}"
        assert algo in ("handcrafted", "preset", "solo"), f"{algo} refused {env_name}: {e}"
        return
    train.train(cfg, run_dir=tmp_path / "run")
    rows = list(csv.DictReader(open(tmp_path / "run" / "train.csv")))
    assert rows and float(rows[-1]["episode"]) == 4
    if algos.get(algo).capabilities.learns:
        assert int(float(rows[-1]["updates"])) >= 1, f"{algo} made no update on {env_name}"
    ckpt = tmp_path / "run" / "checkpoints" / "final.pt"
    assert ckpt.is_file()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        ecfg = compose(
            "config",
            overrides=[
                f"checkpoint={ckpt}",
                f"eval.out={tmp_path / 'eval' / 'metrics.json'}",
                "eval.episodes=2",
                "logger=csv",
            ],
        )
    metrics = evaluate.evaluate_run(ecfg)
    assert metrics["episodes"] == 2 and "return" in metrics["metrics"]
