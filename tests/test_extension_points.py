"""A judge, a mixer, an agent network and an env added from outside the packages, the way a
user adds them: one module of their own, imported with ``plugins=[module]`` on train.py's
command line, each registered with its config dataclass and selected by config. Each one
trains and is evaluated (train.py's greedy evaluation), and its settings reach it."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
TRAIN = str(ROOT / "experiments" / "train.py")

PLUGIN = '''
"""A user's extensions, outside the project's packages."""
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

import envs
from agents_llm.judges import JudgeResult, register_judge
from agents_llm.judges.config import JudgeConfig
from algos import register_mixer, register_network
from algos.mixers import Mixer
from envs.configs import EnvConfig
from envs.matrix_games import OneStep3x3Game


# --- a judge: every report scores the same ---------------------------------------------
@dataclass
class FixedJudgeConfig(JudgeConfig):
    kind: str = "fixed"
    score: float = 0.5
    length_measure: str = "chars"  # no reference judge to count supported characters


class FixedJudge:
    kind = "fixed"

    def __init__(self, score):
        self.value = score

    async def score(self, report, *, ledger=None):
        return JudgeResult(score=self.value, components={"fixed": self.value})


@register_judge("fixed", config_class=FixedJudgeConfig)
def build_fixed_judge(cfg, *, backend=None, embed=None):
    return FixedJudge(cfg.score)


# --- a mixer: a scaled sum plus a learnt bias ------------------------------------------
@dataclass
class ScaledSumConfig:
    scale: float = 1.0


@register_mixer("scaled_sum")
class ScaledSumMixer(Mixer):
    needs_state = False
    config_class = ScaledSumConfig

    def __init__(self, n_agents, state_dim, scale=1.0):
        super().__init__(n_agents, state_dim)
        self.bias = nn.Parameter(torch.zeros(1))
        self.register_buffer("scale", torch.tensor(float(scale)))

    @classmethod
    def from_config(cls, n_agents, state_dim, cfg):
        return cls(n_agents, state_dim, cfg.scale)

    def mix(self, agent_qs, state):
        return self.scale * agent_qs.sum(-1, keepdim=True) + self.bias


# --- an agent network: one linear layer, no memory -------------------------------------
@dataclass
class LinearQConfig:
    bias: bool = True


class LinearQ(nn.Module):
    def __init__(self, obs_dim, n_agents, n_actions, bias):
        super().__init__()
        self.n_agents = n_agents
        self.linear = nn.Linear(obs_dim + n_agents, n_actions, bias=bias)

    def init_hidden(self, batch):
        return torch.zeros(batch, self.n_agents, 0)

    def prepare(self, obs, last_action, adj):
        ids = torch.eye(self.n_agents).expand(*obs.shape[:-1], self.n_agents)
        return torch.cat([obs, ids], -1)

    def forward_prepared(self, inputs, hidden=None):
        return self.linear(inputs), self.init_hidden(inputs.shape[0])

    def forward_step(self, obs, last_action, adj, hidden):
        q, h = self.forward_prepared(self.prepare(obs.unsqueeze(1), None, adj))
        return q[:, 0], h


@register_network("linear_q", config_class=LinearQConfig)
def build_linear_q(obs_dim, n_agents, n_actions, cfg):
    return LinearQ(obs_dim, n_agents, n_actions, cfg.bias)


# --- an env: a one-step coordination game ----------------------------------------------
@dataclass
class CoordinationConfig(EnvConfig):
    name: str = "coordination_v0"
    reward: float = 1.0  # both agents pick the same action: this; else 0


class Coordination(OneStep3x3Game):
    metadata = {"name": "coordination_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, reward=1.0):
        super().__init__(payoff=np.eye(3) * reward)


envs.register("coordination_v0", Coordination, config_class=CoordinationConfig, config_name="coordination")
'''


def _train(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "WANDB_MODE": "offline", "QMIX_CACHE_DIR": str(tmp_path / "cache")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, TRAIN, "plugins=[my_extensions]", "logger=csv", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_a_mixer_a_network_and_an_env_from_outside_train_and_evaluate(tmp_path):
    (tmp_path / "my_extensions.py").write_text(PLUGIN)
    run_dir = tmp_path / "run"
    res = _train(
        [
            "env=base_coordination",
            "env.reward=7",
            "algo=qmix",
            "algo.mixer=scaled_sum",
            "+algo.mixer_config.scale=3",
            "algo.network=linear_q",
            "+algo.network_config.bias=false",
            "algo.batch_size=4",
            "algo.learning_starts=4",
            "algo.target_update_interval=2",
            "train.episodes=8",
            "train.eval_episodes=2",
            "train.log_every=2",
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    state = torch.load(run_dir / "checkpoints" / "final.pt", weights_only=False)
    assert state["config"]["env"]["name"] == "coordination_v0" and state["config"]["env"]["reward"] == 7.0
    learner = state["algo"]
    # The network is the plugin's (one linear layer, no bias: its config reached it) ...
    assert set(learner["agent"]) == {"linear.weight"}
    # ... and so is the mixer, built with its own setting.
    assert set(learner["mixer"]) == {"bias", "scale"} and float(learner["mixer"]["scale"]) == 3.0
    assert learner["counters"]["n_updates"] > 0  # it learnt
    train_rows, eval_rows = _rows(run_dir / "train.csv"), _rows(run_dir / "eval.csv")
    assert train_rows and eval_rows
    # The plugin env's payoff: a one-step game paying 7 when the agents agree, else 0.
    assert {float(r["return"]) for r in train_rows} <= {0.0, 3.5, 7.0}  # a log row averages 2 episodes
    assert float(eval_rows[-1]["return"]) in (0.0, 3.5, 7.0)


@pytest.mark.slow
def test_a_judge_from_outside_scores_the_report_env(tmp_path):
    (tmp_path / "my_extensions.py").write_text(PLUGIN)
    run_dir = tmp_path / "run"
    res = _train(
        [
            "env=report_writing",
            "llm=scripted",
            "rag=hashing",
            "judge=base_fixed",
            "judge.score=0.3125",
            "env.max_rounds=3",
            "env.min_rounds_before_terminate=1",
            "algo=handcrafted",
            "train.episodes=2",
            "train.eval_episodes=1",
            "train.log_every=1",
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    # The pipeline appends, so the judge scores: every logged report score is the plugin's.
    scores = [float(r["report_score"]) for r in _rows(run_dir / "train.csv") + _rows(run_dir / "eval.csv")]
    assert scores and all(s == 0.3125 for s in scores), scores
