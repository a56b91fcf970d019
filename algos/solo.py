"""The solo policy: one agent with the retrieval tool writes the whole report alone.

The baseline a reviewer asks for first: is a team needed at all? Every round only the
researching agent acts (it searches, then writes what it found) and appends; nobody else
runs and nothing is sent between agents. It plays at the env's round budget under the same
token budget as every other policy, so it is compared with the team at equal budgets (it
spends less of it: one agent's calls a round).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from report_protocol import COLLECTOR
from report_protocol.pipeline_parts import RESEARCH

from .base import AlgoConfig, PlanPolicy
from .handcrafted_feedback import agent_parts


@dataclass
class SoloConfig(AlgoConfig):
    name: str = "solo"
    agent: Optional[str] = None  # the agent writing alone (default: the first one playing the research part)


class SoloPolicy(PlanPolicy):
    """One agent researches and appends every round; the others never run."""

    config_class = SoloConfig
    cfg: SoloConfig

    def __init__(self, spec, cfg: SoloConfig, *, seed: int = 0, device: str = "cpu"):
        super().__init__(spec, cfg, seed=seed, device=device)
        agents = list(spec.agents)
        if cfg.agent is not None:
            if cfg.agent not in agents:
                raise ValueError(f"algo.agent: {cfg.agent!r} is not an agent of this env; agents: {agents}")
            self.agent = cfg.agent
        else:
            parts = agent_parts(agents, (spec.extras or {}).get("pipeline_parts"))
            researchers = [a for a in agents if parts.get(a) == RESEARCH]
            if not researchers:
                raise ValueError(
                    f"algo=solo needs the report env (round plans, an agent with the retrieval tool); this env's "
                    f"agents {agents} play no research part (parts: {parts}); on a report env with other roles, "
                    "name the writer with algo.agent=<agent>"
                )
            self.agent = researchers[0]

    def next_plan(self, round_info: Optional[Mapping[str, Any]] = None) -> dict:
        return {"acting": [self.agent], "edges": [[self.agent, COLLECTOR]]}
