"""The referee's grounding check with MiniLM (the default embedding): slow, it loads the model."""

from __future__ import annotations

import pytest

from agents_llm.judges import ReferenceJudge
from agents_llm.referee import UNSUPPORTED, Referee
from agents_llm.report_state import ReportState

from .sections import (
    CHANGELOG_CHUNK,
    FILLER,
    GOOD_LOOP,
    GOOD_TASKS,
    LOOP_CHUNK,
    OFF_TOPIC,
    STOCK,
    TASK_CHUNK,
    TOPIC,
    append,
)
from .test_referee import per_append_rewards

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm_judge():
    from rag.embeddings import MiniLMEmbedding

    return ReferenceJudge(MiniLMEmbedding())


@pytest.mark.parametrize("text,source", [(STOCK, CHANGELOG_CHUNK), (OFF_TOPIC, LOOP_CHUNK), (FILLER, TASK_CHUNK)])
def test_unsupported_citations_with_minilm(minilm_judge, text, source):
    report = ReportState(TOPIC)
    section = append(report, text, source)
    flags = Referee(grounder=minilm_judge).review_round(report, changed_section=section.id)
    assert UNSUPPORTED in [f.kind for f in flags]


@pytest.mark.parametrize("text,source", [(GOOD_LOOP, LOOP_CHUNK), (GOOD_TASKS, TASK_CHUNK)])
def test_grounded_sections_pass_with_minilm(minilm_judge, text, source):
    report = ReportState(TOPIC)
    section = append(report, text, source)
    assert Referee(grounder=minilm_judge).review_round(report, changed_section=section.id) == []


def test_per_append_rewards_stock_sentence_first_then_good_sections(minilm_judge):
    """The default run's failure: "The sky is blue." citing a changelog earns nothing; the good,
    grounded sections after it earn a positive reward and raise no flag."""
    rewards = per_append_rewards(
        minilm_judge, [(STOCK, CHANGELOG_CHUNK), (GOOD_LOOP, LOOP_CHUNK), (GOOD_TASKS, TASK_CHUNK)]
    )
    (junk, junk_flags), (good, good_flags), (good2, good2_flags) = rewards
    print("per-append rewards (MiniLM reference judge, after the referee):", rewards)
    assert junk <= 0.0 and UNSUPPORTED in junk_flags
    assert good > 0.0 and good_flags == []
    assert good2 > 0.0 and good2_flags == []
