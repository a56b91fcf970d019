"""Checkpoints load without running code and refuse damaged or foreign files with one line
naming the file (algos/training/checkpoint.py)."""

import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from algos.training import checkpoint as ckpt

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted((ROOT / "checkpoints").glob("*/final.pt"))


class PlantedCode:
    """Unpickling this runs `open(marker, "w")`: a checkpoint that carries code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def a_payload() -> dict:
    rng = np.random.default_rng(0)
    gen = torch.Generator().manual_seed(0)
    return {
        "version": ckpt.FORMAT_VERSION,
        "algo_name": "qmix",
        "algo": {
            "agent": {"w": torch.randn(64, 64, generator=gen), "b": torch.zeros(64)},
            "buffer": {"episodes": [{"obs": rng.normal(size=(5, 3)).astype(np.float32), "n": np.int64(5)}]},
            "rng": rng.bit_generator.state,
        },
        "progress": {"episode": 7, "t_env": 70},
        "config": {"algo": {"name": "qmix", "lr": 5e-4}, "env": {"name": "two_step_v0"}},
        "rng": ckpt.rng_state(),
    }


@pytest.fixture
def saved(tmp_path) -> Path:
    return ckpt.save_atomic(a_payload(), tmp_path / "last.pt")


def test_a_saved_checkpoint_carries_its_digest_and_loads_back_equal(saved):
    warnings = []
    state = ckpt.load(saved, warn=warnings.append)
    assert warnings == []
    assert ckpt.DIGEST_KEY not in state  # checked and removed
    raw = torch.load(saved, weights_only=False)  # a plain torch.save file: other tools still read it
    assert raw[ckpt.DIGEST_KEY] == ckpt.content_digest(state)
    assert torch.equal(state["algo"]["agent"]["w"], a_payload()["algo"]["agent"]["w"])
    assert np.array_equal(
        state["algo"]["buffer"]["episodes"][0]["obs"], a_payload()["algo"]["buffer"]["episodes"][0]["obs"]
    )


def test_the_digest_sees_a_changed_value_type_or_order():
    base = a_payload()
    d = ckpt.content_digest(base)
    changed = a_payload()
    changed["algo"]["agent"]["w"][3, 5] += 1e-6
    assert ckpt.content_digest(changed) != d
    as_int = a_payload()
    as_int["progress"]["episode"] = 7.0
    assert ckpt.content_digest(as_int) != d
    assert ckpt.content_digest(a_payload()) == d


def test_a_checkpoint_that_pickles_code_is_refused_and_the_code_never_runs(tmp_path):
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.pt"
    torch.save({"algo": {"x": PlantedCode(marker)}, "config": {}}, evil)
    raw_pickle = tmp_path / "evil.pkl"
    raw_pickle.write_bytes(pickle.dumps({"algo": PlantedCode(marker)}))
    for path in (evil, raw_pickle):
        with pytest.raises(ckpt.CheckpointError) as err:
            ckpt.load(path)
        assert str(path) in str(err.value) and "\n" not in str(err.value)
    assert not marker.exists()


def _overwrite(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def _tensor_record_offset(path: Path) -> int:
    """Where the bytes of the largest tensor start in the archive."""
    with zipfile.ZipFile(path) as z:
        info = max((i for i in z.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    with open(path, "rb") as f:  # local header: 30 bytes + name + extra
        f.seek(info.header_offset + 26)
        name_len, extra_len = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
    return info.header_offset + 30 + name_len + extra_len


def test_random_bytes_inside_the_tensor_data_are_caught_by_the_digest(saved):
    _overwrite(saved, _tensor_record_offset(saved) + 100, os.urandom(2000))
    with pytest.raises(ckpt.CheckpointError, match="digest mismatch") as err:
        ckpt.load(saved)
    assert str(saved) in str(err.value)


@pytest.mark.parametrize(
    "damage", ["empty", "truncated", "random_file", "random_head", "random_tail", "not_a_checkpoint"]
)
def test_damaged_or_foreign_files_give_one_line_naming_the_file(saved, damage):
    data = saved.read_bytes()
    if damage == "empty":
        saved.write_bytes(b"")
    elif damage == "truncated":
        saved.write_bytes(data[: len(data) // 2])
    elif damage == "random_file":
        saved.write_bytes(os.urandom(2000))
    elif damage == "random_head":
        _overwrite(saved, 0, os.urandom(2000))
    elif damage == "random_tail":
        _overwrite(saved, len(data) - 300, os.urandom(300))
    else:
        torch.save({"weights": torch.ones(3)}, saved)
    with pytest.raises(ckpt.CheckpointError) as err:
        ckpt.load(saved)
    msg = str(err.value)
    assert msg.startswith(f"checkpoint {saved}: ") and "\n" not in msg and len(msg) < 400


def test_a_checkpoint_without_digest_loads_with_a_warning_and_seal_adds_one(tmp_path):
    old = tmp_path / "old.pt"
    torch.save(a_payload(), old)  # as written before digests existed
    warnings = []
    state = ckpt.load(old, warn=warnings.append)
    assert state["progress"]["episode"] == 7
    assert len(warnings) == 1 and str(old) in warnings[0]
    ckpt.seal(old)
    warnings.clear()
    ckpt.load(old, warn=warnings.append)
    assert warnings == []


def test_saving_content_a_safe_load_would_refuse_fails_at_save_time(tmp_path):
    with pytest.raises(TypeError, match="checkpoint.algo.obj"):
        ckpt.save_atomic({"algo": {"obj": object()}}, tmp_path / "c.pt")
    assert not (tmp_path / "c.pt").exists()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.parent.name)
def test_shipped_checkpoints_carry_a_digest(path):
    warnings = []
    state = ckpt.load(path, warn=warnings.append)
    assert warnings == [] and "algo" in state


def _cli(script: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "WANDB_MODE": "disabled"}
    return subprocess.run(
        [sys.executable, str(ROOT / "experiments" / script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_entry_points_refuse_a_code_or_corrupt_checkpoint_with_exit_2(tmp_path):
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.pt"
    torch.save({"algo": {"x": PlantedCode(marker)}, "config": {}}, evil)
    corrupt = ckpt.save_atomic(a_payload(), tmp_path / "corrupt.pt")
    _overwrite(corrupt, _tensor_record_offset(corrupt) + 10, os.urandom(2000))
    report_args = ["task=Sorting networks", f"output_root={tmp_path / 'out'}", f"data_root={tmp_path / 'data'}"]
    for script, key, path, extra in (
        ("evaluate.py", "checkpoint", evil, []),
        ("train.py", "resume", corrupt, []),
        ("write_report.py", "checkpoint", evil, report_args),
    ):
        proc = _cli(script, [f"{key}={path}", "hydra.run.dir=" + str(tmp_path / script), *extra], tmp_path)
        assert proc.returncode == 2, (script, proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr
        lines = [ln for ln in proc.stderr.splitlines() if str(path) in ln]
        assert len(lines) == 1 and "checkpoint" in lines[0], (script, proc.stderr[-2000:])
    assert not marker.exists()
