"""The agreement check: a claim that contradicts its source is named, with the kind of conflict."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from agents_llm.judges.agreement import REASONS, Agreement, check_agreement

SOURCE = (
    "The pump moves water from the well to the tank. Most farms in the valley use drip irrigation. "
    "The reservoir holds 4,000 cubic metres and was built in the nineteenth century. "
    "Drip irrigation does not waste water on the paths between rows. Evaporation rises in summer."
)


@pytest.mark.parametrize(
    "claim",
    [
        "Water is moved by the pump from the well to the tank.",
        "The majority of valley farms rely on drip irrigation.",
        "Built in the 19th century, the reservoir holds 4,000 cubic metres.",
        "Drip irrigation wastes no water on the paths between the rows.",
        "In summer, evaporation rises.",
    ],
)
def test_a_faithful_restatement_agrees(claim):
    assert check_agreement(claim, SOURCE) == Agreement(True)


@pytest.mark.parametrize(
    "claim, reason",
    [
        ("The reservoir holds 40,000 cubic metres.", "number"),
        ("The reservoir was built in the eighteenth century.", "number"),
        ("Drip irrigation wastes water on the paths between rows.", "negation"),
        ("Evaporation falls in summer.", "antonym"),
        ("Few farms in the valley use drip irrigation.", "quantifier"),
        ("The pump moves water from the tank to the well.", "roles"),
    ],
)
def test_a_contradiction_is_named_by_its_kind(claim, reason):
    result = check_agreement(claim, SOURCE)
    assert not result.agrees and result.reason == reason and result.reason in REASONS and result.detail


def test_a_number_the_source_writes_in_words_is_stated():
    """The source's "one millisiemens" states 1; a claim's "one of" states nothing to check."""
    source = "Garnet electrolytes reach conductivities near one millisiemens per centimetre."
    assert check_agreement("Garnet electrolytes reach conductivities near 1 mS per centimetre.", source).agrees
    assert (
        check_agreement("Garnet electrolytes reach conductivities near 2 mS per centimetre.", source).reason == "number"
    )
    assert check_agreement(
        "One of the garnet electrolytes reaches high conductivities.", SOURCE.replace("4,000", "")
    ).agrees


def test_a_negation_moved_to_another_word_contradicts():
    source = "The miller, not the baker, sets the price of flour."
    assert check_agreement("The baker rather than the miller sets the price of flour.", source).reason == "negation"
    assert check_agreement("The price of flour is set by the miller rather than the baker.", source).agrees


def test_a_converse_restatement_agrees():
    """'A is half of B' says what 'B is twice A' says."""
    assert check_agreement("Copper costs twice as much as tin.", "Tin costs half as much as copper.").agrees
    assert (
        check_agreement("Tin costs twice as much as copper.", "Tin costs half as much as copper.").reason == "antonym"
    )


def test_a_course_told_with_other_poles_agrees_in_its_order_only():
    """Both poles named in other words, in the same order, tell the same course; the reverse order does not."""
    source = "The lake level first increases in spring and then declines in autumn."
    assert check_agreement("The lake level rises in spring at first and then falls in autumn.", source).agrees
    reversed_course = check_agreement("The lake level falls in spring at first and then rises in autumn.", source)
    assert reversed_course.reason == "antonym"
    # One pole alone is no course: the claim's rise still meets the source's decline.
    assert check_agreement("The lake level rises in spring and then in autumn.", source).reason == "antonym"


def _balanced_accuracy(split: str) -> float:
    raw = json.loads((resources.files("agents_llm.judges.validity") / "contradictions.json").read_text("utf-8"))
    rows = [p for p in raw["pairs"] if raw["documents"][p["doc"]]["split"] == split]
    flagged = {id(p): not check_agreement(p["claim"], p["source"]).agrees for p in rows}
    recall = sum(flagged[id(p)] for p in rows if p["label"] == "contradicts") / sum(
        p["label"] == "contradicts" for p in rows
    )
    kept = sum(not flagged[id(p)] for p in rows if p["label"] == "entails") / sum(p["label"] == "entails" for p in rows)
    return (recall + kept) / 2


def test_the_labelled_set_is_balanced_and_documented():
    raw = json.loads((resources.files("agents_llm.judges.validity") / "contradictions.json").read_text("utf-8"))
    pairs = raw["pairs"]
    assert len(pairs) >= 200 and sum(p["label"] == "contradicts" for p in pairs) * 2 == len(pairs)
    for p in pairs:
        assert p["source"] in raw["documents"][p["doc"]]["text"], p
    assert {d["split"] for d in raw["documents"].values()} == {"dev", "heldout"}


def test_balanced_accuracy_on_the_held_out_documents():
    """The figure experiments/protocol/agreement_eval.py prints; the held-out documents were never tuned on."""
    assert _balanced_accuracy("heldout") >= 0.85
    assert _balanced_accuracy("dev") >= 0.9


def test_a_passage_is_read_clause_by_clause():
    """Against a passage, each clause of the claim meets the source clause it restates; a clause the source
    does not speak to is no conflict, and a code name the source never writes is a swap."""
    passage = (
        "The loader reads the file lazily; it does not cache pages. With keep_blank_values set, blank "
        "fields are kept. The writer flushes after every row."
    )
    assert check_agreement("The loader reads the file lazily, and the writer flushes after every row.", passage).agrees
    caching = check_agreement("The loader reads the file lazily, and it caches pages.", passage)
    assert caching.reason == "negation"
    assert check_agreement("With strict_parsing set, blank fields are kept.", passage).reason == "name"
    assert check_agreement("The parser was written in a weekend by volunteers.", passage).agrees
