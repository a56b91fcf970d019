"""MARL algorithms and their registry.

    import algos
    algo = algos.build("qmix", algos.EnvSpec.from_env(env), {"lr": 1e-3}, seed=0)

Built in: ``qmix``, ``vdn``, ``iql`` (learners) and ``random`` (a fixed policy).
Add your own with ``algos.register(name, cls)`` -- see ``algos/base.py`` for the
interface and ``experiments/train.py`` for loading a plugin module by config.
"""

from .base import AlgoConfig, Algorithm, Capabilities, EnvSpec
from .buffer import Batch, Episode, EpisodeBuffer, collate
from .iql import IQL, IQLConfig
from .mixers import MIXERS, Mixer, QMixer, VDNMixer, register_mixer
from .qmix import QMIX, QMIXConfig
from .random_policy import RandomConfig, RandomPolicy
from .registry import available, build, get, register, to_config
from .value_learner import ValueLearner, ValueLearnerConfig
from .vdn import VDN, VDNConfig

register("qmix", QMIX, config_name="base_qmix")
register("vdn", VDN, config_name="base_vdn")
register("iql", IQL, config_name="base_iql")
register("random", RandomPolicy, config_name="base_random")

__all__ = [
    "AlgoConfig", "Algorithm", "Capabilities", "EnvSpec", "Batch", "Episode", "EpisodeBuffer", "collate",
    "MIXERS", "Mixer", "QMixer", "VDNMixer", "register_mixer", "QMIX", "QMIXConfig", "VDN", "VDNConfig",
    "IQL", "IQLConfig", "RandomConfig", "RandomPolicy", "ValueLearner", "ValueLearnerConfig",
    "available", "build", "get", "register", "to_config",
]
