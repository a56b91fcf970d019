"""The reward the env emits after each round that appended.

    r = w_score * (report_score - previous report_score)
      + w_length * (length_score - previous length_score)

One RewardTracker per episode: it remembers the previous scores (starting from the
empty report), so several envs sharing one judge never share reward state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..backends.accounting import TokenLedger
from ..report_state import ReportState
from .base import Judge, JudgeResult, length_score
from .config import LENGTH_PRESETS


@dataclass
class RewardStep:
    reward: float
    report_score: float  # the score the reward is computed from (held at the last good one when flagged)
    length_score: float
    delta_score: float
    delta_length: float
    chars: int
    judge: JudgeResult  # the raw judgment, components and flag included
    score_held: bool = False  # the judge was flagged and hold_score_on_flag kept the previous score

    def as_dict(self) -> dict[str, Any]:
        """Flat numbers for `infos` and loggers."""
        out = {
            "reward": self.reward,
            "report_score": self.report_score,
            "length_score": self.length_score,
            "delta_score": self.delta_score,
            "delta_length": self.delta_length,
            "chars": self.chars,
            "judge_score": self.judge.score,
            "judge_flagged": self.judge.flagged,
            "judge_calls": self.judge.calls,
            "score_held": self.score_held,
        }
        out.update({f"judge/{k}": v for k, v in self.judge.components.items()})
        if self.judge.reason:
            out["judge_reason"] = self.judge.reason
        return out


@dataclass
class RewardTracker:
    """Per-episode reward bookkeeping around a (possibly shared) judge.

    `hold_score_on_flag`: when the judge is flagged (a call failed and a fallback stood
    in), the score term of the reward is 0 and the previous score is kept, so a parse or
    transport hiccup never becomes reward; the next good judgment pays the difference.
    """

    judge: Judge
    w_score: float = 1.0
    w_length: float = 1.0
    length_target: float = LENGTH_PRESETS["smollm2_cpu"][0]
    length_width: float = LENGTH_PRESETS["smollm2_cpu"][1]
    hold_score_on_flag: bool = True
    initial_score: float = 0.0  # the empty report's score
    history: list[RewardStep] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.length_width <= 0:
            raise ValueError(f"length_width must be positive, got {self.length_width}")
        self.reset()

    def reset(self) -> None:
        self.prev_score = float(self.initial_score)
        self.prev_length = length_score(0, self.length_target, self.length_width)
        self.history = []

    def length_score(self, chars: int) -> float:
        return length_score(chars, self.length_target, self.length_width)

    async def after_append(self, report: ReportState, ledger: TokenLedger | None = None) -> RewardStep:
        """Score the report as it now stands and return the reward earned since the last call.

        TokenBudgetExceeded from the judge propagates: the env ends the episode.
        """
        result = await self.judge.score(report, ledger=ledger)
        return self.record(result, report.chars)

    def record(self, result: JudgeResult, chars: int) -> RewardStep:
        """The reward for an already computed judgment (for callers that scored themselves)."""
        held = result.flagged and self.hold_score_on_flag
        score = self.prev_score if held else float(result.score)
        length = self.length_score(chars)
        d_score, d_length = score - self.prev_score, length - self.prev_length
        step = RewardStep(
            reward=self.w_score * d_score + self.w_length * d_length,
            report_score=score,
            length_score=length,
            delta_score=d_score,
            delta_length=d_length,
            chars=int(chars),
            judge=result,
            score_held=held,
        )
        self.prev_score, self.prev_length = score, length
        self.history.append(step)
        return step
