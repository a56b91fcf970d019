"""The Hydra env group composes and builds the env through the registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

import envs

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def composed():
    from hydra import compose, initialize_config_dir

    from experiments.run_config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(
            config_name="config",
            overrides=[
                "env=report_writing",
                "llm=scripted",
                "rag=hashing",
                "judge=reference",
                "judge.embedding=hashing",
                "env.max_rounds=2",
                "env.team=[LeadArchitect,Researcher,Reviewer]",
            ],
        )


@pytest.mark.slow  # the root config imports algos (torch): ~20 s on a busy 2-core machine
def test_env_group_composes_and_makes_the_env(composed, tmp_path):
    args = OmegaConf.to_container(composed.env, resolve=True)
    assert args["llm"]["backend"] == "scripted" and args["judge"]["embedding"] == "hashing"
    assert args.pop("eval_overrides") == {"split": "holdout"}
    args["store_path"] = str(tmp_path / "store")
    env = envs.make(args.pop("name"), **args)
    assert env.possible_agents == ["LeadArchitect", "Researcher", "Reviewer"] and env.max_rounds == 2
    assert env.action_space("Reviewer").n == 8
    obs, _ = env.reset(seed=0)
    env.step({a: 0 for a in env.agents})
    _, _, _, trunc, _ = env.step({a: 0 for a in env.agents})
    assert all(trunc.values())


def test_env_yaml_builds_the_env_with_cpu_defaults_for_unselected_groups(tmp_path):
    from envs.report.writing import DEFAULT_JUDGE, DEFAULT_LLM

    assert DEFAULT_LLM["backend"] == "llamacpp" and DEFAULT_JUDGE["kind"] == "reference"
    cfg = OmegaConf.load(ROOT / "conf" / "env" / "report_writing.yaml")
    # What the root config gives when llm/judge/rag are selected (here: test double + hashing).
    root = OmegaConf.create(
        {
            "llm": {"backend": "scripted"},
            "judge": {"kind": "reference", "embedding": "hashing"},
            "rag": {"embedding": {"backend": "hashing"}},
        }
    )
    args = OmegaConf.to_container(OmegaConf.merge(root, cfg).env, resolve=True)
    assert args.pop("name") == "report_writing_v0" and "report_writing_v0" in envs.registered()
    assert args.pop("eval_overrides") == {"split": "holdout"}
    args.update(store_path=str(tmp_path / "store"), max_rounds=1)
    env = envs.make("report_writing_v0", **args)
    env.reset(seed=0)
    assert env.task.split == "train" and env.config.engine.agent_max_tokens == args["engine"]["agent_max_tokens"]
    _, _, _, trunc, _ = env.step({a: 0 for a in env.agents})
    assert all(trunc.values())
