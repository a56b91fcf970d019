"""The settings of the value learners (QMIX, VDN, IQL): ``ValueLearnerConfig``, range-checked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import numpy as np

from .agent_networks import NETWORKS
from .base import AlgoConfig
from .mixers import MIXERS
from .networks import GNN_LAYERS
from .transforms import REWARD_SPREADING


@dataclass
class ValueLearnerConfig(AlgoConfig):
    # --- agent network (algos/agent_networks.py) ---
    network: str = "gnn_gru"  # gnn_gru | gru (no message passing) | mlp (no memory either) | any registered name
    # The keys below are the built-in networks' settings: a network's config field takes the value of
    # the algo key of the same name; network_config sets any of its fields (a plugin's own included).
    network_config: Dict[str, Any] = field(default_factory=dict)
    hidden_dim: int = 64  # width of the encoder, GNN layers and GRU
    gnn_layer: str = "graphconv"  # torch-geometric layer over the comm graph: graphconv | sage | gatv2 | none
    gnn_layers: int = 1  # message-passing layers (residual)
    obs_last_action: bool = True  # feed each agent its own previous action (one-hot)
    # --- mixer (algos/mixers.py) ---
    mixer: str = "qmix"  # qmix | vdn | none (independent learners) | any name in algos.mixers.MIXERS
    # As for the network: the mixer's config fields take the algo keys of the same name (QMIX's three
    # below); mixer_config sets any of its fields.
    mixer_config: Dict[str, Any] = field(default_factory=dict)
    mixing_embed_dim: int = 32  # QMIX mixing network width
    hypernet_layers: int = 2  # QMIX hypernetwork depth (1 or 2)
    hypernet_embed: int = 64  # QMIX hypernetwork hidden width
    # --- optimisation ---
    lr: float = 5e-4  # Adam learning rate
    gamma: float = 0.99  # discount per round
    td_lambda: float = 0.0  # 0 = one-step TD; in (0, 1] = TD(lambda) targets
    double_q: bool = True  # target = Q_target(s', argmax_a Q_online(s', a)) over available actions
    batch_size: int = 32  # episodes per update
    buffer_size: int = 5000  # episodes kept in the replay buffer
    learning_starts: int = 32  # episodes stored before the first update (>= batch_size)
    updates_per_episode: int = 1  # gradient steps per observed episode
    min_updates: int = 1  # a run whose budget gives fewer gradient updates fails at start (0: allow none)
    grad_clip: float = 10.0  # max global gradient norm (<= 0: no clipping)
    target_update: str = "hard"  # hard: copy every target_update_interval updates; soft: Polyak with tau every update
    target_update_interval: int = 50  # in *updates* (= episodes at updates_per_episode=1), so it fires in short runs
    tau: float = 0.01  # soft target update rate
    # --- exploration: masked epsilon-greedy, linear schedule over env rounds ---
    epsilon_start: float = 1.0
    epsilon_finish: float = 0.05
    epsilon_anneal_steps: int = 2000  # env rounds (summed over agents' joint steps) to go from start to finish
    # --- reward ---
    # Credit for an append over the rounds since the previous one (the env's
    # ``rounds_since_append`` infos):
    #   none  -- (default) each round learns from the reward it earned; credit reaches the
    #            preparing rounds through bootstrapping alone (slower, unbiased).
    #   nstep -- n-step targets reaching to the append: every round of the block regresses
    #            on the append's discounted reward directly (faster credit), with the trace
    #            cut where the next joint action is not greedy, so the target is still the
    #            max target (unbiased; while exploring, traces are short and it is closer to
    #            ``none``).
    #   even  -- the original's even spreading, for replication only: BIASED. A round's
    #            reward then depends on later actions (when the next append comes), so the
    #            max target no longer targets the true values (measured on a delayed-reward
    #            game: the learners settled for the early, smaller payoff in 9 of 9 runs).
    reward_spreading: str = "none"
    spread_append_reward: Optional[bool] = None  # deprecated alias: true = reward_spreading "even", false = "none"
    reward_scale: float = 1.0  # rewards are multiplied by this before learning
    # --- time limits ---
    # Is the limit that truncates an episode visible to the agents? true: the cut round is
    # terminal for the TD target (the budget is part of the MDP: a round counter in the
    # observation); false: bootstrap from the final observation (a limit they cannot see);
    # null: the env's declaration (``time_limit_observable`` attribute or infos), and
    # bootstrap with a warning when the env declares nothing.
    time_limit_observable: Optional[bool] = None
    # --- checkpoints ---
    save_buffer: bool = True  # include the replay buffer in state_dict (exact resume)

    def validate(self) -> None:
        """Range checks, each naming its key (called when the learner is built, and by train.py at start)."""

        def bad(key: str, want: str) -> ValueError:
            return ValueError(f"algo.{key} must be {want}, got {getattr(self, key)!r}")

        for key, low in (
            ("hidden_dim", 1),
            ("gnn_layers", 0),
            ("mixing_embed_dim", 1),
            ("hypernet_embed", 1),
            ("batch_size", 1),
            ("buffer_size", 1),
            ("updates_per_episode", 1),
            ("min_updates", 0),
            ("target_update_interval", 1),
            ("epsilon_anneal_steps", 0),
        ):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise bad(key, f"an integer >= {low}")
        for key in ("gamma", "td_lambda", "epsilon_start", "epsilon_finish"):
            if not 0.0 <= getattr(self, key) <= 1.0:
                raise bad(key, "in [0, 1]")
        if not 0.0 < self.tau <= 1.0:
            raise bad("tau", "in (0, 1]")
        if not (self.lr > 0 and np.isfinite(self.lr)):
            raise bad("lr", "a finite number > 0")
        if not np.isfinite(self.reward_scale):
            raise bad("reward_scale", "finite")
        if self.hypernet_layers not in (1, 2):
            raise bad("hypernet_layers", "1 or 2")
        # Choices, checked when the config is validated (train.py: before anything is written),
        # not when the network is built after the run folder exists.
        for key, choices in (
            ("mixer", ("none", *MIXERS)),
            ("network", tuple(NETWORKS)),
            ("gnn_layer", ("none", *GNN_LAYERS)),
            ("target_update", ("hard", "soft")),
            ("reward_spreading", tuple(REWARD_SPREADING)),
        ):
            if getattr(self, key) not in choices:
                raise bad(key, f"one of {', '.join(choices)}")
        # Each component's settings, read into its config dataclass: an unknown key fails here, named.
        for key, registry, name in (("network", NETWORKS, self.network), ("mixer", MIXERS, self.mixer)):
            if name == "none":
                continue
            try:
                registry.settings_from(name, self, getattr(self, f"{key}_config"))
            except (ValueError, TypeError) as e:
                raise ValueError(f"algo.{key}_config: {e}") from e
        if self.learning_starts < self.batch_size:
            raise ValueError(
                f"algo.learning_starts ({self.learning_starts}) must be >= algo.batch_size ({self.batch_size})"
            )
