from dataclasses import dataclass

import numpy as np
import pytest
from hydra.core.config_store import ConfigStore
from omegaconf.errors import ConfigKeyError, ValidationError

import algos
import envs
from algos.base import AlgoConfig, Algorithm, Capabilities


def test_builtins_are_registered_with_capabilities():
    assert {"qmix", "vdn", "iql", "random"} <= set(algos.available())
    assert algos.get("qmix").capabilities.learns and algos.get("qmix").capabilities.needs_graph
    assert algos.get("qmix").capabilities.needs_state
    assert not algos.get("random").capabilities.learns


def test_unknown_algorithm_names_the_registered_ones():
    with pytest.raises(KeyError, match="unknown algorithm 'nope'.*qmix"):
        algos.get("nope")


def test_config_validation_names_the_key(two_step):
    _, spec = two_step
    with pytest.raises(ConfigKeyError, match="not_a_key"):
        algos.build("qmix", spec, {"not_a_key": 1})
    with pytest.raises(ValidationError, match="lr"):
        algos.build("qmix", spec, {"lr": "abc"})
    algo = algos.build("vdn", spec, {"lr": 1e-3})
    assert algo.cfg.lr == 1e-3 and algo.cfg.mixer == "vdn" and isinstance(algo.cfg, algos.VDNConfig)


@dataclass
class ConstantConfig(AlgoConfig):
    name: str = "constant_test"
    action: int = 0  # the action every agent always takes (if available)


class Constant(Algorithm):
    config_class = ConstantConfig
    capabilities = Capabilities(learns=False)

    def act(self, obs, masks, explore, *, state=None, graph=None):
        return {a: self.cfg.action if masks[a][self.cfg.action] else int(np.flatnonzero(masks[a])[0]) for a in obs}


def test_register_a_new_algorithm_and_its_hydra_config(two_step):
    env, spec = two_step
    algos.register("constant_test", Constant, overwrite=True)
    algo = algos.build("constant_test", spec, {"action": 1})
    assert algo.update() == {}
    from algos.training.rollout import run_episode

    ep, stats = run_episode(env, algo, spec, explore=True)
    assert (ep.actions == 1).all() and stats.ret == 8.0
    assert ConfigStore.instance().repo["algo"]["constant_test.yaml"] is not None


def test_register_rejects_non_algorithms_and_name_clashes():
    with pytest.raises(TypeError):
        algos.register("bad", object)
    with pytest.raises(ValueError, match="already registered"):
        algos.register("qmix", Constant)


def test_env_registry():
    assert {"two_step_v0", "one_step_3x3_v0", "report_writing_v0"} <= set(envs.registered())
    with pytest.raises(KeyError, match="unknown env 'nope'"):
        envs.make("nope")
    envs.register("two_step_copy_test", lambda **kw: envs.make("two_step_v0", **kw), overwrite=True)
    assert envs.make("two_step_copy_test").possible_agents == ["agent_0", "agent_1"]
    with pytest.raises(ValueError, match="already registered"):
        envs.register("two_step_copy_test", lambda: None)


def test_lazy_env_registration_imports_on_make(tmp_path, monkeypatch):
    (tmp_path / "lazy_env_mod_test.py").write_text(
        "from envs.matrix_games import OneStep3x3Game\ndef parallel_env(**kw):\n    return OneStep3x3Game(**kw)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    envs.register("lazy_test_v0", "lazy_env_mod_test:parallel_env", overwrite=True)
    env = envs.make("lazy_test_v0", payoff=[[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert env.PAYOFF[2, 2] == 1.0


def test_algos_and_matrix_envs_never_import_llm_code():
    """Dependencies point one way: nothing under algos/ (nor the env registry and the
    matrix games) imports agents_llm or rag."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    files = [*sorted((root / "algos").rglob("*.py")), root / "envs" / "__init__.py", root / "envs" / "matrix_games.py"]
    offenders = []
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{f.name}: {n}" for n in names if n.split(".")[0] in ("agents_llm", "rag", "experiments")]
    assert len(files) > 10 and not offenders


@pytest.mark.slow
def test_importing_envs_and_algos_pulls_in_no_llm_code():
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys, envs, algos, algos.training.rollout\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('agents_llm', 'rag', 'llama_cpp', 'openai'))\n"
        "assert not bad, bad\n"
        "assert isinstance(envs._REGISTRY['report_writing_v0'], str)\n"
    )
    root = Path(__file__).resolve().parents[2]
    res = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
