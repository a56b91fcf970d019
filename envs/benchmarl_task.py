"""BenchMARL tasks for the project's envs: the report env and the matrix games.

    from benchmarl.algorithms import QmixConfig
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models.mlp import MlpConfig
    from envs.benchmarl_task import ReportGymTask

    task = ReportGymTask.TWO_STEP.get_task(config={})                 # envs.make kwargs
    task = ReportGymTask.REPORT_WRITING.get_task(config={"max_rounds": 4, "llm": {...}})
    Experiment(task=task, algorithm_config=QmixConfig.get_from_yaml(), model_config=MlpConfig.get_from_yaml(),
               critic_model_config=MlpConfig.get_from_yaml(), seed=0, config=ExperimentConfig.get_from_yaml()).run()

Each env goes through :func:`envs.torchrl_compat.torchrl_env` (the team in one group,
``"agents"``; stackable infos; the global state for QMIX's mixer; categorical actions
and masks). This module needs BenchMARL and a torchrl it accepts: see the README
("TorchRL and BenchMARL") for the versions; nothing else in the project imports it.
"""

from __future__ import annotations

import copy
from typing import Callable, Dict, List, Optional

from benchmarl.environments.common import Task, TaskClass
from torchrl.data import Composite
from torchrl.envs import EnvBase

import envs
from envs.torchrl_compat import TEAM_GROUP, torchrl_env

# BenchMARL task name -> (envs registry name, evaluation rollout cap in steps)
_ENVS = {
    "REPORT_WRITING": ("report_writing_v0", None),  # None: the env's own max_rounds
    "TWO_STEP": ("two_step_v0", 2),
    "ONE_STEP_3X3": ("one_step_3x3_v0", 1),
}


class ReportGymTaskClass(TaskClass):
    """A BenchMARL task whose ``config`` is the env factory's keyword arguments."""

    def get_env_fun(
        self, num_envs: int, continuous_actions: bool, seed: Optional[int], device
    ) -> Callable[[], EnvBase]:
        if continuous_actions:
            raise ValueError(f"{self.name}: the project's envs have discrete actions only")
        name, config = _ENVS[self.name][0], copy.deepcopy(self.config)
        return lambda: torchrl_env(envs.make(name, **config), seed=seed, device=device)

    def supports_continuous_actions(self) -> bool:
        return False

    def supports_discrete_actions(self) -> bool:
        return True

    def has_render(self, env: EnvBase) -> bool:
        return False

    def max_steps(self, env: EnvBase) -> int:
        cap = _ENVS[self.name][1]
        return cap if cap is not None else int(env._env.max_rounds)

    def group_map(self, env: EnvBase) -> Dict[str, List[str]]:
        return env.group_map

    def _group_keys(self, env: EnvBase, keep: str) -> Composite:
        spec = env.observation_spec.clone()
        for group in self.group_map(env):
            for key in list(spec[group].keys()):
                if key != keep:
                    del spec[group][key]
            if spec[group].is_empty():
                del spec[group]
        if "state" in spec.keys():
            del spec["state"]
        return spec

    def observation_spec(self, env: EnvBase) -> Composite:
        return self._group_keys(env, "observation")

    def info_spec(self, env: EnvBase) -> Optional[Composite]:
        spec = self._group_keys(env, "info")
        return None if spec.is_empty() else spec

    def action_mask_spec(self, env: EnvBase) -> Optional[Composite]:
        spec = self._group_keys(env, "action_mask")
        return None if spec.is_empty() else spec

    def state_spec(self, env: EnvBase) -> Optional[Composite]:
        if "state" in env.observation_spec.keys():
            return Composite({"state": env.observation_spec["state"].clone()})
        return None

    def action_spec(self, env: EnvBase) -> Composite:
        return env.full_action_spec

    @staticmethod
    def env_name() -> str:
        return "qmix_report_gym"


class ReportGymTask(Task):
    """The project's envs as BenchMARL tasks (group: ``agents``)."""

    REPORT_WRITING = None
    TWO_STEP = None
    ONE_STEP_3X3 = None

    @staticmethod
    def associated_class():
        return ReportGymTaskClass


__all__ = ["ReportGymTask", "ReportGymTaskClass", "TEAM_GROUP"]
