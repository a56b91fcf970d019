import asyncio

import numpy as np
import pytest

from agents_llm.judges import ReferenceJudge, make_judge
from agents_llm.judges.reference import GROUNDING_BANDS
from agents_llm.report_state import ReportState, SourceRef
from rag.embeddings import HashingEmbedding

SOURCE = SourceRef("review.pdf", 4, "c1",
                   "Garnet-type LLZO electrolytes reach ionic conductivities near one millisiemens per centimetre. "
                   "Lithium dendrites still grow along grain boundaries at high current densities. "
                   "Interfacial resistance falls when the anode is coated with a thin alumina layer.")
GROUNDED = ("Garnet-type LLZO electrolytes reach ionic conductivities near one millisiemens per centimetre. "
            "Lithium dendrites still grow along grain boundaries at high current densities. "
            "Interfacial resistance falls when the anode is coated with a thin alumina layer.")
UNGROUNDED = ("Marketing teams expect rapid adoption across many consumer segments next year. "
              "Several startups announced ambitious partnerships with automakers recently. "
              "Investors remain optimistic about future valuations in this sector.")


def judge(**kw) -> ReferenceJudge:
    kw.setdefault("grounding_floor", GROUNDING_BANDS["hashing"][0])
    kw.setdefault("grounding_ceiling", GROUNDING_BANDS["hashing"][1])
    return ReferenceJudge(HashingEmbedding(dim=512), **kw)


def report_with(*sections) -> ReportState:
    report = ReportState("Solid-state batteries for electric vehicles")
    for title, content, sources in sections:
        report.append(title, content, sources)
    return report


def test_same_input_same_score_also_across_judge_instances():
    report = report_with(("Electrolytes", GROUNDED, [SOURCE]), ("Market", UNGROUNDED, []))
    a = judge().score_sync(report)
    b = judge().score_sync(report)
    c = asyncio.run(judge().score(report))
    assert a.score == b.score == c.score and a.components == b.components == c.components
    assert 0.0 < a.score < 1.0 and a.calls == 0 and not a.flagged
    assert set(a.components) == {"coverage", "grounding", "redundancy", "structure"}


def test_grounded_section_scores_higher_on_grounding_than_an_ungrounded_one():
    grounded = judge().score_sync(report_with(("Electrolytes", GROUNDED, [SOURCE])))
    ungrounded = judge().score_sync(report_with(("Electrolytes", UNGROUNDED, [SOURCE])))
    uncited = judge().score_sync(report_with(("Electrolytes", GROUNDED, [])))
    assert grounded.components["grounding"] > 0.9
    assert ungrounded.components["grounding"] < 0.2
    assert uncited.components["grounding"] == 0.0  # nothing cited, nothing grounded
    assert grounded.score > ungrounded.score


def test_paraphrase_is_partly_grounded():
    paraphrase = ("LLZO garnet electrolytes conduct lithium ions at roughly one millisiemens per centimetre. "
                  "At high current densities dendrites grow along the grain boundaries.")
    g = judge().score_sync(report_with(("Electrolytes", paraphrase, [SOURCE]))).components["grounding"]
    full = judge().score_sync(report_with(("Electrolytes", GROUNDED, [SOURCE]))).components["grounding"]
    assert 0.0 < g < full


def test_duplicated_sentences_lower_redundancy():
    clean = judge().score_sync(report_with(("Electrolytes", GROUNDED, [SOURCE]), ("Market", UNGROUNDED, [])))
    repeated = judge().score_sync(report_with(("Electrolytes", GROUNDED, [SOURCE]),
                                              ("Market", UNGROUNDED + " " + GROUNDED, [])))
    near = judge().score_sync(report_with(
        ("Electrolytes", GROUNDED, [SOURCE]),
        ("Market", UNGROUNDED + " Garnet-type LLZO electrolytes reach ionic conductivities near one "
                                "millisiemens per centimetre!", [])))
    assert clean.components["redundancy"] == 1.0
    g, u = len(GROUNDED) - 2, len(UNGROUNDED) - 2  # characters in each block's three sentences
    assert repeated.components["redundancy"] == pytest.approx(1 - g / (2 * g + u))  # the second copy counts
    assert near.components["redundancy"] < 1.0  # a near-duplicate (punctuation aside) counts too
    assert repeated.score < clean.score


