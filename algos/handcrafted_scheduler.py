"""Who of a round pattern's optional agents runs: the handcrafted pipeline's skip strategies.

Required agents always run. An optional agent runs under ``always_include``; under
``temporal_heuristic`` only if it said something earlier in the phase (memory is wiped
at phase boundaries); under ``llm_gatecheck`` when its EXECUTE/SKIP gate answered YES,
and by the temporal heuristic when no gate answered.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Mapping, Optional

from .handcrafted_phases import RoundPattern


class SkipStrategy(str, Enum):
    ALWAYS_INCLUDE = "always_include"  # every optional agent runs
    TEMPORAL_HEURISTIC = "temporal_heuristic"  # runs only if it produced output earlier in the phase
    LLM_GATECHECK = "llm_gatecheck"  # a short EXECUTE/SKIP gate call decides; temporal without an answer

    @classmethod
    def parse(cls, value: Any) -> "SkipStrategy":
        if isinstance(value, cls):
            return value
        text = str(value).strip().lower()
        for s in cls:
            if text in (s.value, s.name.lower()):
                return s
        raise ValueError(f"algo.skip_strategy: unknown strategy {value!r}; expected one of {[s.value for s in cls]}")


class RoundScheduler:
    """Decides which optional agents of a round pattern run.

    ``produced``: agents whose output counted since the last memory wipe.
    ``gates``: LLM gate answers for this round (agent -> EXECUTE?), absent when no
    gate check ran (then LLM_GATECHECK falls back to the temporal heuristic).
    """

    def __init__(self, strategy: SkipStrategy | str = SkipStrategy.TEMPORAL_HEURISTIC):
        self.strategy = SkipStrategy.parse(strategy)

    def include_optional(self, agent: str, produced: set[str], gates: Mapping[str, Optional[bool]]) -> bool:
        if self.strategy is SkipStrategy.ALWAYS_INCLUDE:
            return True
        if self.strategy is SkipStrategy.LLM_GATECHECK and gates.get(agent) is not None:
            return bool(gates[agent])
        return agent in produced

    def select(
        self, pattern: RoundPattern, produced: set[str], gates: Optional[Mapping[str, Optional[bool]]] = None
    ) -> list[str]:
        acting = list(pattern.required)
        acting += [a for a in pattern.optional if self.include_optional(a, produced, gates or {})]
        return acting

    def gate_target(self, pattern: RoundPattern) -> Optional[str]:
        """The optional agent of ``pattern`` to gate-check (the engine runs one gate per round)."""
        if self.strategy is not SkipStrategy.LLM_GATECHECK or not pattern.optional:
            return None
        return pattern.optional[0]
