"""A checkpoint's plugin records are compared with the command line's, never imported.

A checkpoint can come from anyone; its ``plugins`` record is a module name, a file and a
folder that an import would run. Each record below names a module that writes a marker
file when imported: on every path that loads a checkpoint (``evaluate.py checkpoint=``,
``train.py resume=``, ``write_report.py checkpoint=``, the resumed config the Ray rollout
workers import from) the marker must not appear, and the error must name the module and
say to pass ``plugins=[...]``. Before the fix the records were imported again
(``algos.plugins.load_checkpoint_plugins``), the module's folder put on ``sys.path``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from algos.plugins import PluginError, check_checkpoint_plugins, load_plugins, plugin_records
from algos.training import checkpoint as ckpt
from algos.training.resume import resume_config
from experiments.run_config import RolloutConfig
from tests.algos.training.test_checkpoint_integrity import _cli, a_payload

MODULE = "planted_plugin_qz"


@pytest.fixture
def planted(tmp_path) -> tuple[Path, Path, dict]:
    """(marker, module file, record): a plugin whose import writes `marker`."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    marker = tmp_path / "imported"
    module = folder / f"{MODULE}.py"
    module.write_text(f"open({str(marker)!r}, 'w').write('the checkpoint ran me')\n")
    record = {"spec": MODULE, "module": MODULE, "file": str(module), "sys_path": str(folder)}
    return marker, module, record


def _state(records: list) -> dict:
    return {**a_payload(), "plugins": records}


@pytest.mark.parametrize("form", ["dotted", "file", "config_list"])
def test_a_recorded_plugin_not_given_is_refused_in_one_line_and_never_imported(planted, form):
    marker, module, record = planted
    if form == "dotted":
        state = _state([record])
        name = MODULE
    elif form == "file":
        state = _state([{"spec": str(module), "module": None, "file": str(module), "sys_path": None}])
        name = str(module)
    else:  # a checkpoint written before plugin records: the config's list
        state = {**a_payload(), "config": {**a_payload()["config"], "plugins": [str(module)]}}
        name = str(module)
    with pytest.raises(PluginError) as err:
        check_checkpoint_plugins(state, [], source="checkpoint x.pt")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("checkpoint x.pt was trained with plugin")
    assert repr(name) in msg and f"plugins=[{name}]" in msg
    assert not marker.exists() and MODULE not in sys.modules


def test_the_plugins_given_on_the_command_line_match_by_module_or_file(planted, monkeypatch):
    marker, module, record = planted
    monkeypatch.syspath_prepend(str(module.parent))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    load_plugins([MODULE])  # the user's own import: the marker is written by it, not by the check
    assert marker.exists()
    marker.unlink()
    check_checkpoint_plugins(_state([record]), [MODULE], source="checkpoint x.pt")
    load_plugins([str(module)])  # the same file given as a path: imported again under its own name
    marker.unlink()
    [given] = plugin_records([str(module)])
    assert given["file"] == str(module)
    file_record = {"spec": str(module), "module": None, "file": str(module), "sys_path": None}
    check_checkpoint_plugins(_state([file_record]), [str(module)], source="checkpoint x.pt")
    # a recorded module of the same file under another spec is the same plugin
    check_checkpoint_plugins(_state([{**record, "spec": "renamed.path"}]), [str(module)], source="x")
    # another plugin given does not stand for the recorded one
    other = module.parent / "other_plugin_qz.py"
    other.write_text("")
    load_plugins([str(other)])
    with pytest.raises(PluginError, match=MODULE):
        check_checkpoint_plugins(_state([record]), [str(other)], source="x")
    assert not marker.exists()  # the checks imported nothing
    monkeypatch.delitem(sys.modules, MODULE)


def test_a_resumed_run_keeps_the_command_lines_plugins_not_the_checkpoints(planted):
    """train.py, its Ray rollout workers (RolloutWorker(plugins=cfg.plugins)) and the next
    checkpoint's records all import `cfg.plugins`: after a resume it is the command line's."""
    marker, module, record = planted
    saved = {**a_payload()["config"], "plugins": [MODULE, str(module)], "resume": None}
    cfg = OmegaConf.create({"resume": "run/last.pt", "plugins": [], "train": {"episodes": 9}})
    resumed = resume_config(cfg, saved, ["resume=run/last.pt"], default_rollout=OmegaConf.structured(RolloutConfig))
    assert list(resumed.plugins) == []
    cfg.plugins = ["my_pkg.algo"]
    resumed = resume_config(cfg, saved, ["resume=run/last.pt", "plugins=[my_pkg.algo]"], default_rollout={})
    assert list(resumed.plugins) == ["my_pkg.algo"]
    assert not marker.exists()


@pytest.mark.slow
def test_entry_points_refuse_a_checkpoint_whose_plugin_is_not_given_and_import_nothing(planted, tmp_path):
    marker, module, record = planted
    path = ckpt.save_atomic(_state([record]), tmp_path / "foreign.pt")
    report_args = ["task=Sorting networks", f"output_root={tmp_path / 'out'}", f"data_root={tmp_path / 'data'}"]
    for script, key, extra in (
        ("evaluate.py", "checkpoint", []),
        ("train.py", "resume", []),
        ("write_report.py", "checkpoint", report_args),
    ):
        proc = _cli(script, [f"{key}={path}", "hydra.run.dir=" + str(tmp_path / script), *extra], tmp_path)
        assert proc.returncode == 2, (script, proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr, (script, proc.stderr[-2000:])
        lines = [ln for ln in proc.stderr.splitlines() if MODULE in ln]
        assert len(lines) == 1, (script, proc.stderr[-2000:])
        assert str(path) in lines[0] and f"plugins=[{MODULE}]" in lines[0], (script, lines[0])
        assert not marker.exists(), script
