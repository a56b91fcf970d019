"""The reference judge reads as a reader would: words by meaning, off-topic text worth nothing,
no literal word deciding, more good text never worth less.

Fast run: the hashing embedding on the validity suite's reports. Slow run: MiniLM.
"""

from __future__ import annotations

import pytest

from agents_llm.judges import ReferenceJudge, make_judge
from agents_llm.judges.validity import DEGRADATIONS, load_good_reports, other_report, prefixes_of
from agents_llm.report_state import ReportState, SourceRef


@pytest.fixture(scope="module")
def reports():
    return load_good_reports()


@pytest.fixture(scope="module")
def hashing():
    return make_judge({"kind": "reference", "embedding": "hashing"})


def _by_id(reports, task_id):
    return next(r for r in reports if r.task_id == task_id)


# -- 1. coverage by meaning ---------------------------------------------------------------
def test_inflections_and_derivations_share_a_stem_or_a_family():
    from agents_llm.text.terms import key_terms_of, same_family, stem

    assert len({stem(w) for w in ("caching", "cache", "caches", "cached")}) == 1
    assert len({stem(w) for w in ("compressing", "compression", "compressed")}) == 1
    assert same_family(stem("parsing"), stem("parser")) and same_family(stem("reading"), stem("reader"))
    assert not same_family(stem("use"), stem("user"))  # too short a stem to extend
    assert key_terms_of("Caching results", ["caches"]) == [stem("caching"), stem("results")]


SOURCE = SourceRef(
    "urllib.parse.md",
    None,
    "q1",
    "Parse a query given as a string argument. The quote function offers a cautious (not minimal) way to "
    "quote a string for most of these parts.",
)
TEXT = (
    "The parse_qs function parses a query given as a string argument into a dictionary. "
    "The quote function offers a cautious way to quote a string for most parts of a URL."
)


def _report(topic: str, text: str = TEXT, sources=(SOURCE,)) -> ReportState:
    report = ReportState(topic)
    report.append("Query strings and escapes", text, list(sources))
    return report


def test_a_topic_in_other_forms_of_its_words_is_covered_as_if_spelled_the_same(hashing):
    """'Parsing and quoting' is what the report says as 'parses', 'quote', 'quoted'."""
    spelled = hashing.score_sync(_report("Parse and quote URL query strings"))
    inflected = hashing.score_sync(_report("Parsing and quoting URL query strings"))
    assert inflected.details["mentioned"] == spelled.details["mentioned"] == 1.0
    assert inflected.components["coverage"] == pytest.approx(spelled.components["coverage"])
    assert inflected.score == pytest.approx(spelled.score, rel=0.02) and inflected.score > 0.5


@pytest.mark.slow
def test_minilm_covers_a_key_term_said_in_other_words():
    """With MiniLM a term is covered by a supported sentence that says it without its word
    ("timeout": "gives up ... after a given number of seconds")."""
    from agents_llm.text.terms import stem

    text = "The wait_for function gives up on an awaitable after a given number of seconds."
    report = ReportState("Waiting on asyncio awaitables", key_terms=["timeout"])
    report.append("Giving up in time", text, [SourceRef("asyncio.md", None, "w1", text)])
    judge = make_judge({"kind": "reference"})
    terms = judge._term_table(report)
    timeout = [i for i, (s, _) in enumerate(terms) if s == stem("timeout")][0]
    assert judge.term_match(terms, [text])[timeout, 0] > 0.5  # no shared word, the same meaning
    words_only = make_judge({"kind": "reference", "relevance_floor": 0.98, "relevance_ceiling": 0.99})
    assert judge.score_sync(report).components["coverage"] > words_only.score_sync(report).components["coverage"]


# -- 2. topicality per section ------------------------------------------------------------
def test_appending_another_topics_grounded_section_lowers_the_score(reports, hashing):
    """Every sentence of the appended section is copied from the chunk it cites: grounded, but not about
    the report's topic, so it is support for nothing."""
    shares = []
    for i, good in enumerate(reports):
        other = other_report(reports, i)
        base = good.state()
        for section in other.sections:
            mixed = good.state(list(good.sections) + [section])
            assert hashing.score_sync(mixed).score < hashing.score_sync(base).score, (good.task_id, section.title)
            # The length term: a section that shares one generic word with the topic ("module", "lists") is
            # half on topic by words, so part of it may count; most count nothing.
            added = hashing.supported_chars(mixed) - hashing.supported_chars(base)
            assert added <= 0.5 * len(section.content), (good.task_id, section.title, added)
            shares.append(added / len(section.content))
    assert sum(shares) / len(shares) < 0.05, shares


