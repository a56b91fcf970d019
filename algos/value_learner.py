"""Value-decomposition learners: one class behind QMIX, VDN and IQL.

They share the agent network (``algo.network``, :mod:`algos.agent_networks`; the GNN -> GRU
one by default), the episode buffer, masked epsilon-greedy exploration, double Q, target
networks, optional TD(lambda) and gradient clipping; they differ only in the mixer
(``qmix``, ``vdn``, or ``none`` for independent learners, whose TD loss is per agent on the
team reward; :mod:`algos.mixers`). Settings: :mod:`algos.value_config`; exploration and
targets: :mod:`algos.value_targets`.

Loss over a batch of episodes (rounds t = 0..T-1, padded rounds masked out):

    y_t = r_t + gamma * (1 - terminal_t) * [(1 - lambda) * Q'_{t+1} + lambda * y_{t+1}]

with y_{t+1} replaced by Q'_{t+1} on an episode's last round, Q' the target network's
value of the online network's greedy masked action (double Q) or of its own max.
The terminal round is in the loss (it is the round that carries the payoff) and it does
not bootstrap.

Time limits (Pardo et al., "Time Limits in Reinforcement Learning", ICML 2018): a round
cut by a limit the agents can see (the round budget is in the report env's observation)
is terminal -- nothing follows it in the MDP the agents face -- so it does not
bootstrap; a cut the agents cannot see bootstraps from the final observation. The env
declares which (``time_limit_observable``, see ``envs/__init__.py``);
``ValueLearnerConfig.time_limit_observable`` overrides it.

Reward spreading (``reward_spreading``): ``nstep`` sets lambda_t = 1 inside an append's
credit block (the rounds since the previous append), so every round that prepared an
append regresses on the append's reward itself, with the trace cut where the next
joint action is not greedy (Watkins) so the target stays the max target.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from typing import Any, Mapping, Optional

import numpy as np
import torch

from .agent_networks import NETWORKS, build_network
from .base import Algorithm, Capabilities, EnvSpec
from .buffer import Batch, Episode, EpisodeBuffer
from .mixers import MIXERS, Mixer, build_mixer
from .transforms import REWARD_SPREADING, apply_reward_spreading
from .value_config import ValueLearnerConfig
from .value_targets import LinearSchedule, block_lambda, masked_epsilon_greedy, td_targets

__all__ = ["LinearSchedule", "ValueLearner", "ValueLearnerConfig", "masked_epsilon_greedy", "td_targets"]


class ValueLearner(Algorithm):
    config_class = ValueLearnerConfig
    cfg: ValueLearnerConfig
    capabilities = Capabilities(learns=True, needs_state=True, recurrent=True, needs_graph=True)
    update_metric_names = ("loss", "grad_norm", "q_taken_mean", "target_mean", "td_error_abs")

    def __init__(self, spec: EnvSpec, cfg: ValueLearnerConfig, *, seed: int = 0, device: str = "cpu"):
        super().__init__(spec, cfg, seed=seed, device=device)
        if cfg.target_update not in ("hard", "soft"):
            raise ValueError(f"target_update must be 'hard' or 'soft', got {cfg.target_update!r}")
        cfg.validate()
        self.reward_spreading = self._resolve_spreading(cfg)
        self._warned_undeclared_limit = False
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            net_cfg = NETWORKS.settings_from(cfg.network, cfg, cfg.network_config)
            self.agent: Any = build_network(cfg.network, spec.obs_dim, spec.n_agents, spec.n_actions, net_cfg).to(
                device
            )
            self.mixer: Optional[Mixer] = None
            if cfg.mixer != "none":
                mix_cfg = MIXERS.settings_from(cfg.mixer, cfg, cfg.mixer_config)
                self.mixer = build_mixer(cfg.mixer, spec.n_agents, spec.state_dim, mix_cfg).to(device)
        self.target_agent = copy.deepcopy(self.agent).requires_grad_(False)
        self.target_mixer = copy.deepcopy(self.mixer).requires_grad_(False) if self.mixer is not None else None
        self.params = list(self.agent.parameters()) + (list(self.mixer.parameters()) if self.mixer is not None else [])
        self.optimizer = torch.optim.Adam(self.params, lr=cfg.lr, fused=True)  # one kernel for all params (CPU too)
        self.buffer = EpisodeBuffer(cfg.buffer_size, rng=np.random.default_rng(seed + 1))
        self.epsilon = LinearSchedule(cfg.epsilon_start, cfg.epsilon_finish, cfg.epsilon_anneal_steps)
        self.t_env = 0  # env rounds observed
        self.episodes_seen = 0
        self.n_updates = 0
        self.n_target_updates = 0
        self.begin_episode()

    @staticmethod
    def _resolve_spreading(cfg: ValueLearnerConfig) -> str:
        mode = cfg.reward_spreading
        if mode not in REWARD_SPREADING:
            raise ValueError(f"reward_spreading must be one of {list(REWARD_SPREADING)}, got {mode!r}")
        if cfg.spread_append_reward is not None:
            legacy = "even" if cfg.spread_append_reward else "none"
            if mode not in ("none", legacy):
                raise ValueError(
                    f"spread_append_reward={cfg.spread_append_reward} (deprecated) contradicts reward_spreading={mode!r}; "
                    "set reward_spreading only"
                )
            mode = legacy
        return mode

    def cut_is_terminal(self, episode: Episode) -> bool:
        """Whether this episode's time-limit cut ends the MDP (no bootstrap)."""
        if self.cfg.time_limit_observable is not None:
            return bool(self.cfg.time_limit_observable)
        declared = episode.time_limit_observable
        if declared is None:
            declared = self.spec.time_limit_observable
        if declared is None:
            if not self._warned_undeclared_limit:
                warnings.warn(
                    "the env truncated an episode but does not declare time_limit_observable (envs/__init__.py); "
                    "bootstrapping through the cut as for a limit the agents cannot see. Declare it on the env or "
                    "set algo.time_limit_observable.",
                    stacklevel=3,
                )
                self._warned_undeclared_limit = True
            return False
        return bool(declared)

    # --- acting -------------------------------------------------------------------
    def begin_episode(self) -> None:
        self._hidden = self.agent.init_hidden(1)
        self._last_action = torch.full((1, self.spec.n_agents), -1, dtype=torch.long, device=self.device)
        self.last_q: Optional[np.ndarray] = None

    def current_epsilon(self) -> float:
        return float(self.epsilon(self.t_env))

    @torch.no_grad()
    def act(self, obs, masks, explore, *, state=None, graph=None):
        n = self.spec.n_agents
        o = torch.from_numpy(self.spec.stack_observations(obs)).unsqueeze(0).to(self.device)
        mask = self.spec.stack_masks(masks)
        adj = Episode.adjacency(np.zeros((2, 0), np.int64) if graph is None else np.asarray(graph), n)
        q, self._hidden = self.agent.forward_step(
            o, self._last_action, torch.from_numpy(adj).unsqueeze(0).to(self.device), self._hidden
        )
        q = q[0].cpu().numpy()
        eps = self.current_epsilon() if explore else 0.0
        actions = masked_epsilon_greedy(q, mask, eps, self.rng)
        self.last_q = q[np.arange(n), actions]
        self._last_action = torch.from_numpy(actions).long().unsqueeze(0).to(self.device)
        return {a: int(actions[i]) for i, a in enumerate(self.spec.agents) if a in obs}

    @torch.no_grad()
    def act_batch(self, views, obs, masks, explore, *, states=None, graphs=None):
        """``act`` for several episodes in flight with one forward pass over all of them;
        each view keeps its own hidden state, last action and exploration stream."""
        if not all(isinstance(v, ValueLearner) and v.agent is self.agent for v in views):
            return super().act_batch(views, obs, masks, explore, states=states, graphs=graphs)
        n, empty = self.spec.n_agents, np.zeros((2, 0), np.int64)
        graphs = graphs if graphs is not None else [None] * len(views)
        o = torch.from_numpy(np.stack([self.spec.stack_observations(x) for x in obs])).to(self.device)
        adj = np.stack([Episode.adjacency(empty if g is None else np.asarray(g), n) for g in graphs])
        hidden = torch.cat([v._hidden for v in views])
        last = torch.cat([v._last_action for v in views])
        q, hidden = self.agent.forward_step(o, last, torch.from_numpy(adj).to(self.device), hidden)
        q = q.cpu().numpy()
        out = []
        for b, (v, m) in enumerate(zip(views, masks)):
            mask = self.spec.stack_masks(m)
            actions = masked_epsilon_greedy(q[b], mask, v.current_epsilon() if explore else 0.0, v.rng)
            v.last_q = q[b][np.arange(n), actions]
            v._hidden = hidden[b : b + 1]
            v._last_action = torch.from_numpy(actions).long().unsqueeze(0).to(self.device)
            out.append({a: int(actions[i]) for i, a in enumerate(self.spec.agents) if a in obs[b]})
        return out

    def acting_state(self) -> dict[str, Any]:
        """The online agent network and the counter epsilon is read from: all a rollout
        worker needs (no mixer, optimizer or replay buffer)."""
        return {"agent": self.agent.state_dict(), "t_env": self.t_env}

    def load_acting_state(self, state: Mapping[str, Any]) -> None:
        self.agent.load_state_dict(state["agent"])
        self.t_env = int(state["t_env"])

    def metrics(self) -> dict[str, float]:
        return {
            "epsilon": self.current_epsilon(),
            "buffer_episodes": float(len(self.buffer)),
            "updates": float(self.n_updates),
        }

    # --- learning -----------------------------------------------------------------
    def observe(self, episode: Episode) -> None:
        self.t_env += len(episode)
        self.episodes_seen += 1
        if episode.truncated and not episode.terminated and self.cut_is_terminal(episode):
            episode = dataclasses.replace(episode, terminated=True)
        if self.reward_spreading == "even":
            episode = apply_reward_spreading(episode)
        if self.cfg.reward_scale != 1.0:
            episode = copy.copy(episode)
            episode.rewards = np.multiply(episode.rewards, self.cfg.reward_scale, dtype=np.float32)
        self.buffer.add(episode)

    def update(self) -> dict[str, float]:
        if len(self.buffer) < self.cfg.learning_starts:
            return {}
        metrics: dict[str, float] = {}
        for _ in range(self.cfg.updates_per_episode):
            metrics = self.train_on_batch(self.buffer.sample(self.cfg.batch_size, self.device))
        return metrics

    def _agent_inputs(self, batch: Batch) -> Any:
        """The batch as the agent network's input, built once for the online and the target network."""
        last = torch.cat([torch.full_like(batch.actions[:, :1], -1), batch.actions], dim=1)  # [B, T+1, N]
        return self.agent.prepare(batch.obs, last, batch.adj)

    def _agent_qs(self, net: Any, inputs: Any) -> torch.Tensor:
        return net.forward_prepared(inputs)[0]  # [B, T+1, N, A]

    def td_targets(
        self,
        rewards: torch.Tensor,
        terminated: torch.Tensor,
        filled: torch.Tensor,
        next_v: torch.Tensor,
        lam: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """TD(lambda) targets with this config's gamma and lambda (:func:`algos.value_targets.td_targets`)."""
        return td_targets(rewards, terminated, filled, next_v, self.cfg.gamma, self.cfg.td_lambda, lam)

    def _block_lambda(self, batch: Batch, a_star: torch.Tensor, per_agent: bool) -> torch.Tensor:
        return block_lambda(batch, a_star, self.cfg.td_lambda, per_agent)

    def train_on_batch(self, batch: Batch) -> dict[str, float]:
        inputs = self._agent_inputs(batch)
        q_all = self._agent_qs(self.agent, inputs)  # [B, T+1, N, A]
        q_taken = q_all[:, :-1].gather(-1, batch.actions.unsqueeze(-1)).squeeze(-1)  # [B, T, N]
        with torch.no_grad():
            tq_all = self._agent_qs(self.target_agent, inputs)
            nstep = self.reward_spreading == "nstep"
            if self.cfg.double_q or nstep:
                a_star = q_all.detach().masked_fill(~batch.avail, -float("inf")).argmax(-1, keepdim=True)
            if self.cfg.double_q:
                tq = tq_all.gather(-1, a_star).squeeze(-1)  # [B, T+1, N]
            else:
                tq = tq_all.masked_fill(~batch.avail, -float("inf")).max(-1).values
            if self.target_mixer is not None:
                next_v = self.target_mixer(tq[:, 1:], batch.state[:, 1:])  # [B, T]
            else:
                next_v = tq[:, 1:]
        mask = batch.filled
        rewards, terminated = batch.rewards, batch.terminated
        if self.mixer is not None:
            chosen = self.mixer(q_taken, batch.state[:, :-1])  # [B, T]
        else:  # independent learners: every agent regresses on the team reward
            chosen = q_taken
            mask, rewards, terminated = (x.unsqueeze(-1).expand_as(q_taken) for x in (mask, rewards, terminated))
        lam = self._block_lambda(batch, a_star, per_agent=self.mixer is None) if nstep else None
        targets = self.td_targets(rewards, terminated, mask, next_v, lam).detach()
        td = (chosen - targets) * mask
        loss = (td**2).sum() / mask.sum().clamp(min=1.0)

        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.cfg.grad_clip > 0:
            grad_norm = torch.nn.utils.clip_grad_norm_(self.params, self.cfg.grad_clip)
        else:
            grad_norm = torch.linalg.vector_norm(
                torch.stack([p.grad.norm() for p in self.params if p.grad is not None])
            )
        self.optimizer.step()
        self.n_updates += 1
        self._maybe_update_target()
        n = mask.sum().clamp(min=1.0)
        return {
            "loss": float(loss.detach()),
            "grad_norm": float(grad_norm),
            "q_taken_mean": float((chosen.detach() * mask).sum() / n),
            "target_mean": float((targets * mask).sum() / n),
            "td_error_abs": float(td.detach().abs().sum() / n),
            "updates": float(self.n_updates),
            "target_updates": float(self.n_target_updates),
        }

    def _net_pairs(self) -> list[tuple[torch.nn.Module, torch.nn.Module]]:
        """(online, target) for the agent network and the mixer."""
        pairs: list[tuple[torch.nn.Module, torch.nn.Module]] = [(self.agent, self.target_agent)]
        if self.mixer is not None and self.target_mixer is not None:
            pairs.append((self.mixer, self.target_mixer))
        return pairs

    def _maybe_update_target(self) -> None:
        pairs = self._net_pairs()
        if self.cfg.target_update == "soft":
            with torch.no_grad():
                for net, tgt in pairs:
                    for p, tp in zip(net.parameters(), tgt.parameters()):
                        tp.lerp_(p, self.cfg.tau)
            self.n_target_updates += 1
        elif self.n_updates % self.cfg.target_update_interval == 0:
            for net, tgt in pairs:
                tgt.load_state_dict(net.state_dict())
            self.n_target_updates += 1

    def check_budget(self, total_episodes: int) -> None:
        """Raise when a run of ``total_episodes`` would make fewer than ``min_updates`` gradient
        updates (on any env: a run that learns nothing must not look like one that did), or
        when a hard target update would never fire."""
        n_updates = max(total_episodes - self.cfg.learning_starts + 1, 0) * self.cfg.updates_per_episode
        if n_updates < self.cfg.min_updates:
            raise ValueError(
                f"training would make {n_updates} gradient updates (algo.min_updates={self.cfg.min_updates}): "
                f"updates start once algo.learning_starts={self.cfg.learning_starts} episodes are stored and "
                f"train.episodes={total_episodes}; raise train.episodes above {self.cfg.learning_starts} or lower "
                f"algo.learning_starts (with algo.batch_size <= it), or set algo.min_updates=0 to collect only"
            )
        if self.cfg.target_update != "hard":
            return
        if n_updates < self.cfg.target_update_interval:
            raise ValueError(
                f"target network would never update: {total_episodes} episodes give {n_updates} updates "
                f"< target_update_interval={self.cfg.target_update_interval}; lower algo.target_update_interval "
                "or use algo.target_update=soft"
            )

    # --- analysis -----------------------------------------------------------------
    @torch.no_grad()
    def chosen_values(self, batch: Batch) -> torch.Tensor:
        """Online team value of the batch's actions, [B, T]: the mixer's Q_tot, or for
        independent learners the mean of the agents' Q (each estimates the team return)."""
        q = (
            self._agent_qs(self.agent, self._agent_inputs(batch))[:, :-1]
            .gather(-1, batch.actions.unsqueeze(-1))
            .squeeze(-1)
        )
        return self.mixer(q, batch.state[:, :-1]) if self.mixer is not None else q.mean(-1)

    # --- persistence --------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        sd = super().state_dict()
        sd.update(
            agent=self.agent.state_dict(),
            target_agent=self.target_agent.state_dict(),
            optimizer=self.optimizer.state_dict(),
            counters={
                "t_env": self.t_env,
                "episodes_seen": self.episodes_seen,
                "n_updates": self.n_updates,
                "n_target_updates": self.n_target_updates,
            },
            buffer_rng=self.buffer.rng.bit_generator.state,
        )
        if self.mixer is not None and self.target_mixer is not None:
            sd.update(mixer=self.mixer.state_dict(), target_mixer=self.target_mixer.state_dict())
        if self.cfg.save_buffer:
            sd["buffer"] = self.buffer.state_dict()
        return sd

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        self.agent.load_state_dict(state["agent"])
        self.target_agent.load_state_dict(state["target_agent"])
        if self.mixer is not None and self.target_mixer is not None:
            self.mixer.load_state_dict(state["mixer"])
            self.target_mixer.load_state_dict(state["target_mixer"])
        self.optimizer.load_state_dict(state["optimizer"])
        for k, v in state["counters"].items():
            setattr(self, k, v)
        self.buffer.rng.bit_generator.state = state["buffer_rng"]
        if "buffer" in state:
            self.buffer.load_state_dict(state["buffer"])
        elif self.cfg.save_buffer:
            warnings.warn("checkpoint has no replay buffer; resuming with an empty one")
        self.begin_episode()
