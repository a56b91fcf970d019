"""Plugins that cannot silently lose their training, and what a checkpoint records of them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import algos
from algos.plugins import PluginError, check_learned_state, load_plugin, plugin_records

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
    load_plugin(str(path))
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


def test_a_dotted_plugin_is_recorded_with_its_module_file_and_folder(tmp_path, monkeypatch):
    pkg = tmp_path / "user_pkg_rec"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "algo_mod.py").write_text(FORGETFUL.format(tag="c", learns=False))
    monkeypatch.syspath_prepend(str(tmp_path))
    [record] = plugin_records(["user_pkg_rec.algo_mod"])
    assert record["module"] == "user_pkg_rec.algo_mod" and record["sys_path"] == str(tmp_path)
    assert record["file"] == str(pkg / "algo_mod.py")
    # (a checkpoint's records are only compared with the command line's plugins, never imported:
    # tests/algos/training/test_checkpoint_plugins.py)