def test_coverage_rises_when_topic_terms_appear():
    off_topic = judge().score_sync(report_with(("Market", UNGROUNDED, [])))
    some = judge().score_sync(report_with(("Market", UNGROUNDED + " Electric vehicles need better packs.", [])))
    all_terms = judge().score_sync(report_with(
        ("Market", UNGROUNDED + " Electric vehicles need solid-state batteries.", [])))
    assert off_topic.components["coverage"] == 0.0
    assert 0.0 < some.components["coverage"] < all_terms.components["coverage"] == 1.0


def test_configured_key_terms_count_towards_coverage():
    report = report_with(("Electrolytes", GROUNDED, [SOURCE]))
    plain = judge().score_sync(report).components["coverage"]
    with_terms = judge(key_terms=["dendrites", "sulfide electrolytes", "recycling"]).score_sync(report)
    # Topic terms (solid, state, battery, electric, vehicle) are absent; dendrite and electrolyte are present.
    assert plain == 0.0
    assert with_terms.components["coverage"] == pytest.approx(2 / 8)


def test_structure_prefers_more_balanced_titled_sections():
    one = judge(target_sections=3).score_sync(report_with(("Electrolytes", GROUNDED, [SOURCE])))
    three = judge(target_sections=3).score_sync(report_with(
        ("Electrolytes", GROUNDED, [SOURCE]), ("Market", UNGROUNDED, []), ("Outlook", GROUNDED[:200], [])))
    lopsided = judge(target_sections=3).score_sync(report_with(
        ("Electrolytes", GROUNDED * 5, [SOURCE]), ("Market", UNGROUNDED[:60], []), ("", GROUNDED[:60], [])))
    assert three.components["structure"] > one.components["structure"]
    assert three.components["structure"] > lopsided.components["structure"]


def test_any_embedding_callable_is_accepted_and_only_new_texts_are_embedded():
    seen: list[str] = []
    hashing = HashingEmbedding(dim=256)

    def embed(texts):
        seen.extend(texts)
        return hashing.embed_documents(texts)
    j = ReferenceJudge(embed)
    report = report_with(("Electrolytes", GROUNDED, [SOURCE]))
    j.score_sync(report)
    first = len(seen)
    report.append("Market", UNGROUNDED)
    j.score_sync(report)
    assert first > 0 and len(seen) - first == 3  # the three new sentences only


def test_make_judge_builds_the_reference_judge_with_the_hashing_embedding():
    j = make_judge({"kind": "reference", "embedding": "hashing", "hashing_dim": 128})
    result = j.score_sync(report_with(("Electrolytes", GROUNDED, [SOURCE])))
    assert isinstance(j, ReferenceJudge) and result.components["grounding"] > 0.9


def test_empty_report_scores_zero():
    assert judge().score_sync(ReportState("x")).score == 0.0


@pytest.mark.slow
def test_minilm_default_embedding_grounding_moves_the_right_way():
    j = make_judge({"kind": "reference"})  # embedding=minilm through rag, with its grounding band
    paraphrase = "At room temperature, LLZO garnet electrolytes conduct lithium ions at about 1 mS/cm."
    other_fact = "Sulfide electrolytes are sensitive to moisture and must be handled in dry rooms."
    grounded = j.score_sync(report_with(("Electrolytes", paraphrase, [SOURCE])))
    unsupported = j.score_sync(report_with(("Electrolytes", other_fact, [SOURCE])))
    off_topic = j.score_sync(report_with(("Electrolytes", UNGROUNDED, [SOURCE])))
    assert grounded.components["grounding"] > 0.8
    assert unsupported.components["grounding"] < 0.3
    assert off_topic.components["grounding"] < 0.1
    assert grounded.score == j.score_sync(report_with(("Electrolytes", paraphrase, [SOURCE]))).score
