"""Mixers: per-agent chosen Q values (+ global state) -> team Q value.

A new mixer is a class: subclass :class:`Mixer`, implement ``mix(agent_qs [M, N],
state [M, S]) -> [M, 1]``, declare its settings as a dataclass ``config_class`` (built by
``from_config``) and ``register_mixer("name", cls)`` (or ``@register_mixer("name")``); then
``algo.mixer=name``. Its settings come from the algo config: a field of the mixer's
dataclass takes the value of the ``algo`` key of the same name (QMIX's
``mixing_embed_dim``, ``hypernet_layers``, ``hypernet_embed``), and ``algo.mixer_config``
(a mapping) sets any of them, including ones the algo config does not have. The base class
checks shapes with precise errors and flattens any leading (batch, time) dimensions.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from report_protocol.registry import EmptyConfig, Registry


class Mixer(nn.Module):
    needs_state: bool = True
    config_class: type = EmptyConfig  # the mixer's settings (a dataclass)

    @classmethod
    def from_config(cls, n_agents: int, state_dim: int, cfg: Any) -> "Mixer":
        """The mixer for ``n_agents`` agents and a state of ``state_dim`` from its config
        dataclass; a mixer with settings overrides this."""
        return cls(n_agents, state_dim)

    def __init__(self, n_agents: int, state_dim: int):
        super().__init__()
        self.n_agents = n_agents
        self.state_dim = state_dim

    def forward(self, agent_qs: torch.Tensor, state: torch.Tensor | None = None) -> torch.Tensor:
        """agent_qs [*lead, N], state [*lead, S] -> Q_tot [*lead]."""
        name = type(self).__name__
        if agent_qs.dim() < 1 or agent_qs.shape[-1] != self.n_agents:
            raise ValueError(
                f"{name}: agent_qs must have shape [..., n_agents={self.n_agents}], got {tuple(agent_qs.shape)}"
            )
        lead = agent_qs.shape[:-1]
        if self.needs_state:
            if state is None:
                raise ValueError(f"{name}: needs the global state, got None")
            if state.shape[-1] != self.state_dim:
                raise ValueError(
                    f"{name}: state must have shape [..., state_dim={self.state_dim}], got {tuple(state.shape)}"
                )
            if state.shape[:-1] != lead:
                raise ValueError(
                    f"{name}: leading dims of agent_qs {tuple(lead)} and state {tuple(state.shape[:-1])} differ"
                )
            state = state.reshape(-1, self.state_dim)
        out = self.mix(agent_qs.reshape(-1, self.n_agents), state)
        if out.shape != (agent_qs.reshape(-1, self.n_agents).shape[0], 1):
            raise RuntimeError(f"{name}.mix must return [M, 1], got {tuple(out.shape)}")
        return out.reshape(lead)

    @abstractmethod
    def mix(self, agent_qs: torch.Tensor, state: torch.Tensor | None) -> torch.Tensor:
        """agent_qs [M, N], state [M, S] or None -> [M, 1]."""


class VDNMixer(Mixer):
    """Q_tot = sum_i Q_i (Sunehag et al., 2017)."""

    needs_state = False

    def mix(self, agent_qs, state):
        return agent_qs.sum(-1, keepdim=True)


def _hypernet(state_dim: int, out: int, layers: int, embed: int) -> nn.Module:
    if layers == 1:
        return nn.Linear(state_dim, out)
    if layers == 2:
        return nn.Sequential(nn.Linear(state_dim, embed), nn.ReLU(), nn.Linear(embed, out))
    raise ValueError(f"hypernet_layers must be 1 or 2, got {layers}")


@dataclass
class QMixerConfig:
    mixing_embed_dim: int = 32  # mixing network width
    hypernet_layers: int = 2  # hypernetwork depth (1 or 2)
    hypernet_embed: int = 64  # hypernetwork hidden width


class QMixer(Mixer):
    """QMIX (Rashid et al., 2018): a state-conditioned monotonic mixing network.

    Weights come from hypernetworks of the state and pass through abs(), so
    dQ_tot/dQ_i >= 0; biases are unconstrained; the final bias is a V(s) head.
    """

    config_class = QMixerConfig

    @classmethod
    def from_config(cls, n_agents: int, state_dim: int, cfg: Any) -> "Mixer":
        return cls(n_agents, state_dim, cfg.mixing_embed_dim, cfg.hypernet_layers, cfg.hypernet_embed)

    def __init__(
        self, n_agents: int, state_dim: int, embed_dim: int = 32, hypernet_layers: int = 2, hypernet_embed: int = 64
    ):
        super().__init__(n_agents, state_dim)
        if state_dim < 1:
            raise ValueError("QMixer needs a state: the env must define state_space / state()")
        self.embed_dim = embed_dim
        self.hyper_w1 = _hypernet(state_dim, embed_dim * n_agents, hypernet_layers, hypernet_embed)
        self.hyper_b1 = nn.Linear(state_dim, embed_dim)
        self.hyper_w2 = _hypernet(state_dim, embed_dim, hypernet_layers, hypernet_embed)
        self.v = nn.Sequential(nn.Linear(state_dim, embed_dim), nn.ReLU(), nn.Linear(embed_dim, 1))

    def mix(self, agent_qs, state):
        M = agent_qs.shape[0]
        w1 = self.hyper_w1(state).abs().view(M, self.n_agents, self.embed_dim)
        b1 = self.hyper_b1(state)  # [M, E]
        # Tiny per-sample matrices: broadcast-multiply-sum beats bmm on CPU.
        hidden = F.elu((agent_qs.unsqueeze(-1) * w1).sum(1) + b1)  # [M, E]
        w2 = self.hyper_w2(state).abs()  # [M, E]
        return (hidden * w2).sum(-1, keepdim=True) + self.v(state)


MIXERS: Registry = Registry(
    "mixer", hint="A plugin must be imported (e.g. `plugins=[my_pkg.my_mixer]`) before it can be used."
)


def register_mixer(name: str, cls: Optional[type[Mixer]] = None, *, overwrite: bool = False) -> Any:
    """Register mixer class ``cls`` as ``name`` (``algo.mixer=name``); without ``cls``, a class decorator."""
    if cls is None:

        def deco(c: type[Mixer]) -> type[Mixer]:
            register_mixer(name, c, overwrite=overwrite)
            return c

        return deco
    if not (isinstance(cls, type) and issubclass(cls, Mixer)):
        raise TypeError(f"{cls!r} must subclass algos.mixers.Mixer")
    MIXERS.register(name, cls.from_config, config_class=cls.config_class, overwrite=overwrite)
    return cls


def build_mixer(name: str, n_agents: int, state_dim: int, cfg: Any = None) -> Mixer:
    """Registered mixer ``name`` with ``cfg`` (its config dataclass or a mapping of its settings)."""
    entry = MIXERS.get(name)
    return entry.factory(n_agents, state_dim, MIXERS.config(name, cfg))


register_mixer("qmix", QMixer)
register_mixer("vdn", VDNMixer)
