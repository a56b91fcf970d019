"""Plugins that cannot silently lose their training."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import algos
from algos.plugins import PluginError, check_learned_state, load_plugin_record, plugin_records

FORGETFUL = '''
from dataclasses import dataclass
import algos

@dataclass
class ForgetfulConfig(algos.AlgoConfig):
    name: str = "forgetful_{tag}"

class Forgetful(algos.Algorithm):
    """Learns, but has no state_dict: the README's one-file example before this fix."""
    config_class = ForgetfulConfig
    capabilities = algos.Capabilities(learns={learns})
    def act(self, obs, masks, explore, *, state=None, graph=None):
        return {{a: 0 for a in obs}}
    def update(self):
        return {{"loss": 0.0}}

algos.register("forgetful_{tag}", Forgetful, overwrite=True)  # re-imported in a test
'''


def _spec():
    return algos.EnvSpec(agents=["agent_0", "agent_1"], obs_dim=3, n_actions=2, state_dim=3)


def test_a_learner_without_state_fails_before_training_and_a_fixed_policy_with_update_warns(tmp_path):
    path = tmp_path / "forgetful_plugin.py"
    path.write_text(FORGETFUL.format(tag="a", learns=True) + FORGETFUL.format(tag="b", learns=False))
    load_plugin_record({"spec": str(path)})
    learner = algos.build("forgetful_a", _spec(), {})
    with pytest.raises(PluginError, match="declares learns=True.*implement state_dict"):
        check_learned_state(learner, learner.state_dict(), when="training")
    with pytest.raises(PluginError, match="evaluating Forgetful: the checkpoint holds nothing learnt"):
        check_learned_state(learner, {"rng": {}}, when="evaluating")
    check_learned_state(learner, {**learner.state_dict(), "values": np.ones(2)}, when="evaluating")  # fine
    fixed = algos.build("forgetful_b", _spec(), {})
    with pytest.warns(UserWarning, match="declares learns=False but defines update"):
        check_learned_state(fixed, fixed.state_dict(), when="saving")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        random_policy = algos.build("random", _spec(), {})
        check_learned_state(random_policy, random_policy.state_dict(), when="saving")  # a true fixed policy


def test_a_dotted_plugin_is_imported_again_from_its_recorded_folder_without_pythonpath(tmp_path, monkeypatch):
    pkg = tmp_path / "user_pkg_rec"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "algo_mod.py").write_text(FORGETFUL.format(tag="c", learns=False))
    monkeypatch.syspath_prepend(str(tmp_path))
    [record] = plugin_records(["user_pkg_rec.algo_mod"])
    assert record["module"] == "user_pkg_rec.algo_mod" and record["sys_path"] == str(tmp_path)
    assert record["file"] == str(pkg / "algo_mod.py")
    # a new process: the folder is not on sys.path and the modules are not imported
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(tmp_path)])
    for name in ("user_pkg_rec.algo_mod", "user_pkg_rec"):
        monkeypatch.delitem(sys.modules, name)
    module = load_plugin_record(record)
    assert module.__name__ == "user_pkg_rec.algo_mod" and str(tmp_path) in sys.path
    # and a record whose folder and file are gone names what is missing
    with pytest.raises(PluginError, match="cannot be imported"):
        load_plugin_record({"spec": "gone_pkg.mod", "sys_path": str(tmp_path / "nope"), "file": None})
