import asyncio

import pytest

from agents_llm.judges import ReferenceJudge, make_judge
from agents_llm.judges.reading import content_sentences
from agents_llm.judges.reference import DEFAULT_WEIGHTS
from agents_llm.text.bands import GROUNDING_BANDS
from agents_llm.report_state import ReportState, SourceRef
from rag.embeddings import HashingEmbedding

SOURCE = SourceRef(
    "review.pdf",
    4,
    "c1",
    "Garnet-type LLZO electrolytes reach ionic conductivities near one millisiemens per centimetre. "
    "Lithium dendrites still grow along grain boundaries at high current densities. "
    "Interfacial resistance falls when the anode is coated with a thin alumina layer.",
)
GROUNDED = (
    "Garnet-type LLZO electrolytes reach ionic conductivities near one millisiemens per centimetre. "
    "Lithium dendrites still grow along grain boundaries at high current densities. "
    "Interfacial resistance falls when the anode is coated with a thin alumina layer."
)
UNGROUNDED = (
    "Marketing teams expect rapid adoption across many consumer segments next year. "
    "Several startups announced ambitious partnerships with automakers recently. "
    "Investors remain optimistic about future valuations in this sector."
)


def judge(**kw) -> ReferenceJudge:
    kw.setdefault("grounding_floor", GROUNDING_BANDS["hashing"][0])
    kw.setdefault("grounding_ceiling", GROUNDING_BANDS["hashing"][1])
    return ReferenceJudge(HashingEmbedding(dim=512), **kw)


TOPIC = "Solid-state electrolytes for lithium batteries"  # key terms: solid-state, electrolyte, lithium, battery


def report_with(*sections, topic: str = TOPIC) -> ReportState:
    report = ReportState(topic)
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
    w, c = DEFAULT_WEIGHTS, a.components
    assert a.score == pytest.approx(
        c["coverage"] ** w["coverage"]
        * c["grounding"] ** w["grounding"]
        * c["redundancy"] ** w["redundancy"]
        * (1 - w["structure"] + w["structure"] * c["structure"])
    )


def test_grounded_section_scores_higher_on_grounding_than_an_ungrounded_one():
    grounded = judge().score_sync(report_with(("Electrolytes", GROUNDED, [SOURCE])))
    ungrounded = judge().score_sync(report_with(("Electrolytes", UNGROUNDED, [SOURCE])))
    uncited = judge().score_sync(report_with(("Electrolytes", GROUNDED, [])))
    assert grounded.components["grounding"] > 0.9
    assert ungrounded.components["grounding"] < 0.2
    assert uncited.components["grounding"] == 0.0  # nothing cited, nothing grounded
    assert grounded.score > ungrounded.score


def test_paraphrase_is_partly_grounded():
    paraphrase = (
        "LLZO garnet electrolytes conduct lithium ions at roughly one millisiemens per centimetre. "
        "At high current densities dendrites grow along the grain boundaries."
    )
    g = judge().score_sync(report_with(("Electrolytes", paraphrase, [SOURCE]))).components["grounding"]
    full = judge().score_sync(report_with(("Electrolytes", GROUNDED, [SOURCE]))).components["grounding"]
    assert 0.0 < g < full


def test_duplicated_sentences_lower_redundancy():
    clean = judge().score_sync(report_with(("Electrolytes", GROUNDED, [SOURCE]), ("Market", UNGROUNDED, [])))
    repeated = judge().score_sync(
        report_with(("Electrolytes", GROUNDED, [SOURCE]), ("Market", UNGROUNDED + " " + GROUNDED, []))
    )
    near = judge().score_sync(
        report_with(
            ("Electrolytes", GROUNDED, [SOURCE]),
            (
                "Market",
                UNGROUNDED + " Garnet-type LLZO electrolytes reach ionic conductivities near one "
                "millisiemens per centimetre!",
                [],
            ),
        )
    )
    assert clean.components["redundancy"] == 1.0
    g, u = len(GROUNDED) - 2, len(UNGROUNDED) - 2  # characters in each block's three sentences
    assert repeated.components["redundancy"] == pytest.approx(1 - g / (2 * g + u))  # the second copy counts
    assert near.components["redundancy"] < 1.0  # a near-duplicate (punctuation aside) counts too
    assert repeated.score < clean.score


