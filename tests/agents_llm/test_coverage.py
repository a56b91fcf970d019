"""Whether the documents cover a topic, read from what a topic search brings back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from agents_llm.coverage import Coverage, no_section_note, probe_coverage


@dataclass
class Hit:
    text: str
    source: str
    page: Optional[int] = None


def test_a_topic_is_covered_when_one_passage_names_half_its_words():
    hits = [
        Hit("The venv module creates lightweight virtual environments, each with its own site directory.", "venv.html"),
        Hit("Licence terms apply to every copy.", "licence.txt", 3),
    ]
    coverage = probe_coverage("Creating virtual environments with venv", lambda queries: hits)
    assert coverage.queries == ("Creating virtual environments with venv",) and coverage.covered
    assert coverage.best is not None and coverage.best.citation == "venv.html"


def test_passages_spread_over_the_words_do_not_cover_a_topic_and_the_reason_says_what_came_back():
    # Each passage names one of the four words: none names two.
    hits = [Hit("The athletes signed the licence.", "a.txt", 1), Hit("Hydration of the cement paste.", "b.txt")]
    coverage = probe_coverage("Hydration and diet for endurance athletes", lambda queries: hits)
    assert coverage.needed == 2 and not coverage.covered
    said = coverage.explain()
    assert 'Searched the documents for "Hydration and diet for endurance athletes"' in said
    assert "2 passage(s) came back from a.txt, b.txt" in said and "names 1 of the topic's 4 key words" in said
    nothing = probe_coverage("Diet for athletes", lambda queries: [])
    assert not nothing.covered and nothing.explain().endswith("nothing came back.")
    assert Coverage("?!", (), ()).covered  # no word to check: the run decides


def test_an_empty_report_says_what_was_searched_and_what_came_back():
    rounds = [
        {
            "agents": {
                "Researcher": {
                    "retrieval": {"queries": ["mime glob rules"], "chunks": [{"source": "spec.pdf", "page": 3}]}
                }
            }
        },
        {
            "agents": {
                "Researcher": {"retrieval": {"queries": ["magic rules"], "chunks": [{"source": "spec.pdf", "page": 5}]}}
            }
        },
    ]
    note = no_section_note("/docs", rounds)
    assert '"mime glob rules"; "magic rules"' in note and "2 passage(s) came back from spec.pdf" in note
    assert "did not give enough evidence" not in note
    assert "nothing came back" in no_section_note("/docs", [{"agents": {"R": {"retrieval": {"queries": ["x y"]}}}}])
    assert "ran no search" in no_section_note("/docs", [])
