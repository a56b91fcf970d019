"""VDN: the same agents, Q_tot = sum of agents' Q values (Sunehag et al., 2017)."""

from dataclasses import dataclass

from .base import Capabilities
from .value_learner import ValueLearner, ValueLearnerConfig


@dataclass
class VDNConfig(ValueLearnerConfig):
    name: str = "vdn"
    mixer: str = "vdn"


class VDN(ValueLearner):
    config_class = VDNConfig
    capabilities = Capabilities(learns=True, needs_state=False, recurrent=True, needs_graph=True)
