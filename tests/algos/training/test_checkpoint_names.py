"""A checkpoint names no code that runs: the algorithm, env, judge and roles its config
records resolve only against the registries and the command line's ``plugins=[...]``.

A digest proves a checkpoint is intact, not that it is harmless: re-sealed with a team
entry ``"module:Role"``, a checkpoint made every entry point import ``module``
(``agents_llm.roles.resolve_role``). Each module below writes a marker file when imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from algos.plugins import PluginError, check_checkpoint_plugins
from algos.training import checkpoint as ckpt
from tests.algos.training.test_checkpoint_integrity import a_payload

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "checkpoints" / "qmix_report_writing_extractive" / "final.pt"
MODULE = "planted_role_qz"


@pytest.fixture
def planted(tmp_path) -> tuple[Path, Path]:
    """(marker, folder): a module in `folder` whose import writes `marker`."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    marker = tmp_path / "imported"
    (folder / f"{MODULE}.py").write_text(f"open({str(marker)!r}, 'w').write('the checkpoint ran me')\nROLE = None\n")
    return marker, folder


def _state(env: dict, algo: str = "qmix") -> dict:
    payload = a_payload()
    return {**payload, "config": {"algo": {**payload["config"]["algo"], "name": algo}, "env": env}}


REPORT_ENV = {"name": "report_writing_v0", "team": ["LeadArchitect", "Researcher"], "judge": {"kind": "reference"}}


@pytest.mark.parametrize(
    "state, named",
    [
        (_state({**REPORT_ENV, "team": ["LeadArchitect", f"{MODULE}:ROLE"]}), MODULE),
        (_state({**REPORT_ENV, "team": ["LeadArchitect", "this:Role"]}), "this"),
        (_state({**REPORT_ENV, "team": ["NoSuchRole"]}), "NoSuchRole"),
        (_state({**REPORT_ENV, "judge": {"kind": "os.system"}}), "os.system"),
        (_state({"name": "evil.module:factory"}), "evil.module:factory"),
        (_state({"name": "two_step_v0"}, algo="pkg.algo:Algo"), "pkg.algo:Algo"),
    ],
    ids=["planted_role_module", "this_role", "unknown_role", "unknown_judge", "unknown_env", "unknown_algo"],
)
def test_a_recorded_name_outside_the_registries_is_refused_in_one_line_and_never_imported(
    planted, monkeypatch, state, named
):
    marker, folder = planted
    monkeypatch.syspath_prepend(str(folder))
    with pytest.raises(PluginError) as err:
        check_checkpoint_plugins(state, [], source="checkpoint x.pt")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("checkpoint x.pt records") and named in msg, msg
    assert not marker.exists()
    assert "this" not in sys.modules or named != "this"  # `import this` prints the Zen: it must not happen


def test_a_role_module_given_as_a_plugin_is_accepted(planted, monkeypatch):
    marker, folder = planted
    monkeypatch.syspath_prepend(str(folder))
    state = _state({**REPORT_ENV, "team": ["LeadArchitect", f"{MODULE}:ROLE"]})
    check_checkpoint_plugins(state, [MODULE], source="checkpoint x.pt")  # the user named it: imported, accepted
    assert marker.exists()


def test_registered_names_pass():
    check_checkpoint_plugins(_state(REPORT_ENV), [], source="x")
    check_checkpoint_plugins(ckpt.load(SHIPPED), [], source="x")


def _cli(script: str, args: list[str], cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "WANDB_MODE": "disabled",
        "PYTHONPATH": os.pathsep.join([str(pythonpath), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, str(ROOT / "experiments" / script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_entry_points_refuse_a_resealed_checkpoint_whose_team_names_a_module(tmp_path, planted):
    """The shipped extractive-team checkpoint, its team given a `module:Role` entry and its
    digest recomputed: evaluate, train resume= and write_report stop with one line."""
    marker, folder = planted
    state = ckpt.load(SHIPPED)
    state["config"]["env"]["team"] = [*state["config"]["env"]["team"], f"{MODULE}:ROLE"]
    run = tmp_path / "run"
    planted_ckpt = ckpt.save_atomic(state, run / "checkpoints" / "last.pt")  # a fresh, valid digest
    assert torch.load(planted_ckpt, weights_only=False)[ckpt.DIGEST_KEY] == ckpt.content_digest(ckpt.load(planted_ckpt))
    report_args = ["task=Sorting networks", f"output_root={tmp_path / 'out'}", f"data_root={tmp_path / 'data'}"]
    for script, key, extra in (
        ("evaluate.py", "checkpoint", ["eval.episodes=1", f"hydra.run.dir={tmp_path / 'eval'}"]),
        ("train.py", "resume", []),
        ("write_report.py", "checkpoint", report_args),
    ):
        proc = _cli(script, [f"{key}={run if script == 'train.py' else planted_ckpt}", *extra], tmp_path, folder)
        assert proc.returncode == 2, (script, proc.stderr[-3000:])
        assert "Traceback" not in proc.stderr, (script, proc.stderr[-3000:])
        lines = [ln for ln in proc.stderr.splitlines() if MODULE in ln]
        assert len(lines) == 1 and "plugins=[" in lines[0], (script, proc.stderr[-3000:])
        assert not marker.exists(), script
    assert not (tmp_path / "out").exists()