def test_coverage_counts_a_term_as_far_as_a_cited_chunk_supports_its_mention():
    topic = "Solid-state batteries for electric vehicles"  # solid-state, battery, electric, vehicle
    claim = " Electric vehicles need solid-state batteries with garnet electrolytes."
    off_topic = judge().score_sync(report_with(("Market", UNGROUNDED, []), topic=topic))
    mentioned = judge().score_sync(report_with(("Market", UNGROUNDED + claim, []), topic=topic))
    source = SourceRef("ev.pdf", 1, "c9", claim.strip())
    supported = judge().score_sync(report_with(("Market", UNGROUNDED + claim, [source]), topic=topic))
    assert off_topic.details["mentioned"] == 0.0 and off_topic.components["coverage"] == 0.0
    # Named but uncited: mentioned, not covered (an echo of the topic covers nothing).
    assert mentioned.details["mentioned"] == 1.0 and mentioned.components["coverage"] == 0.0
    assert supported.components["coverage"] > 0.5
    assert supported.score > mentioned.score == off_topic.score == 0.0


def test_topic_words_alone_do_not_ground_a_sentence():
    echo = "Task: write a report on solid-state electrolytes for lithium batteries."
    claim = "Garnet-type LLZO electrolytes reach ionic conductivities near one millisiemens per centimetre."
    j = judge()
    echo_g, claim_g = j.sentence_grounding([echo, claim], [SOURCE], topic=TOPIC)
    assert claim_g.grounded > 0.9 and claim_g.evidence.startswith("Garnet-type")
    assert echo_g.grounded < 0.2
    # Without the topic the echo shares the topic's words with the source and looks better grounded.
    assert j.sentence_grounding([echo], [SOURCE])[0].similarity > echo_g.similarity
    assert j.sentence_grounding([claim], [])[0].similarity is None  # nothing cited


def test_configured_key_terms_and_the_reports_own_count_towards_coverage():
    report = report_with(("Electrolytes", GROUNDED, [SOURCE]), topic="Solid-state batteries for electric vehicles")
    plain = judge().score_sync(report).details["mentioned"]
    with_terms = judge(key_terms=["dendrites", "sulfide electrolytes", "recycling"]).score_sync(report)
    # Topic terms (solid-state, battery, electric, vehicle) are absent; dendrite and electrolyte are present.
    assert plain == 0.0
    assert with_terms.details["mentioned"] == pytest.approx(2 / 8)
    report.key_terms = ["dendrites", "sulfide electrolytes", "recycling"]  # the task's key terms, as the env sets
    assert judge().score_sync(report).details["mentioned"] == pytest.approx(2 / 8)


