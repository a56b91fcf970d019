"""Structured configs: composition of every group option, and errors that name the key."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

import algos
from experiments.run_config import register_configs
from experiments.train import make_env

CONF = str(Path(__file__).resolve().parents[2] / "conf")
register_configs()


def _compose(overrides):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose("config", overrides=overrides)


@pytest.mark.parametrize("algo", ["qmix", "vdn", "iql", "graph_pg", "random"])
@pytest.mark.parametrize("env", ["two_step", "one_step_3x3", "delayed_reward", "teammate_signal"])
def test_every_algo_and_env_option_composes_and_builds(algo, env):
    cfg = _compose([f"algo={algo}", f"env={env}"])
    assert cfg.algo.name == algo
    e = make_env(cfg.env)
    built = algos.build(cfg.algo.name, algos.EnvSpec.from_env(e), cfg.algo)
    assert isinstance(built.cfg, algos.get(algo).config_class)


def test_defaults():
    cfg = _compose([])
    assert cfg.algo.name == "qmix" and cfg.algo.mixer == "qmix"
    assert cfg.logger.wandb and cfg.logger.wandb_mode == "offline"
    assert cfg.train.episodes > 0 and cfg.plugins == [] and cfg.resume is None


@pytest.mark.parametrize(
    "override, key",
    [
        ("algo.lr=abc", "algo.lr"),
        ("algo.not_a_key=1", "algo.not_a_key"),
        ("env.not_a_key=1", "env.not_a_key"),
        ("train.episodes=many", "train.episodes"),
        ("logger.tensorboard=perhaps", "logger.tensorboard"),
        ("seed=x", "seed"),
    ],
)
def test_wrong_key_or_value_fails_at_start_naming_it(override, key):
    with pytest.raises(ConfigCompositionException) as err:
        _compose([override])
    text = str(err.value) + str(err.value.__cause__)
    assert key in text


def test_unknown_group_option_is_an_error():
    with pytest.raises(ConfigCompositionException, match="algo"):
        _compose(["algo=not_an_algo"])


def test_env_config_can_set_the_training_budget_and_user_wins():
    assert _compose(["env=two_step"]).train.episodes == OmegaConf.load(Path(CONF) / "env/two_step.yaml").train.episodes
    assert _compose(["env=two_step", "train.episodes=7"]).train.episodes == 7


def test_llm_groups_follow_the_env_and_the_command_line_wins():
    assert _compose(["env=two_step"]).llm is None  # a matrix game needs no LLM
    default = _compose([])  # the report env selects the embedded model and the reference judge
    assert default.env.name == "report_writing_v0"
    assert default.llm.backend == "llamacpp" and default.judge.kind == "reference"
    assert _compose(["llm=scripted"]).llm.backend == "scripted"
    assert _compose(["llm=scripted", "env=two_step"]).llm.backend == "scripted"
