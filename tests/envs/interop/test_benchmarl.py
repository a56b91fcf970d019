"""BenchMARL's QMIX on the two-step game through envs.benchmarl_task.

BenchMARL 1.5.2 needs torchrl < 0.12, the project's bench extra pins torchrl 0.14.1, and
its declared torchvision breaks MiniLM beside torch 2.13.0; so it lives in its own
environment (``make benchmarl-env``: torchrl 0.11.1, tensordict 0.11.0, benchmarl 1.5.2
without its video dependencies, on the project's torch). The test runs there, found by
``BENCHMARL_PYTHON`` (or the current interpreter when it has BenchMARL), and skips
with the reason otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json, sys, tempfile
import torch
from benchmarl.algorithms import QmixConfig
from benchmarl.experiment import Experiment, ExperimentConfig
from benchmarl.models.mlp import MlpConfig
from torchrl.envs.utils import ExplorationType, set_exploration_type
from envs.benchmarl_task import ReportGymTask

cfg = ExperimentConfig.get_from_yaml()
for key, value in dict(sampling_device="cpu", train_device="cpu", buffer_device="cpu",
                       off_policy_collected_frames_per_batch=40, off_policy_n_envs_per_worker=1,
                       off_policy_n_optimizer_steps=6, off_policy_train_batch_size=64, off_policy_memory_size=2000,
                       max_n_frames=1200, max_n_iters=None, evaluation=False, loggers=[], create_json=False,
                       save_folder=tempfile.mkdtemp(), checkpoint_interval=0, exploration_eps_init=1.0,
                       exploration_eps_end=0.05, exploration_anneal_frames=600, gamma=0.99, lr=5e-3, render=False,
                       prefer_continuous_actions=False, soft_target_update=True, polyak_tau=0.05).items():
    setattr(cfg, key, value)
model = MlpConfig.get_from_yaml()
model.num_cells = [32]
task = ReportGymTask.TWO_STEP.get_task(config={})
experiment = Experiment(task=task, algorithm_config=QmixConfig.get_from_yaml(), model_config=model,
                        critic_model_config=MlpConfig.get_from_yaml(), seed=0, config=cfg)
experiment.run()
with set_exploration_type(ExplorationType.DETERMINISTIC), torch.no_grad():
    episode = experiment.test_env.rollout(max_steps=2, policy=experiment.policy)
print(json.dumps({"return": episode["next", "agents", "reward"][..., 0, 0].sum().item(),
                  "actions": episode["agents", "action"].tolist(), "group_map": experiment.test_env.group_map}))
"""


def _benchmarl_python() -> str | None:
    candidate = os.environ.get("BENCHMARL_PYTHON")
    if candidate:
        return candidate
    try:
        import benchmarl  # noqa: F401

        return sys.executable
    except ImportError:
        return None


def test_benchmarl_qmix_learns_the_two_step_optimum_on_our_task():
    python = _benchmarl_python()
    if python is None:
        pytest.skip(
            "BenchMARL is not installed (it needs torchrl<0.12, beside the bench extra's 0.14.1): "
            "run `make benchmarl-env` and set BENCHMARL_PYTHON=.venv-benchmarl/bin/python"
        )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    res = subprocess.run([python, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-4000:]
    result = json.loads(res.stdout.strip().splitlines()[-1])
    assert result["group_map"] == {"agents": ["agent_0", "agent_1"]}
    assert result["return"] == pytest.approx(8.0), result
    assert result["actions"] == [[1, 1], [1, 1]]
