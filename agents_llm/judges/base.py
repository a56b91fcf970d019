"""What every judge returns, the interface it implements, and the length score."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..backends.accounting import TokenLedger
from ..report_state import ReportState


@dataclass
class JudgeResult:
    """One scoring of a whole report.

    `score` is in [0, 1]. `components` holds the named parts that make it up (each in
    [0, 1]). `flagged` says some part of the judgment failed and `score` rests on a
    fallback for that part; `reason` says which part and why. `calls` counts the LLM
    requests this scoring made (0 for the reference judge and for cache hits).
    """

    score: float
    components: dict[str, float] = field(default_factory=dict)
    flagged: bool = False
    reason: str = ""
    calls: int = 0
    details: dict[str, Any] = field(default_factory=dict)  # judge-specific, for logs and traces


@runtime_checkable
class Judge(Protocol):
    kind: str

    async def score(self, report: ReportState, *, ledger: TokenLedger | None = None) -> JudgeResult: ...


def length_score(chars: float, target: float = 25000.0, width: float = 8500.0) -> float:
    """Gaussian closeness of the report length to `target`: 1 at the target, exp(-0.5) one width away.

    The defaults are the original's 25,000 +- 8,500 characters; the env takes its target and
    width from the judge config (`judge.length_preset`, config.LENGTH_PRESETS).
    """
    if width <= 0:
        raise ValueError(f"length width must be positive, got {width}")
    z = (float(chars) - float(target)) / float(width)
    return math.exp(-0.5 * z * z)


def clamp01(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else float(x)