def test_a_section_about_another_topic_has_no_topicality(reports, hashing):
    foreign_all = []
    for i, good in enumerate(reports):
        state = DEGRADATIONS["off_topic_appended"](good, other_report(reports, i))
        topicality = hashing.score_sync(state).details["topicality"]
        own, foreign = topicality[: len(good.sections)], topicality[len(good.sections) :]
        assert min(own) == 1.0 and max(foreign) <= 0.5, (good.task_id, topicality)
        foreign_all += foreign
    assert sum(foreign_all) / len(foreign_all) < 0.1, foreign_all


# -- 3. no single literal word decides ----------------------------------------------------
@pytest.mark.parametrize(
    "task_id, topic",
    [
        ("url-parsing", "Parsing and quoting"),
        ("csv", "Reading and writing"),
        ("archives", "Compressing and archiving"),
        ("hashing-secrets", "Hashing"),
    ],
)
def test_a_good_report_keeps_its_score_when_the_topic_says_its_words_in_other_forms(reports, hashing, task_id, topic):
    """The topic's words appear in the report only as other forms (parse/parser, reader/writer,
    compression/archive, hash): a reader sees the report on topic, and so must the judge."""
    good = _by_id(reports, task_id)
    state = good.state(topic=topic)
    state.key_terms = []
    result = hashing.score_sync(state)
    assert result.score > 0.5, (task_id, result.components)
    assert min(result.components.values()) > 0.3, result.components


def test_junk_still_scores_near_zero(reports, hashing):
    for i, good in enumerate(reports):
        for kind in ("empty", "stock_sentence", "prompt_echo", "headings_only", "code_markup", "echo_rephrased"):
            assert hashing.score_sync(DEGRADATIONS[kind](good, other_report(reports, i))).score < 0.1


# -- 4. more is better when it is good ----------------------------------------------------
def test_a_good_report_scores_at_least_as_much_as_any_prefix_of_it(reports, hashing):
    for good in reports:
        whole = hashing.score_sync(good.state()).score
        for name, prefix in prefixes_of(good).items():
            assert hashing.score_sync(prefix).score <= whole, (good.task_id, name)
        cut = hashing.score_sync(DEGRADATIONS["first_sentence"](good, good)).score
        assert cut < whole, good.task_id


def test_a_worse_section_appended_lowers_the_score_and_a_good_one_raises_it(reports, hashing):
    for i, good in enumerate(reports):
        base = hashing.score_sync(good.state()).score
        assert hashing.score_sync(good.state(list(good.sections) + [good.extra_section])).score > base
        assert hashing.score_sync(DEGRADATIONS["off_topic_appended"](good, other_report(reports, i))).score < base


def test_a_prefix_is_a_prefix(reports):
    good = reports[0]
    cuts = list(prefixes_of(good).values())
    assert len(cuts) == len(good.sections) - 1  # one paragraph per section in the shipped reports
    assert all(good.state().to_markdown().startswith(c.to_markdown().rstrip()[:200]) for c in cuts)


# -- 5. every rule above on every topic with MiniLM --------------------------------------
@pytest.mark.slow
def test_minilm_orders_every_topic_by_the_rules(reports):
    judge = make_judge({"kind": "reference"})
    assert isinstance(judge, ReferenceJudge)
    for i, good in enumerate(reports):
        other = other_report(reports, i)
        whole = judge.score_sync(good.state()).score
        for name, prefix in prefixes_of(good).items():
            assert judge.score_sync(prefix).score <= whole, (good.task_id, name)
        for kind in ("off_topic_appended", "inside_other_report", "junk_headings", "first_sentence"):
            assert judge.score_sync(DEGRADATIONS[kind](good, other)).score < whole, (good.task_id, kind)
