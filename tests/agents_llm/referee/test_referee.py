"""The referee flags each kind of degradation on hand-written sections, and stays silent on good,
grounded ones (hashing embedding: fast, deterministic)."""

from __future__ import annotations

import pytest

from agents_llm.judges import RewardTracker
from agents_llm.referee import (
    FLAG_KINDS,
    JUDGE_FALLBACK,
    MARKUP,
    PADDING,
    PROMPT_ECHO,
    REPETITION,
    SCORE_JUMP,
    UNSUPPORTED,
    Referee,
    RefereeConfig,
    flag_counts,
    grounder_for,
    make_referee_config,
)
from agents_llm.report_state import ReportState

from .sections import (
    CHANGELOG_CHUNK,
    CODE_JUNK,
    FILLER,
    GOOD_LOOP,
    GOOD_TASKS,
    LOOP_CHUNK,
    LOOPING_PHRASE,
    OFF_TOPIC,
    PROMPT_ECHO as ECHO_TEXT,
    STOCK,
    STOCK_LOOPED,
    TASK_CHUNK,
    TOPIC,
    append,
    hashing_judge,
)


def referee(**kw) -> Referee:
    kw.setdefault("penalize", True)
    return Referee(RefereeConfig(**kw), grounder=hashing_judge())


def kinds(flags) -> list[str]:
    return sorted(f.kind for f in flags)


def review_append(ref: Referee, report: ReportState, markdown: str, *sources, outputs=None):
    section = append(report, markdown, *sources)
    return ref.review_round(report, outputs=outputs or {}, changed_section=section.id)


def test_good_grounded_sections_raise_no_flag():
    ref, report = referee(), ReportState(TOPIC)
    assert review_append(ref, report, GOOD_LOOP, LOOP_CHUNK) == []
    assert review_append(ref, report, GOOD_TASKS, TASK_CHUNK) == []
    # ...nor on the agents' outputs that carried them
    assert ref.review_round(report, outputs={"DataAnalyst": GOOD_TASKS, "Researcher": TASK_CHUNK.text}) == []


@pytest.mark.parametrize("text", [STOCK_LOOPED, LOOPING_PHRASE])
def test_degenerate_repetition_within_one_text(text):
    flags = review_append(referee(), ReportState(TOPIC), text, LOOP_CHUNK)
    rep = [f for f in flags if f.kind == REPETITION]
    assert len(rep) == 1 and rep[0].target == "S1" and rep[0].reason and rep[0].evidence


def test_stock_sentence_repeated_across_sections():
    ref, report = referee(), ReportState(TOPIC)
    first = review_append(ref, report, STOCK, CHANGELOG_CHUNK)
    assert REPETITION not in kinds(first)  # once is not a repeat (it is unsupported: see below)
    second = review_append(ref, report, STOCK, CHANGELOG_CHUNK)
    rep = [f for f in second if f.kind == REPETITION]
    assert rep and rep[0].target == "S2" and "The sky is blue." in str(rep[0].evidence)


def test_prompt_echo_in_a_section_and_in_an_agent_output():
    ref, report = referee(), ReportState(TOPIC)
    flags = review_append(ref, report, ECHO_TEXT, LOOP_CHUNK)
    echo = [f for f in flags if f.kind == PROMPT_ECHO]
    assert echo and echo[0].target == "S1" and echo[0].on_report
    out = ref.review_round(report, outputs={"LeadArchitect": ECHO_TEXT})
    assert [(f.kind, f.target, f.on_report) for f in out] == [(PROMPT_ECHO, "LeadArchitect", False)]


def test_topic_words_alone_are_not_an_echo():
    # The topic reaches every prompt, but it is the subject, not our instructions.
    flags = review_append(referee(), ReportState(TOPIC), f"## {TOPIC}\n" + GOOD_LOOP.split("\n", 1)[1], LOOP_CHUNK)
    assert flags == []


# The hashing embedding's floor is low: a stock sentence or generic filler shares "the"/"is" with any
# chunk and clears it. The MiniLM tests (test_referee_minilm.py) cover those cases.
@pytest.mark.parametrize("text,source", [(OFF_TOPIC, LOOP_CHUNK), (OFF_TOPIC, TASK_CHUNK)])
def test_citations_that_do_not_support_the_text(text, source):
    flags = review_append(referee(), ReportState(TOPIC), text, source)
    bad = [f for f in flags if f.kind == UNSUPPORTED]
    assert bad and bad[0].evidence["unsupported"] and bad[0].evidence["floor"] > 0
    assert bad[0].evidence["sources"] == [source.label()]


def test_a_section_that_cites_nothing_is_the_judge_s_business_not_an_unsupported_citation():
    assert UNSUPPORTED not in kinds(review_append(referee(), ReportState(TOPIC), OFF_TOPIC))


def test_score_jump_without_a_text_change():
    ref, report = referee(), ReportState(TOPIC)
    append(report, GOOD_LOOP, LOOP_CHUNK)
    assert ref.review_round(report, scored={"judge_score": 0.40}) == []
    jump = ref.review_round(report, scored={"judge_score": 0.55})
    assert kinds(jump) == [SCORE_JUMP] and jump[0].evidence["changed_chars"] == 0
    assert ref.review_round(report, scored={"judge_score": 0.555}) == []  # within the tolerance
    report.sections[0].content += "."  # a one-character edit that doubles the score is a jump too
    assert kinds(ref.review_round(report, scored={"judge_score": 0.9})) == [SCORE_JUMP]


