"""The length term measures supported content, not raw characters (judge.length_measure).

With the referee's penalty off, a raw-character length term paid for junk: appending a
stock sentence, the prompt echoed, bare headings or filler raised the reward through the
Gaussian length score alone. Measured as supported, distinct prose characters
(`ReferenceJudge.supported_chars`), junk earns ~0 length reward and a good new section
still earns a positive one. On the six validity topics, hashing embedding.
"""

from __future__ import annotations

import pytest

from agents_llm.judges import RewardTracker, make_judge
from agents_llm.judges.validity import (
    FILLER,
    STOCK_SENTENCE,
    GoodSection,
    code_markup,
    headings_only,
    load_good_reports,
    other_report,
    prompt_echo,
)
from agents_llm.referee import Referee, RefereeConfig

REPORTS = load_good_reports()


@pytest.fixture(scope="module")
def judge():
    return make_judge({"kind": "reference", "embedding": "hashing"})


def junk_sections(i: int) -> dict[str, GoodSection]:
    """Junk to append after the first good section, each citing the second section's real chunks."""
    good, other = REPORTS[i], other_report(REPORTS, i)
    cited = good.sections[1].sources
    return {
        "stock_sentence": GoodSection(STOCK_SENTENCE, " ".join([STOCK_SENTENCE] * 6), cited),
        "prompt_echo": prompt_echo(good, other).sections[1],
        "headings_only": headings_only(good, other).sections[1],
        "filler": GoodSection("Further considerations", " ".join([FILLER] * 3), cited),
        "code_markup": code_markup(good, other).sections[1],
        "repeated_section": good.sections[0],
    }


def append_rewards(judge, i: int, appended: GoodSection, **tracker_kw):
    """(delta of the length score, reward after a penalty-off referee) of appending `appended`
    to the report's first good section, as the env computes them."""
    good = REPORTS[i]
    tracker = RewardTracker(judge, **tracker_kw)
    referee = Referee(RefereeConfig(penalize=False), grounder=judge)
    base = good.state(good.sections[:1])
    tracker.record(judge.score_sync(base), base.chars)
    report = good.state([good.sections[0], appended])
    step = tracker.record(judge.score_sync(report), report.chars)
    flags = referee.review_round(report, changed_section=report.sections[-1].id, scored=step.as_dict())
    return step.delta_length, referee.adjust(step.reward, flags)


@pytest.mark.parametrize("i", range(len(REPORTS)), ids=[r.task_id for r in REPORTS])
def test_junk_appended_earns_no_length_reward_and_a_good_section_does(judge, i):
    for kind, section in junk_sections(i).items():
        d_length, reward = append_rewards(judge, i, section)
        assert abs(d_length) < 0.02, (kind, d_length)  # measured at most 0.018 (filler, asyncio-tasks)
        assert reward < 0.01, (kind, reward)  # penalty off: nothing else pays for it either
    d_length, reward = append_rewards(judge, i, REPORTS[i].sections[1])
    assert d_length > 0.02 and reward > 0.02


@pytest.mark.parametrize("i", range(len(REPORTS)), ids=[r.task_id for r in REPORTS])
def test_raw_characters_stay_selectable_and_pay_for_junk(judge, i):
    # The original's measure, kept for replication: there the same junk earns length reward.
    paid = [append_rewards(judge, i, s, length_measure="chars")[0] for s in junk_sections(i).values()]
    assert sum(d > 0.02 for d in paid) >= 4, paid


def test_supported_chars_counts_grounded_distinct_prose_only(judge):
    good = REPORTS[0]
    one = good.state(good.sections[:1])
    supported = judge.supported_chars(one)
    assert 0 < supported <= one.chars
    assert judge.score_sync(one).details["supported_chars"] == pytest.approx(supported)
    twice = good.state([good.sections[0], good.sections[0]])
    assert judge.supported_chars(twice) == pytest.approx(supported)  # a repeat counts once
    assert judge.supported_chars(good.state([])) == 0.0
