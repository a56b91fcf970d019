"""Generated search queries: junk (code, fragments, off-topic words) falls back to topic and outline terms."""

from __future__ import annotations

import pytest

from agents_llm.engine.query_check import fallback_queries, junk_reason, query_terms, vet_queries

TOPIC = "Data validation with Pydantic models and type hints"


@pytest.mark.parametrize(
    "query,why",
    [
        ("```python", "code"),
        ("# Import the necessary modules", "code"),
        ("from dataclasses import dataclass", "code"),
        ("model = BaseModel(name='x')", "code"),
        ("Pydantic", "too short"),
        ("prompt='Why is the sky blue?'", "code"),
        ("Why is the sky blue?", "names no term"),
        ("!!! ### ??? ***", "symbols"),
    ],
)
def test_junk_queries_are_rejected_with_a_reason(query, why):
    reason = junk_reason(query, query_terms(TOPIC))
    assert reason is not None and why in reason


@pytest.mark.parametrize(
    "query", ["pydantic model validation", "type hints for data validation", "How does Pydantic validate field types?"]
)
def test_plausible_queries_pass(query):
    assert junk_reason(query, query_terms(TOPIC)) is None


def test_outline_and_objective_terms_count_as_topic_terms():
    terms = query_terms(TOPIC, objective="Custom validators and error messages", outline=["Field constraints"])
    assert junk_reason("custom validators", terms) is None
    assert junk_reason("field constraints examples", terms) is None


def test_all_junk_falls_back_to_topic_and_outline():
    queries, rejected, fell_back = vet_queries(
        ["```python", "# Import the necessary modules", "from dataclasses import dataclass"],
        topic=TOPIC,
        objective="Field validators in Pydantic models",
        outline=["Pydantic models and type hints"],
    )
    assert fell_back and len(rejected) == 3 and all(r["reason"] for r in rejected)
    assert queries[0] == TOPIC and "Field validators in Pydantic models" in queries


def test_good_queries_are_kept_and_no_query_stays_no_search():
    queries, rejected, fell_back = vet_queries(["pydantic validators", "```"], topic=TOPIC)
    assert queries == ["pydantic validators"] and [r["query"] for r in rejected] == ["```"] and not fell_back
    assert vet_queries([], topic=TOPIC) == ([], [], False)


def test_fallback_skips_an_off_topic_objective():
    assert fallback_queries(TOPIC, objective="The sky is blue.") == [TOPIC]


def test_no_query_before_any_evidence_falls_back_to_the_topic():
    queries, rejected, fell_back = vet_queries([], topic=TOPIC, no_query_allowed=False)
    assert queries == [TOPIC] and fell_back and rejected[0]["query"] == "NO_QUERY"


def test_a_section_the_plan_asks_evidence_for_is_searched_with_the_topic_words():
    """A title alone ("Field constraints") may name no topic term; the fallback searches it with the topic."""
    assert fallback_queries(TOPIC, section="Field constraints") == [f"Field constraints {TOPIC}", TOPIC]
    assert fallback_queries(TOPIC, section="Pydantic models") == [TOPIC]  # already in the topic
    # NO_QUERY is no decision when the plan asks for a section's evidence (the caller then forbids it)
    queries, rejected, fell_back = vet_queries([], topic=TOPIC, no_query_allowed=False, section="Field constraints")
    assert queries[0] == f"Field constraints {TOPIC}" and fell_back and "section" in rejected[0]["reason"]
    # the section's words count as topic terms for a generated query
    assert vet_queries(["field constraints examples"], topic=TOPIC, section="Field constraints")[0] == [
        "field constraints examples"
    ]
    assert vet_queries(["field constraints examples"], topic=TOPIC)[2]  # without it: off topic, fell back


def _phase_instructions() -> list[str]:
    """Every sentence of the pipeline's phase blocks and objectives (what a model echoes)."""
    from agents_llm import phase_prompts
    from agents_llm.text.split import sentences

    texts = list(phase_prompts.PHASE_BLOCK.values())
    texts += [t for by_role in phase_prompts.OBJECTIVE.values() for t in by_role.values()]
    return [s for t in texts for s in sentences(t) if len(s.split()) >= 5]


def test_an_echoed_instruction_of_the_pipeline_never_passes_as_a_query():
    echoes = _phase_instructions()
    assert len(echoes) >= 10
    # The objective itself is the echo (the Lead Architect copied its prompt): its words lend no terms.
    for echo in echoes:
        queries, rejected, fell_back = vet_queries([echo], topic=TOPIC, objective=echo, outline=[echo])
        assert echo not in queries and fell_back, (echo, queries)
        assert "instruction of the pipeline" in rejected[0]["reason"], rejected
        assert all(q == TOPIC or "Pydantic" in q for q in queries), queries
    # The one from the field, with the topic's words around it, is refused too.
    echoed = "The team gathers evidence from the sources for the planned sections"
    assert "instruction" in (junk_reason(echoed, query_terms(TOPIC, echoed), TOPIC) or "")
    # Queries a reader would type stay.
    for query in ("Pydantic model field validators", "type hints in Pydantic models", "validation errors raised"):
        assert junk_reason(query, query_terms(TOPIC, echoed), TOPIC) is None, query


def test_a_query_that_opens_on_one_of_our_labels_is_refused_whoever_the_label_names():
    # Seen in a libffi run: the Researcher copied its inbox line, and the store answered it.
    for echoed in (
        "Message from LeadArchitect: The Basics",
        "Message from Reviewer: closures need a trampoline",
        "Section to find evidence for: The Closure API",
    ):
        assert "instruction" in (junk_reason(echoed, query_terms(TOPIC, "Pydantic"), TOPIC) or ""), echoed
    # A label of the documents' own, or a name that is no agent's, is a query.
    for query in ("Validators: Pydantic field checks", "Message from Pydantic maintainers about validators"):
        assert junk_reason(query, query_terms(TOPIC), TOPIC) is None, query


def test_a_directive_label_a_protocol_token_or_talk_of_the_teams_work_is_no_query():
    # Seen in write_report runs: the Researcher copied its plan's lines, or narrated the team's work.
    terms = query_terms(TOPIC)
    for echoed, why in (
        ("Section to write now: Pydantic validators", "instruction"),
        ("The report topic: Pydantic models and type hints", "instruction"),
        ("SECTION_ID: S1 Pydantic validators", "protocol"),
        ("Pydantic validators [RESEARCH_EXHAUSTED]", "protocol"),
        ("The report is now ready. Pydantic models were covered", "team's own report"),
        ("A section that explains Pydantic validators", "team's own section"),
    ):
        assert why in (junk_reason(echoed, terms, TOPIC) or ""), echoed
    # The same words as the documents' subject are a query.
    assert junk_reason("Pydantic validation report format", terms, TOPIC) is None
    report_topic = "Writing a Node.js diagnostic report"
    assert (
        junk_reason("The report header fields of a diagnostic report", query_terms(report_topic), report_topic) is None
    )
