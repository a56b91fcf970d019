"""The judge validity suite: the reference judge orders good reports above their degradations.

Fast run: the hashing embedding. Slow run: MiniLM, the default. The figures per topic
and per degradation are printed by experiments/protocol/bench_judge.py.
"""

from __future__ import annotations

import inspect
import platform

import pytest

from agents_llm.judges import make_judge
from agents_llm.judges.validity import (
    DEGRADATIONS,
    JUNK,
    JUNK_CEILING,
    load_good_reports,
    load_heldout_reports,
    other_report,
    score_suite,
    violations,
)
from envs.report.corpora import STDLIB_MODULES, stdlib_documents
from envs.report.tasks import load_tasks

REQUIRED_KINDS = {
    "empty",
    "stock_sentence",
    "prompt_echo",
    "headings_only",
    "off_topic",
    "wrong_citations",
    "citations_removed",
    "sentences_repeated",
    "sections_duplicated",
    "first_paragraph",
    "padded",
    "shuffled_headings",
    "junk_headings",
    "off_topic_appended",
    "inside_other_report",
    "first_sentence",
    "contradicted_facts",
    "shuffled_copy",
    "outline_only",
    "filler_appended",
}
# Known and measured: the judge's grounding cannot tell a section written in other words from an
# ungrounded one (hashing: shared words only; MiniLM: on 4 of 12 topics), so appending one still
# lowers the score; the strict xfails below say so until it is fixed.
SYNONYM_BLIND = "appending a good section in other words"


@pytest.fixture(scope="module")
def reports():
    return load_good_reports()


def test_twelve_good_multi_section_reports_on_shipped_topics(reports):
    tasks = {t.id: t for t in load_tasks(split="all")}
    assert len(reports) >= 12
    for good in reports:
        assert good.task_id in tasks and good.topic == tasks[good.task_id].topic
        assert list(good.key_terms) == list(tasks[good.task_id].key_terms)
        assert len(good.sections) >= 3 and all(s.sources for s in good.sections)
        assert good.extra_section.sources and good.extra_section.title not in {s.title for s in good.sections}


@pytest.mark.skipif(
    platform.python_version_tuple()[:2] != ("3", "11"),
    reason="the cited passages were cut from Python 3.11's docstrings",
)
def test_every_cited_passage_is_verbatim_text_of_the_default_corpus(reports):
    cited = {src.source for good in reports for src in good.sources.values()}
    modules = [m for m in STDLIB_MODULES if f"{m}.md" in cited]
    corpus = stdlib_documents(modules)
    for good in reports:
        for sid, src in good.sources.items():
            assert src.text in corpus[src.source], f"{good.task_id}: source {sid} is not in {src.source}"


def test_degradations_are_named_documented_and_deterministic(reports):
    assert REQUIRED_KINDS <= set(DEGRADATIONS)
    assert set(JUNK) <= set(DEGRADATIONS)
    good, other = reports[0], other_report(reports, 0)
    for name, fn in DEGRADATIONS.items():
        assert inspect.getdoc(fn), f"degradation {name} has no docstring"
        a, b = fn(good, other), fn(good, other)
        assert a.to_dict() == b.to_dict()
        assert a.to_markdown() != good.state().to_markdown(), f"{name} leaves the report unchanged"


def _judge_scores(embedding: str, reports=None):
    judge = make_judge({"kind": "reference", "embedding": embedding})
    return score_suite(lambda report: judge.score_sync(report).score, reports)


def _assert_valid(results, topics: int = 12, blind: str = ""):
    assert len(results) >= topics
    problems = [p for p in violations(results) if not (blind and blind in p)]
    assert not problems, "\n".join(problems)
    for r in results:  # what the orderings above mean, spelled out
        assert all(r.degraded[k] < JUNK_CEILING for k in JUNK)
        assert max(r.degraded.values()) < r.good < r.appended_good and r.appended_duplicate < r.good
        assert r.prefixes and max(r.prefixes.values()) <= r.good  # more good text never scores less


def test_reference_judge_passes_the_validity_suite_with_the_hashing_embedding():
    _assert_valid(_judge_scores("hashing"), blind=SYNONYM_BLIND)


@pytest.mark.slow
def test_reference_judge_passes_the_validity_suite_with_minilm():
    _assert_valid(_judge_scores("minilm"), blind=SYNONYM_BLIND)


def test_held_out_topics_are_outside_the_corpus_and_complete():
    held_out = load_heldout_reports()
    tasks = {t.id for t in load_tasks(split="all")}
    assert len(held_out) >= 6 and not tasks & {g.task_id for g in held_out}
    for good in held_out + load_good_reports():
        assert len(good.contradicted) >= 3 and good.synonym_section is not None, good.task_id
        assert len(good.sections) >= 3 and all(s.sources for s in good.sections)


@pytest.mark.parametrize("embedding", ["hashing", pytest.param("minilm", marks=pytest.mark.slow)])
@pytest.mark.xfail(strict=True, reason="the judge's grounding cannot yet credit a true section in other words")
def test_a_section_in_other_words_raises_the_score(embedding):
    problems = violations(_judge_scores(embedding, load_heldout_reports() + load_good_reports()))
    assert not [p for p in problems if SYNONYM_BLIND in p]
