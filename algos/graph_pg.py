"""``graph_pg``: a context-free distribution over communication graphs, learnt with REINFORCE.

In the spirit of GPTSwarm ("Language Agents as Optimizable Graphs", Zhuge et al., ICML
2024: one logit per possible edge, REINFORCE, learning rate 0.1, batch 4) and AgentPrune
(ICLR 2025): the policy sees nothing of the episode -- no observation, state or graph --
only the round index. It is a table of logits ``theta[r, i, a]``, one per round index
``r`` (up to the env's round budget, ``EnvSpec.extras["max_rounds"]``; later rounds use
the last row), agent ``i`` and discrete action ``a``. In the report env the actions are
the protocol's ``5 + N`` communication choices (``report_protocol.ActionTable``: work
alone, broadcast, query teammate k, aggregate, append, vote terminate), so a row of the
table is a distribution over who receives whom, who appends and when to stop: sampling
every row gives one communication graph per round, i.e. one graph sequence per episode.

Acting: the action mask is applied before anything else (a masked action's logit is
``-inf``, so it is never sampled nor taken greedily). ``explore=True`` samples each agent's
action from ``softmax(theta[r, i])``; ``explore=False`` takes its argmax ("the most likely
graph", the greedy evaluation).

Learning: every ``batch_size`` observed episodes, one Adam step on

    loss = -1/B sum_b (G_b - baseline_b) * sum_{t, i} log pi_{t,i}(a_{b,t,i})  -  entropy_coef * H

where ``G_b`` is the episode's objective, its return (the sum of its rewards: in the
report env the change of the final report score) minus ``token_cost`` times the tokens it
used (the env's per-round ``tokens`` infos, summed; 0 for envs that report none), and
``H`` the mean entropy of the masked per-round distributions the batch visited. The
baseline: ``batch_mean`` (default) gives each episode the mean objective of the *other*
episodes of its batch (leave-one-out, so it does not depend on the episode's own return
and the gradient stays unbiased); ``moving_average`` an exponential average of past
batches' mean objective; ``none`` zero.

Limits: the policy is open loop. It cannot condition on what happens in the episode
(e.g. which task it writes), which is GPTSwarm's point -- one graph for the task
distribution -- and also why it cannot coordinate where the best action of one agent
depends on what its teammate happens to sample (a penalty game like ``one_step_3x3_v0``,
or the two-step game's state 2B; see ``tests/algos/test_graph_pg.py``). Agents that do not act in a round are recorded by
the rollout with action 0 and an all-allowed mask; the report env and the matrix games
let every agent act every round, which this learner assumes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

import numpy as np
import torch

from .base import AlgoConfig, Algorithm, Capabilities, EnvSpec
from .buffer import Episode

BASELINES = ("batch_mean", "moving_average", "none")
# Rows of the logit table when neither the config nor the env gives a round budget.
DEFAULT_ROUNDS = 16


@dataclass
class GraphPGConfig(AlgoConfig):
    name: str = "graph_pg"
    lr: float = 0.1  # Adam step size on the logits (GPTSwarm's 0.1)
    batch_size: int = 4  # episodes per update (GPTSwarm's batch of 4): update() learns once this many are observed
    # batch_mean: each episode's baseline is the mean objective of the other episodes of its
    # batch (leave-one-out: unbiased; needs batch_size >= 2); moving_average: an exponential
    # average of past batches' mean objective (the first batch uses its own mean); none: 0.
    baseline: str = "batch_mean"
    baseline_decay: float = 0.9  # moving_average: b <- decay * b + (1 - decay) * (batch mean), after each update
    entropy_coef: float = 0.01  # weight of the mean entropy bonus: keeps the distribution from collapsing early
    # The objective is return - token_cost * tokens, tokens summed from the env's per-round
    # ``tokens`` infos (the report env's tokens of every call; envs without them: 0).
    # 0: the return alone. E.g. 1e-5 makes 10,000 tokens cost 0.1 of report score.
    token_cost: float = 0.0
    # Rows of the logit table (round indices): 0 = the env's round budget
    # (EnvSpec.extras["max_rounds"]; 16 when the env declares none). Rounds past the last
    # row share the last row.
    rounds: int = 0
    min_updates: int = 1  # a run whose budget gives fewer updates (train.episodes // batch_size) fails at start

    def validate(self) -> None:
        def bad(key: str, want: str) -> ValueError:
            return ValueError(f"algo.{key} must be {want}, got {getattr(self, key)!r}")

        for key, low in (("batch_size", 1), ("rounds", 0), ("min_updates", 0)):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise bad(key, f"an integer >= {low}")
        if not (self.lr > 0 and np.isfinite(self.lr)):
            raise bad("lr", "a finite number > 0")
        for key in ("entropy_coef", "token_cost"):
            if not (getattr(self, key) >= 0 and np.isfinite(getattr(self, key))):
                raise bad(key, "a finite number >= 0")
        if not 0.0 <= self.baseline_decay < 1.0:
            raise bad("baseline_decay", "in [0, 1)")
        if self.baseline not in BASELINES:
            raise bad("baseline", f"one of {', '.join(BASELINES)}")
        if self.baseline == "batch_mean" and self.batch_size < 2:
            raise ValueError(
                "algo.baseline=batch_mean needs algo.batch_size >= 2 (each episode's baseline is the mean of the "
                f"other episodes of its batch), got batch_size={self.batch_size}; use baseline=moving_average"
            )


def masked_logits(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``logits`` [..., A] with every forbidden action (``mask == 0``) set to ``-inf``."""
    mask = np.asarray(mask).astype(bool)
    if not mask.any(-1).all():
        raise ValueError("an agent has no available action")
    return np.where(mask, logits, -np.inf)


