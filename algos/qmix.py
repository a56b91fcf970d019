"""QMIX: GNN-GRU agents with a monotonic, state-conditioned mixer (Rashid et al., 2018)."""

from dataclasses import dataclass

from .value_learner import ValueLearner, ValueLearnerConfig


@dataclass
class QMIXConfig(ValueLearnerConfig):
    name: str = "qmix"
    mixer: str = "qmix"


class QMIX(ValueLearner):
    config_class = QMIXConfig
