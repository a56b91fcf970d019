"""Sweeps through Hydra's submitit launcher (the [slurm] extra), in its local mode:
each job of the sweep a separate process started by submitit, as on a SLURM cluster."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)

pytestmark = pytest.mark.slow
pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="the [slurm] extra is not installed")

ROOT = Path(__file__).resolve().parents[2]


def test_submitit_local_runs_every_job_of_a_sweep(tmp_path):
    sweep = tmp_path / "sweep"
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "experiments" / "train.py"),
            "-m",
            "hydra/launcher=submitit_local",
            "hydra.launcher.timeout_min=10",
            "env=two_step",
            "algo=random",
            "logger=csv",
            "logger.progress=quiet",
            "train.episodes=4",
            "train.log_every=2",
            "seed=0,1",
            f"hydra.sweep.dir={sweep}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = sorted(p.parent for p in sweep.glob("*/train.csv"))
    assert len(runs) == 2, list(sweep.rglob("*"))[:40]
    for run in runs:
        with open(run / "train.csv", newline="") as f:
            assert [r["episode"] for r in csv.DictReader(f)][-1] == "4"
        assert (run / "checkpoints" / "final.pt").exists()
    # submitit really ran them: its job folders hold each job's logs
    assert list(sweep.rglob("*_log.out")) or list(sweep.rglob(".submitit/*")), list(sweep.rglob("*"))[:40]
