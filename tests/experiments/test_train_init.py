"""train.py init=<checkpoint>: a new run that starts from a trained learner (fine-tuning a
proxy-trained policy on the LLM team), refused with the reason when it cannot fit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "checkpoints" / "qmix_report_writing_extractive" / "final.pt"
TWO_STEP = ROOT / "checkpoints" / "qmix_two_step" / "final.pt"


def train(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "experiments" / "train.py"),
            "logger.wandb=false",
            "logger.progress=quiet",
            f"hydra.run.dir={tmp_path / 'run'}",
            *overrides,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=dict(os.environ, QMIX_CACHE_DIR=str(tmp_path / "cache")),
    )


@pytest.mark.slow
def test_a_proxy_policy_starts_a_run_on_the_llm_team(tmp_path):
    """The LLM team (its scripted double here) has the proxy's spaces: the run starts from the
    shipped learner, so before its first update its networks are the shipped ones."""
    from algos.training import checkpoint as ckpt

    done = train(
        tmp_path,
        "algo=qmix",
        "env=report_writing",
        "llm=scripted",
        "rag=hashing",
        "judge.embedding=hashing",
        "env.max_rounds=2",
        "train.episodes=1",
        "train.eval_every=0",
        "algo.min_updates=0",  # 1 episode, learning_starts 4: no update, so the networks stay as loaded
        f"init={SHIPPED}",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"Starting qmix from the learner of {SHIPPED}" in done.stdout
    shipped = ckpt.load(SHIPPED)["algo"]
    after = ckpt.load(tmp_path / "run" / "checkpoints" / "final.pt")["algo"]
    nets = [k for k, v in shipped.items() if isinstance(v, dict) and any(torch.is_tensor(t) for t in v.values())]
    assert nets, sorted(shipped)
    for name in nets:
        for key, tensor in shipped[name].items():
            if torch.is_tensor(tensor):
                assert torch.equal(after[name][key], tensor), f"{name}.{key} moved without an update"


@pytest.mark.slow
def test_init_is_refused_naming_what_differs(tmp_path):
    other_algo = train(tmp_path, "algo=vdn", "env=report_writing_extractive", f"init={SHIPPED}")
    assert other_algo.returncode != 0
    assert "holds a qmix learner, the run is algo=vdn" in other_algo.stderr

    other_env = train(
        tmp_path,
        "algo=qmix",
        "env=report_writing_extractive",
        "rag=hashing",
        "judge.embedding=hashing",
        f"init={TWO_STEP}",
    )
    assert other_env.returncode != 0
    assert "does not fit this run's env report_writing_v0" in other_env.stderr, other_env.stderr[-2000:]
