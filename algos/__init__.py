"""MARL algorithms and their registry.

    import algos
    algo = algos.build("qmix", algos.EnvSpec.from_env(env), {"lr": 1e-3}, seed=0)

Built in: ``qmix``, ``vdn``, ``iql`` (value learners), ``graph_pg`` (a context-free
distribution over communication graphs trained with REINFORCE, GPTSwarm-style) as
learners; ``random``, ``preset`` (solo, star, chain, full, ring) and ``handcrafted``
(the five-phase pipeline) as fixed policies.
Add your own with ``algos.register(name, cls)`` -- see ``algos/base.py`` for the
interface and ``experiments/train.py`` for loading a plugin module by config.
"""

from .agent_networks import NETWORKS, MLPAgent, build_network, register_network
from .base import AlgoConfig, Algorithm, Capabilities, EnvContractError, EnvSpec
from .buffer import Batch, Episode, EpisodeBuffer, collate
from .graph_pg import GraphPG, GraphPGConfig
from .iql import IQL, IQLConfig
from .mixers import MIXERS, Mixer, QMixer, VDNMixer, build_mixer, register_mixer
from .qmix import QMIX, QMIXConfig
from .random_policy import RandomConfig, RandomPolicy
from .handcrafted import HandcraftedConfig, HandcraftedPipeline
from .presets import PresetConfig, PresetTopology
from .registry import available, build, get, register, to_config
from .value_learner import ValueLearner, ValueLearnerConfig
from .vdn import VDN, VDNConfig
from .solo import SoloConfig, SoloPolicy

register("qmix", QMIX, config_name="base_qmix")
register("vdn", VDN, config_name="base_vdn")
register("iql", IQL, config_name="base_iql")
register("graph_pg", GraphPG, config_name="base_graph_pg")
register("random", RandomPolicy, config_name="base_random")
register("handcrafted", HandcraftedPipeline, config_name="base_handcrafted")
register("preset", PresetTopology, config_name="base_preset")
register("solo", SoloPolicy, config_name="base_solo")

__all__ = [
    "SoloConfig",
    "SoloPolicy",
    "AlgoConfig",
    "Algorithm",
    "Capabilities",
    "EnvContractError",
    "EnvSpec",
    "Batch",
    "Episode",
    "EpisodeBuffer",
    "collate",
    "MIXERS",
    "Mixer",
    "QMixer",
    "VDNMixer",
    "register_mixer",
    "build_mixer",
    "NETWORKS",
    "MLPAgent",
    "build_network",
    "register_network",
    "QMIX",
    "QMIXConfig",
    "VDN",
    "VDNConfig",
    "IQL",
    "IQLConfig",
    "GraphPG",
    "GraphPGConfig",
    "RandomConfig",
    "RandomPolicy",
    "HandcraftedConfig",
    "HandcraftedPipeline",
    "PresetConfig",
    "PresetTopology",
    "ValueLearner",
    "ValueLearnerConfig",
    "available",
    "build",
    "get",
    "register",
    "to_config",
]
