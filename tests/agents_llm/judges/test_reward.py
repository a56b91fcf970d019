import asyncio
import math

import pytest

from agents_llm.judges import JudgeResult, RewardTracker, length_score, make_reward_tracker
from agents_llm.report_state import ReportState


def test_length_score_at_target_and_one_width_away():
    assert length_score(25000) == 1.0
    assert length_score(16500) == pytest.approx(math.exp(-0.5))
    assert length_score(33500) == pytest.approx(math.exp(-0.5))
    assert length_score(8000) == pytest.approx(math.exp(-2.0))
    assert length_score(0) == pytest.approx(math.exp(-0.5 * (25000 / 8500) ** 2))


def test_length_score_target_and_width_are_configurable():
    assert length_score(1000, target=1000, width=10) == 1.0
    assert length_score(1020, target=1000, width=10) == pytest.approx(math.exp(-2.0))
    with pytest.raises(ValueError, match="width"):
        length_score(1, width=0)


class ScoresInOrder:
    """A judge that returns preset results, one per call."""

    kind = "fixed"

    def __init__(self, results):
        self.results = list(results)

    async def score(self, report, *, ledger=None):
        return self.results.pop(0)


def _report_of_length(chars: int) -> ReportState:
    report = ReportState("topic")
    report.append("Body", "x" * chars)
    return report


def test_rewards_of_a_sequence_of_appends_are_the_weighted_deltas():
    judge = ScoresInOrder([JudgeResult(0.2), JudgeResult(0.5), JudgeResult(0.4)])
    tracker = RewardTracker(
        judge, w_score=2.0, w_length=0.5, length_target=25000, length_width=8500, length_measure="chars"
    )
    lengths = [5000, 16500, 25000]
    steps = [asyncio.run(tracker.after_append(_report_of_length(n))) for n in lengths]

    ls0 = math.exp(-0.5 * (25000 / 8500) ** 2)  # the empty report
    ls1 = math.exp(-0.5 * (20000 / 8500) ** 2)
    ls2 = math.exp(-0.5)
    ls3 = 1.0
    assert steps[0].reward == pytest.approx(2.0 * (0.2 - 0.0) + 0.5 * (ls1 - ls0))
    assert steps[1].reward == pytest.approx(2.0 * (0.5 - 0.2) + 0.5 * (ls2 - ls1))
    assert steps[2].reward == pytest.approx(2.0 * (0.4 - 0.5) + 0.5 * (ls3 - ls2))
    assert [s.report_score for s in steps] == [0.2, 0.5, 0.4]
    assert steps[2].length_score == 1.0 and steps[2].chars == 25000
    # The rewards telescope: their sum is the change from the empty report to the last one.
    assert sum(s.reward for s in steps) == pytest.approx(2.0 * 0.4 + 0.5 * (1.0 - ls0))


def test_flagged_judgment_holds_the_score_and_the_next_good_one_pays_the_difference():
    judge = ScoresInOrder(
        [JudgeResult(0.3), JudgeResult(0.0, flagged=True, reason="macro: LLMOutputError"), JudgeResult(0.6)]
    )
    tracker = RewardTracker(judge, w_score=1.0, w_length=0.0)
    steps = [asyncio.run(tracker.after_append(_report_of_length(1000))) for _ in range(3)]
    assert [s.reward for s in steps] == pytest.approx([0.3, 0.0, 0.3])
    assert [s.score_held for s in steps] == [False, True, False]
    assert steps[1].report_score == 0.3 and steps[1].judge.reason == "macro: LLMOutputError"


def test_flagged_judgment_counts_when_holding_is_off():
    judge = ScoresInOrder([JudgeResult(0.3), JudgeResult(0.0, flagged=True, reason="failed")])
    tracker = RewardTracker(judge, w_score=1.0, w_length=0.0, hold_score_on_flag=False)
    steps = [asyncio.run(tracker.after_append(_report_of_length(1000))) for _ in range(2)]
    assert [s.reward for s in steps] == pytest.approx([0.3, -0.3])


def test_tracker_from_config_and_reset():
    judge = ScoresInOrder([JudgeResult(0.5), JudgeResult(0.5)])
    tracker = make_reward_tracker(judge, {"kind": "reference", "w_score": 3.0, "w_length": 0.0})
    first = asyncio.run(tracker.after_append(_report_of_length(10)))
    tracker.reset()  # a new episode starts from the empty report again
    again = asyncio.run(tracker.after_append(_report_of_length(10)))
    assert first.reward == pytest.approx(1.5) and again.reward == pytest.approx(1.5)
    assert len(tracker.history) == 1