def test_padding_length_up_score_flat_or_down_but_not_for_a_good_section():
    ref, report = referee(), ReportState(TOPIC)
    append(report, GOOD_LOOP, LOOP_CHUNK)
    ref.review_round(report, scored={"judge_score": 0.50})
    append(report, GOOD_TASKS, TASK_CHUNK)
    assert ref.review_round(report, scored={"judge_score": 0.60}) == []
    filler = append(report, FILLER)
    pad = ref.review_round(report, changed_section=filler.id, scored={"judge_score": 0.58})
    assert kinds(pad) == [PADDING] and pad[0].evidence["chars"] > pad[0].evidence["chars_before"]


def test_judge_fallback_is_flagged_with_its_reason():
    ref, report = referee(), ReportState(TOPIC)
    append(report, GOOD_LOOP, LOOP_CHUNK)
    flags = ref.review_round(
        report,
        scored={
            "judge_score": 0.0,
            "judge_flagged": True,
            "judge_reason": "macro judge: malformed JSON after 2 attempts",
        },
    )
    assert kinds(flags) == [JUDGE_FALLBACK] and "malformed JSON" in flags[0].reason


def test_penalty_caps_a_flagged_round_at_zero_and_spares_agent_output_flags():
    ref = referee(penalty=0.1)
    report = ReportState(TOPIC)
    flags = review_append(ref, report, STOCK_LOOPED, CHANGELOG_CHUNK, outputs={"LeadArchitect": ECHO_TEXT})
    on_report = [f for f in flags if f.on_report]
    assert on_report and all(f.penalised for f in on_report)
    assert [f.penalised for f in flags if not f.on_report] == [False]
    assert ref.adjust(0.3, flags) == pytest.approx(-0.1 * len(on_report))
    assert ref.adjust(-0.2, flags) == pytest.approx(-0.2 - 0.1 * len(on_report))
    assert ref.adjust(0.3, [f for f in flags if not f.on_report]) == 0.3  # diagnostics cost nothing
    off = referee(penalize=False)
    flags = review_append(off, ReportState(TOPIC), STOCK_LOOPED, CHANGELOG_CHUNK)
    assert flags and off.adjust(0.3, flags) == 0.3
    counts = flag_counts(flags)
    assert set(counts) == {f"referee/{k}" for k in FLAG_KINDS} | {
        "referee/flags",
        "referee/report_flags",
        "referee/agent_flags",
    }
    assert counts["referee/repetition"] == 1 and counts["referee/flags"] == len(flags)


def per_append_rewards(judge, appends):
    """(reward after the referee, flag kinds) of each append in turn, as the env computes them."""
    tracker, ref, report = RewardTracker(judge), Referee({"penalize": True}, grounder=judge), ReportState(TOPIC)
    out = []
    for markdown, source in appends:
        section = append(report, markdown, source)
        step = tracker.record(judge.score_sync(report), report.chars)
        flags = ref.review_round(report, changed_section=section.id, scored=step.as_dict())
        out.append((ref.adjust(step.reward, flags), kinds(flags)))
    return out


def test_per_append_rewards_junk_first_earns_nothing_good_later_earns_positive():
    """Per-append rewards with hand-written sections: a junk first append (off-topic text citing a
    chunk) earns nothing, a later good, grounded, non-redundant section earns a positive reward."""
    (junk, junk_flags), (good, good_flags) = per_append_rewards(
        hashing_judge(), [(OFF_TOPIC, LOOP_CHUNK), (GOOD_TASKS, TASK_CHUNK)]
    )
    assert junk <= 0.0 and UNSUPPORTED in junk_flags
    assert good > 0.05 and good_flags == []


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="unknown key.*penalty_typo"):
        make_referee_config({"penalty_typo": 1})
    with pytest.raises(ValueError, match="env.referee.echo_share"):
        make_referee_config({"echo_share": 0})
    assert make_referee_config(None) == RefereeConfig()


def test_grounder_for_another_judge_uses_the_store_embedding():
    from rag.embeddings import HashingEmbedding

    judge = hashing_judge()
    assert grounder_for(judge) is judge
    other = grounder_for(object(), HashingEmbedding(dim=64))
    from agents_llm.text.bands import GROUNDING_BANDS

    assert other is not None and other.grounding_floor == pytest.approx(GROUNDING_BANDS["hashing"][0])
    assert grounder_for(object(), None) is None


def test_disabled_referee_says_nothing():
    ref = referee(enabled=False)
    assert review_append(ref, ReportState(TOPIC), STOCK_LOOPED, CHANGELOG_CHUNK) == []


def test_per_append_rewards_code_junk_first_earns_nothing_good_later_earns_positive():
    """The default run's junk first append (code and HTML quoting its chunk, which the old referee let
    through at +0.399): flagged as markup and paid nothing; the good, grounded sections after it pay."""
    judge = hashing_judge()
    report = ReportState(TOPIC)
    append(report, CODE_JUNK, LOOP_CHUNK)
    assert judge.score_sync(report).score == 0.0  # no prose: no content for the judge either
    (junk, junk_flags), (good, good_flags), (good2, good2_flags) = per_append_rewards(
        judge, [(CODE_JUNK, LOOP_CHUNK), (GOOD_LOOP, LOOP_CHUNK), (GOOD_TASKS, TASK_CHUNK)]
    )
    assert junk <= 0.0 and MARKUP in junk_flags and PROMPT_ECHO not in junk_flags
    assert good > 0.05 and good_flags == []
    assert good2 > 0.0 and good2_flags == []