def test_structure_prefers_more_balanced_sections_under_fitting_headings():
    # Three supported, on-topic sections; structure counts a section by its support and topicality.
    garnet = "Garnet-type LLZO electrolytes reach ionic conductivities near one millisiemens per centimetre."
    dendrites = "Lithium dendrites still grow along grain boundaries of the electrolyte at high current densities."
    alumina = (
        "Interfacial resistance of the lithium electrolyte falls when the anode is coated with a thin alumina layer."
    )
    j = judge(target_sections=3)
    one = j.score_sync(report_with(("Garnet electrolytes", garnet, [SOURCE])))
    three = j.score_sync(
        report_with(
            ("Garnet electrolytes", garnet, [SOURCE]),
            ("Lithium dendrites", dendrites, [SOURCE]),
            ("Alumina coatings", alumina, [SOURCE]),
        )
    )
    lopsided = j.score_sync(
        report_with(
            ("Garnet electrolytes", f"{garnet} {dendrites} {alumina}", [SOURCE]),
            ("Lithium dendrites", dendrites[:60], [SOURCE]),
            ("", alumina[:60], [SOURCE]),
        )
    )
    wrong_headings = j.score_sync(
        report_with(
            ("Lithium dendrites", garnet, [SOURCE]),
            ("Alumina coatings", dendrites, [SOURCE]),
            ("Garnet electrolytes", alumina, [SOURCE]),
        )
    )
    uncited = j.score_sync(
        report_with(
            ("Garnet electrolytes", garnet, [SOURCE]),
            ("Lithium dendrites", dendrites, []),
            ("Alumina coatings", alumina, []),
        )
    )
    assert three.components["structure"] > one.components["structure"]
    assert three.components["structure"] > lopsided.components["structure"]
    assert three.components["structure"] > wrong_headings.components["structure"]
    # Sections that nothing supports are no sections of the report: they add no count and unbalance it.
    assert three.components["structure"] > uncited.components["structure"]


def test_junk_gets_no_points_for_shape():
    stock = "The sky is blue."
    junk = judge().score_sync(report_with(*[(stock, " ".join([stock] * 3), [SOURCE])] * 3))
    headings = judge().score_sync(report_with(("Electrolytes", "## Electrolytes\n## Dendrites", [SOURCE])))
    assert junk.score == 0.0 and junk.components["structure"] > 0.0
    assert headings.score == 0.0 and "no content sentences" in headings.reason


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
    new = seen[first:]
    assert first > 0 and new and len(new) == len(set(new))
    # Only the new section's title and sentences (as written, and without the topic's words).
    assert all(t == "Market" or t in UNGROUNDED for t in new), new


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


def test_a_sentence_that_contradicts_its_source_earns_nothing_and_counts_against():
    """Support means the source says it: a changed number or a reversed relation is no support."""
    contradicted = GROUNDED.replace("falls when", "rises when").replace("one millisiemens", "ten millisiemens")
    j = judge()
    true_g = j.sentence_grounding(content_sentences(GROUNDED), [SOURCE], TOPIC)
    false_g = j.sentence_grounding(content_sentences(contradicted), [SOURCE], TOPIC)
    assert [g.conflict for g in true_g] == ["", "", ""]
    assert [g.conflict for g in false_g] == ["number", "", "antonym"]
    assert false_g[0].grounded == 0.0 < true_g[0].grounded
    credit = j.read(report_with(("Findings", contradicted, [SOURCE])))[0].credit
    assert credit[0] < 0 and credit[2] < 0 < credit[1]
    assert (
        j.score_sync(report_with(("Findings", contradicted, [SOURCE]))).score
        < j.score_sync(report_with(("Findings", GROUNDED, [SOURCE]))).score
    )


def test_an_outline_line_that_only_repeats_the_headings_earns_nothing():
    """A bullet that restates its heading (here a source sentence, so it would be grounded) has no body."""
    heading = "Lithium dendrites still grow along grain boundaries at high current densities"
    outline = f"## {heading}\n- {heading.lower()}"
    reading = judge().read(report_with(("Dendrites", outline, [SOURCE])))[0]
    assert reading.grounded and reading.grounded[0].grounded > 0.5 and reading.credit == [0.0]


def test_one_section_earns_no_balance():
    """A single section is no organisation: its structure is its count and heading fit, balance adds nothing."""
    j = judge()
    report = report_with(("Garnet electrolytes and dendrites", GROUNDED, [SOURCE]))
    assert j.read(report)[0].credit == [1.0, 1.0, 1.0]
    count = 1.0 / j.target_sections
    assert j.score_sync(report).components["structure"] == pytest.approx((count + j.heading_fit(report)) / 3)
