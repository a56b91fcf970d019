"""The reward the env emits after each round that appended.

    r = w_score * (report_score - previous report_score)
      + w_length * (length_score - previous length_score)

    length_score = exp(-0.5 * ((L - length_target) / length_width)^2)

One RewardTracker per episode: it remembers the previous scores (starting from the
empty report), so several envs sharing one judge never share reward state.

What L measures (`length_measure`, config key `judge.length_measure`):

- ``supported`` (the default): the characters of the report's supported, distinct prose,
  `ReferenceJudge.supported_chars`: every content sentence the reference judge reads
  (no headings, code or markup) counts with its length times its grounding in the
  chunks its section cites, and a sentence repeating an earlier one counts nothing. A
  length term on raw characters pays for any text: with the referee's penalty off,
  appending junk (a stock sentence repeated, the prompt echoed, headings, filler) raised
  the reward through it although the report score did not move. Measured this way the
  length term pays for length only where there is supported content, and one append's
  length reward is bounded by the length of what it adds that its sources back. With
  the LLM judge, the supported characters come from a reference judge on the run's
  embedding (`grounder`, the referee's), so the measure is the same for every judge.
- ``chars``: the raw characters of the section texts (`ReportState.chars`), the original
  report writer's measure, kept for replication.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Optional

from ..backends.accounting import TokenLedger
from ..report_state import ReportState
from .base import Judge, JudgeResult, length_score
from .config import LENGTH_MEASURES, LENGTH_PRESETS


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
    length_chars: float = 0.0  # what the length score measured (supported or raw characters: length_measure)

    def as_dict(self) -> dict[str, Any]:
        """Flat numbers for `infos` and loggers."""
        out: dict[str, Any] = {
            "reward": self.reward,
            "report_score": self.report_score,
            "length_score": self.length_score,
            "delta_score": self.delta_score,
            "delta_length": self.delta_length,
            "chars": self.chars,
            "length_chars": self.length_chars,
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
    # "supported": supported, distinct prose characters (see the module docstring); "chars": raw characters.
    length_measure: str = "supported"
    # Measures supported characters for a judge that is not a reference judge (e.g. the LLM judge):
    # a ReferenceJudge, normally the referee's grounder on the run's embedding.
    grounder: Optional[Any] = None
    history: list[RewardStep] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.length_width <= 0:
            raise ValueError(f"length_width must be positive, got {self.length_width}")
        if self.length_measure not in LENGTH_MEASURES:
            raise ValueError(f"length_measure must be one of {LENGTH_MEASURES}, got {self.length_measure!r}")
        if self.grounder is None and self._measures_supported() and not hasattr(self.judge, "supported_chars"):
            raise ValueError(
                "length_measure='supported' needs a reference judge, or a grounder (a ReferenceJudge) beside a "
                f"{getattr(self.judge, 'kind', type(self.judge).__name__)} judge; or length_measure='chars'"
            )
        self.reset()

    def _measures_supported(self) -> bool:
        return self.length_measure == "supported" and self.w_length != 0.0

    def reset(self) -> None:
        self.prev_score = float(self.initial_score)
        self.prev_length = length_score(0, self.length_target, self.length_width)
        self.history = []

    def length_score(self, chars: float) -> float:
        return length_score(chars, self.length_target, self.length_width)

    async def after_append(self, report: ReportState, ledger: TokenLedger | None = None) -> RewardStep:
        """Score the report as it now stands and return the reward earned since the last call.

        TokenBudgetExceeded from the judge propagates: the env ends the episode.
        """
        result = await self.judge.score(report, ledger=ledger)
        length_chars = None
        if self._measures_supported() and "supported_chars" not in result.details:
            grounder: Any = self.grounder if self.grounder is not None else self.judge
            length_chars = await asyncio.to_thread(grounder.supported_chars, report)
        return self.record(result, report.chars, length_chars=length_chars)

    def length_chars(self, result: JudgeResult, chars: int) -> float:
        """What the length score measures for this judgment: supported characters, or raw `chars`."""
        if not self._measures_supported():
            return float(chars)
        if "supported_chars" not in result.details:
            raise ValueError(
                "length_measure='supported': this judgment carries no details['supported_chars']; "
                "pass length_chars (grounder.supported_chars(report)) or use after_append"
            )
        return float(result.details["supported_chars"])

    def record(self, result: JudgeResult, chars: int, *, length_chars: float | None = None) -> RewardStep:
        """The reward for an already computed judgment (for callers that scored themselves).

        `chars`: the report's raw characters; `length_chars`: what the length score measures,
        by default taken from the judgment (`length_measure`).
        """
        held = result.flagged and self.hold_score_on_flag
        score = self.prev_score if held else float(result.score)
        measured = self.length_chars(result, chars) if length_chars is None else float(length_chars)
        length = self.length_score(measured)
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
            length_chars=measured,
        )
        self.prev_score, self.prev_length = score, length
        self.history.append(step)
        return step
