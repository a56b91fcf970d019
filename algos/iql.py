"""IQL: the same agents, each learning its own Q on the team reward (no mixer)."""

from dataclasses import dataclass

from .base import Capabilities
from .value_learner import ValueLearner, ValueLearnerConfig


@dataclass
class IQLConfig(ValueLearnerConfig):
    name: str = "iql"
    mixer: str = "none"


class IQL(ValueLearner):
    config_class = IQLConfig
    capabilities = Capabilities(learns=True, needs_state=False, recurrent=True, needs_graph=True)
