"""The random fixed policy: a uniform choice among each agent's available actions.

The first of the fixed policies (presets and the handcrafted pipeline follow the same
pattern): a :class:`algos.base.FixedPolicy`, no ``observe``/``update`` of its own.
"""

from dataclasses import dataclass

import numpy as np

from .base import AlgoConfig, FixedPolicy


@dataclass
class RandomConfig(AlgoConfig):
    name: str = "random"


class RandomPolicy(FixedPolicy):
    config_class = RandomConfig

    def act(self, obs, masks, explore, *, state=None, graph=None):
        actions = {}
        for agent in obs:
            mask = np.asarray(masks[agent]).astype(bool)
            allowed = np.flatnonzero(mask)
            if allowed.size == 0:
                raise ValueError(f"agent {agent} has no available action")
            actions[agent] = int(self.rng.choice(allowed))
        return actions
