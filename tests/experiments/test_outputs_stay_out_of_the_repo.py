"""Entry points write under outputs/ unless told otherwise: results never land in the
repository, and the committed results and shipped checkpoint are regenerated only on request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hydra import compose, initialize_config_dir

import experiments.protocol.ablations as ablations  # noqa: F401
import experiments.protocol.benchmark as benchmark  # noqa: F401  registers benchmark_schema
import experiments.protocol.transfer as transfer  # noqa: F401  registers transfer_schema

ROOT = Path(__file__).resolve().parents[2]


def _compose(name: str):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(name, return_hydra_config=True)


def test_benchmark_and_transfer_write_under_outputs_and_ship_nothing_by_default():
    bench = _compose("benchmark")
    assert str(bench.benchmark.out).startswith("outputs/benchmark/"), bench.benchmark.out
    assert bench.benchmark.ship is None, "the shipped checkpoint is rewritten only when benchmark.ship is given"
    assert bench.hydra.run.dir == bench.benchmark.out
    assert str(_compose("transfer").transfer.out).startswith("outputs/transfer/")


def test_ablations_default_folder_is_under_outputs_and_no_ablation_ships():
    out = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "protocol" / "ablations.py"), "--help"],
        capture_output=True,
        text=True,
    ).stdout
    assert "outputs/ablations" in out.replace("\n", "").replace(" ", "")
    for name, (_, _, bench_overrides) in ablations.ABLATIONS.items():
        assert not any(o.startswith("benchmark.ship=") for o in bench_overrides), name