class GraphPG(Algorithm):
    config_class = GraphPGConfig
    cfg: GraphPGConfig
    capabilities = Capabilities(learns=True, needs_state=False, recurrent=False, needs_graph=False)
    update_metric_names = ("loss", "entropy", "baseline", "objective_mean", "return_mean", "tokens_mean", "grad_norm")

    def __init__(self, spec: EnvSpec, cfg: GraphPGConfig, *, seed: int = 0, device: str = "cpu"):
        super().__init__(spec, cfg, seed=seed, device=device)
        cfg.validate()
        budget = (spec.extras or {}).get("max_rounds")
        self.n_rounds = cfg.rounds or (int(budget) if budget else DEFAULT_ROUNDS)
        # Uniform over the allowed actions at the start (GPTSwarm starts every edge at p = 0.5).
        self.logits = torch.zeros(self.n_rounds, spec.n_agents, spec.n_actions, device=device, requires_grad=True)
        self.optimizer = torch.optim.Adam([self.logits], lr=cfg.lr)
        self.pending: list[dict[str, Any]] = []  # episodes observed since the last update
        self.baseline_value: Optional[float] = None  # moving_average's running value
        self.n_updates = 0
        self.episodes_seen = 0
        self.begin_episode()

    # --- acting -------------------------------------------------------------------
    def begin_episode(self) -> None:
        self._round = 0  # assigned (not mutated): episode views keep their own

    def row(self, t: int) -> int:
        """The table row of round ``t`` (0-based)."""
        return min(t, self.n_rounds - 1)

    def probabilities(self, t: int, masks: Optional[np.ndarray] = None) -> np.ndarray:
        """[N, A] the action distribution of every agent in round ``t`` (under ``masks`` [N, A])."""
        logits = self.logits.detach().cpu().numpy()[self.row(t)].astype(np.float64)
        if masks is not None:
            logits = masked_logits(logits, masks)
        z = np.exp(logits - logits.max(-1, keepdims=True))
        return z / z.sum(-1, keepdims=True)

    def act(self, obs, masks, explore, *, state=None, graph=None):
        table = self.logits.detach().cpu().numpy()[self.row(self._round)]
        self._round += 1
        actions = {}
        for i, agent in enumerate(self.spec.agents):
            if agent not in obs:
                continue
            logits = masked_logits(table[i].astype(np.float64), masks[agent])
            if explore:
                p = np.exp(logits - logits.max())
                actions[agent] = int(self.rng.choice(len(p), p=p / p.sum()))
            else:
                actions[agent] = int(np.argmax(logits))
        return actions

    def acting_state(self) -> dict[str, Any]:
        """The logits: all a rollout worker needs to act."""
        return {"logits": self.logits.detach().cpu().clone()}

    def load_acting_state(self, state: Mapping[str, Any]) -> None:
        with torch.no_grad():
            self.logits.copy_(state["logits"])

    # --- learning -----------------------------------------------------------------
    def observe(self, episode: Episode) -> None:
        T = len(episode)
        tokens = float(np.sum(episode.extras["tokens"])) if "tokens" in episode.extras else 0.0
        ret = float(np.sum(episode.rewards, dtype=np.float64))
        self.pending.append(
            {
                "actions": np.asarray(episode.actions, np.int64),
                "avail": np.asarray(episode.avail[:T], bool),
                "return": ret,
                "tokens": tokens,
            }
        )
        self.episodes_seen += 1

    def objective(self, ret: float, tokens: float) -> float:
        """What an episode is worth to the learner: its return minus the token cost."""
        return ret - self.cfg.token_cost * tokens

    def _baselines(self, objectives: np.ndarray) -> np.ndarray:
        B = len(objectives)
        if self.cfg.baseline == "batch_mean":
            return (objectives.sum() - objectives) / (B - 1)
        if self.cfg.baseline == "moving_average":
            value = float(objectives.mean()) if self.baseline_value is None else self.baseline_value
            return np.full(B, value)
        return np.zeros(B)

    def update(self) -> dict[str, float]:
        if len(self.pending) < self.cfg.batch_size:
            return {}
        batch, self.pending = self.pending[: self.cfg.batch_size], self.pending[self.cfg.batch_size :]
        returns = np.array([e["return"] for e in batch], np.float64)
        tokens = np.array([e["tokens"] for e in batch], np.float64)
        objectives = returns - self.cfg.token_cost * tokens
        baselines = self._baselines(objectives)
        advantages = objectives - baselines
        lengths = [len(e["actions"]) for e in batch]
        rows = torch.as_tensor(np.concatenate([np.minimum(np.arange(n), self.n_rounds - 1) for n in lengths]))
        actions = torch.as_tensor(np.concatenate([e["actions"] for e in batch])).to(self.device)  # [sum T, N]
        avail = torch.as_tensor(np.concatenate([e["avail"] for e in batch])).to(self.device)  # [sum T, N, A]
        weight = torch.as_tensor(np.repeat(advantages, lengths), dtype=torch.float32, device=self.device)
        # A row no action is allowed in (an agent after the end) would be all -inf: treat it as unrestricted.
        avail = avail | ~avail.any(-1, keepdim=True)
        logp_all = torch.log_softmax(self.logits[rows.to(self.device)].masked_fill(~avail, -float("inf")), -1)
        logp = logp_all.gather(-1, actions.unsqueeze(-1)).squeeze(-1)  # [sum T, N]
        pg = -(weight.unsqueeze(-1) * logp).sum() / len(batch)
        # p log p with the forbidden actions' -inf log-probabilities replaced by 0 *before* the
        # product (0 * -inf would be NaN, and its gradient NaN even behind a where()).
        entropy = -(logp_all.exp() * logp_all.masked_fill(~avail, 0.0)).sum(-1).mean()
        loss = pg - self.cfg.entropy_coef * entropy
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad = self.logits.grad
        grad_norm = float(grad.norm()) if grad is not None else 0.0
        self.optimizer.step()
        self.n_updates += 1
        if self.cfg.baseline == "moving_average":
            mean = float(objectives.mean())
            prev = mean if self.baseline_value is None else self.baseline_value
            self.baseline_value = self.cfg.baseline_decay * prev + (1.0 - self.cfg.baseline_decay) * mean
        return {
            "loss": float(loss.detach()),
            "entropy": float(entropy.detach()),
            "baseline": float(baselines.mean()),
            "objective_mean": float(objectives.mean()),
            "return_mean": float(returns.mean()),
            "tokens_mean": float(tokens.mean()),
            "grad_norm": grad_norm,
            "updates": float(self.n_updates),
        }

    def metrics(self) -> dict[str, float]:
        return {"updates": float(self.n_updates), "pending_episodes": float(len(self.pending))}

    def check_budget(self, total_episodes: int) -> None:
        """Raise when ``total_episodes`` give fewer than ``min_updates`` updates (one per ``batch_size``)."""
        n_updates = total_episodes // self.cfg.batch_size
        if n_updates < self.cfg.min_updates:
            raise ValueError(
                f"training would make {n_updates} updates (algo.min_updates={self.cfg.min_updates}): one update per "
                f"algo.batch_size={self.cfg.batch_size} episodes and train.episodes={total_episodes}; raise "
                "train.episodes, lower algo.batch_size, or set algo.min_updates=0 to collect only"
            )

    # --- persistence --------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        sd = super().state_dict()
        sd.update(
            logits=self.logits.detach().cpu().clone(),
            optimizer=self.optimizer.state_dict(),
            pending=[dict(e) for e in self.pending],
            counters={"n_updates": self.n_updates, "episodes_seen": self.episodes_seen},
            baseline_value=self.baseline_value,
        )
        return sd

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        logits = state["logits"]
        if tuple(logits.shape) != tuple(self.logits.shape):
            raise ValueError(
                f"graph_pg checkpoint has logits of shape {tuple(logits.shape)} (rounds, agents, actions); this env "
                f"and config give {tuple(self.logits.shape)}"
            )
        with torch.no_grad():
            self.logits.copy_(logits)
        self.optimizer.load_state_dict(state["optimizer"])
        self.pending = [dict(e) for e in state.get("pending", [])]
        for k, v in state["counters"].items():
            setattr(self, k, int(v))
        value = state.get("baseline_value")
        self.baseline_value = None if value is None else float(value)
        self.begin_episode()
