"""When an evaluation runs on two single-thread model processes without being asked (rollout.auto_workers)."""

from __future__ import annotations

import importlib.util

import pytest
from omegaconf import OmegaConf

from algos.training.runners import model_processes

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs the [ray] extra")


def rollout(**kw):
    base = dict(num_envs=1, sync_every=None, backend="local", workers=1, auto_workers=True)
    return OmegaConf.create({**base, **kw})


LLAMA = OmegaConf.create({"name": "report_writing_v0", "llm": {"backend": "llamacpp", "n_threads": 1}})


def test_several_llama_cpp_episodes_on_two_cores_get_two_model_processes():
    assert model_processes(rollout(), LLAMA, 8, cpus=2) == {"backend": "ray", "workers": 2}


@pytest.mark.parametrize(
    "why, roll, env, episodes, cpus",
    [
        ("one episode uses the threads it is given", rollout(), LLAMA, 1, 2),
        ("switched off", rollout(auto_workers=False), LLAMA, 8, 2),
        ("the user chose episodes in flight", rollout(num_envs=2), LLAMA, 8, 2),
        ("the user chose the workers", rollout(backend="ray", workers=4), LLAMA, 8, 2),
        ("one core", rollout(), LLAMA, 8, 1),
        ("a server backend", rollout(), OmegaConf.create({"llm": {"backend": "openai"}}), 8, 2),
        ("the extractive team", rollout(), OmegaConf.create({"llm": {"backend": "extractive"}}), 8, 2),
        ("a model on two threads", rollout(), OmegaConf.create({"llm": {"backend": "llamacpp", "n_threads": 2}}), 8, 2),
        ("a matrix game", rollout(), OmegaConf.create({"name": "two_step_v0"}), 8, 2),
    ],
)
def test_otherwise_the_run_stays_as_it_is(why, roll, env, episodes, cpus):
    assert model_processes(roll, env, episodes, cpus=cpus) is None, why
