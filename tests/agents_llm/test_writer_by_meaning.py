"""The writer's own sentences stay when they say, by meaning, what one source sentence says."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Sequence

import numpy as np

from agents_llm.collector import Collector, CollectorResult
from agents_llm.engine import EngineSettings
from agents_llm.engine.runner import RoundEngine
from agents_llm.text.bands import GROUNDING_BANDS
from agents_llm.report_state import ReportState, SourceRef
from agents_llm.grounding import MeaningCheck, ground_in_sources, names_only_what_it_says, specifics
from agents_llm.sentence_reuse import content_stems
from rag.embeddings import HashingEmbedding

SOURCE = (
    "Each stream keeps a read buffer of 64 kilobytes by default. "
    "The event loop runs on a single thread and switches to another task while one coroutine waits."
)
# In other words than the source sentence's (6 of its 9 content words are the source's: under
# the 0.7 that keeps a sentence by words), with the same number, and with another number.
SAME = "Unless configured otherwise, each stream keeps 64 kilobytes as its read buffer."
CHANGED = "Unless configured otherwise, each stream keeps 128 kilobytes as its read buffer."
VOCAB = sorted(content_stems(SOURCE) | content_stems(CHANGED))


def bag_of_stems(texts: Sequence[str]) -> np.ndarray:
    """A transparent stand-in for a sentence embedding: counts of the content stems."""
    out = np.zeros((len(texts), len(VOCAB) + 1))
    for row, text in enumerate(texts):
        for s, n in Counter(content_stems(text)).items():
            out[row, VOCAB.index(s) if s in VOCAB else -1] += n
    return out


CLOSE = MeaningCheck(embed=bag_of_stems, level=0.5)


def write_section(
    prose: str, report: ReportState, sources: list, *, sees: bool = False, revise: str | None = None
) -> tuple[CollectorResult, list[str]]:
    """One Collector call whose writer answers `prose`; (the result, the prompts it was sent)."""
    sent: list[str] = []

    async def call(agent, kind, messages, max_tokens):
        sent.append(messages[-1]["content"])
        return prose if kind == "collector" else "A summary."

    result = asyncio.run(
        Collector(reuse_sources=True, writer_sees_evidence=sees).run(
            call=call,
            report=report,
            contributions=[("DataAnalyst", "Streams keep a read buffer.")],
            objective="Stream buffers",
            sources=sources,
            revise_section=revise,
        )
    )
    return result, sent


def test_a_paraphrase_close_in_meaning_stays_in_the_writers_words():
    written = SAME
    grounded, note = ground_in_sources(written, [SOURCE], meaning=CLOSE)
    assert grounded == written
    assert "1 kept in the writer's words by meaning" in note
    # Read by words alone, the same sentence gives way to its source sentence.
    by_words, _ = ground_in_sources(written, [SOURCE])
    assert by_words == "Each stream keeps a read buffer of 64 kilobytes by default."


def test_a_paraphrase_that_changes_a_number_gives_way_to_its_source():
    written = CHANGED
    assert "128" in specifics(written)
    grounded, note = ground_in_sources(written, [SOURCE], meaning=CLOSE)
    assert grounded == "Each stream keeps a read buffer of 64 kilobytes by default."
    assert "by meaning" not in note


def test_a_name_is_found_only_as_a_whole_token_of_the_source():
    fractions = "The fractions module provides support for rational number arithmetic in Python 3.11."
    # A function the source never names is not in it because its name begins a longer word.
    assert not names_only_what_it_says("Use the built-in frac() function.", fractions)
    assert not names_only_what_it_says("It came with Python 3.1.", fractions)
    assert names_only_what_it_says("It has been there since Python 3.11.", fractions)
    # The same name, qualified or called in the source, or in the plural, is the same name.
    uuid = "uuid.uuid1(node=None) generates UUIDs from a host ID and the current time."
    assert names_only_what_it_says("The uuid1() function makes a UUID from the host ID.", uuid)
    assert not names_only_what_it_says("The uuid4() function makes a UUID from the host ID.", uuid)


def test_a_sentence_close_in_words_that_changes_a_name_gives_way_to_its_source():
    source = (
        "The first version requires that numerator and denominator are instances of numbers.Rational "
        "and returns a new Fraction instance."
    )
    written = "The first version requires that numerator and denominator are instances of integers.Rational."
    assert len(content_stems(written) & content_stems(source)) / len(content_stems(written)) >= 0.7
    grounded, note = ground_in_sources(written, [source])
    assert grounded == source and "1 of 1 sentences replaced" in note
    # With the name the source gives, the writer's words stay.
    faithful = "The first version requires that numerator and denominator are instances of numbers.Rational."
    assert ground_in_sources(faithful, [source]) == (faithful, "")


def test_a_sentence_far_in_meaning_from_every_source_sentence_is_not_kept():
    written = "Coroutines on one thread wait for the buffer of the stream."  # words of both, meaning of neither
    strict = MeaningCheck(embed=bag_of_stems, level=0.95)
    grounded, note = ground_in_sources(written, [SOURCE], meaning=strict)
    assert written not in grounded and "by meaning" not in note


def test_the_level_is_the_top_of_the_judges_grounding_band_for_that_embedding():
    hashing = MeaningCheck.for_embedding(HashingEmbedding())
    assert hashing is not None and hashing.level == GROUNDING_BANDS["hashing"][1]

    class Unknown:
        identity = "some-other-model"

        def embed_documents(self, texts):
            return np.ones((len(texts), 3))

    assert MeaningCheck.for_embedding(Unknown()) is None


def test_the_engine_reads_by_meaning_with_its_retrievers_embedding_only_when_asked():
    class Store:
        embedding = HashingEmbedding()

    class Retriever:
        store = Store()

        def retrieve(self, queries):
            return []

    on = RoundEngine([], None, retriever=Retriever(), settings=EngineSettings(route="product"))
    check = on.collector.meaning()
    assert check is not None and check.embed == Store.embedding.embed_documents
    off = RoundEngine([], None, retriever=Retriever(), settings=EngineSettings(reuse_sources=True))
    assert off.collector.meaning is None


def test_a_writer_that_sees_the_evidence_gets_the_sentences_its_section_will_cite():
    chunk = SourceRef("streams.txt", None, "c1", SOURCE)
    result, sent = write_section("## Buffers\n" + SAME, ReportState("Streams and their buffers"), [chunk], sees=True)
    assert "Evidence from the documents:\n- Each stream keeps a read buffer of 64 kilobytes by default." in sent[0]
    assert "in your own words" in sent[0]
    assert result.status == "appended"
    _, sent = write_section("## Buffers\n" + SAME, ReportState("Streams and their buffers"), [chunk])
    assert "Evidence from the documents" not in sent[0] and "64 kilobytes" not in sent[0]


def test_a_written_list_stays_a_list_and_markup_is_no_sentence():
    # SmolLM2 on the MIME-info PDF: a list of quoted sentences came out as one paragraph joined
    # by " - ", under a stray "</section>" line kept as a sentence of the section.
    body = (
        "</section>\n\n"
        "- Each stream keeps a read buffer of 64 kilobytes by default.\n"
        "- The event loop runs on a single thread and switches to another task while one coroutine waits."
    )
    grounded, note = ground_in_sources(body, [SOURCE])
    assert grounded == (
        "- Each stream keeps a read buffer of 64 kilobytes by default.\n"
        "- The event loop runs on a single thread and switches to another task while one coroutine waits."
    )
    assert "1 unsupported dropped" in note


def test_the_trace_keeps_what_the_writer_wrote_before_the_checks():
    prose = "## Buffers\n" + CHANGED + " Python 3.13 removed the global interpreter lock."
    chunk = SourceRef("streams.txt", None, "c1", SOURCE)
    result, _ = write_section(prose, ReportState("Streams and their buffers"), [chunk])
    record = result.as_dict()
    assert record["draft"] == prose  # as the model wrote it
    assert "interpreter lock" not in record["content"]  # what the report got
    assert "inputs" not in record


def test_a_revision_is_grounded_in_the_passages_its_section_cites():
    # Seen with Qwen2.5-1.5B on the MIME-info PDF: a revision arrived with no newly retrieved
    # passage, so nothing checked it and an invented example ("*.txt") reached the report.
    chunk = SourceRef("streams.txt", None, "c1", SOURCE)
    report = ReportState("Streams and their buffers")
    report.append("Buffers", "Each stream keeps a read buffer of 64 kilobytes by default.", [chunk])
    revision = (
        "## Buffers\nEach stream keeps a read buffer of 64 kilobytes by default. "
        "For example, a stream of a TCP socket on Windows always keeps exactly 8 megabytes in its buffer."
    )
    # Nothing retrieved since the section was written.
    result, _ = write_section(revision, report, [], revise=report.sections[0].id)
    assert result.status == "revised"
    assert "8 megabytes" not in report.sections[0].content
    assert report.sections[0].sources == [chunk]


def test_headings_inside_a_section_open_no_sections_of_their_own():
    # Qwen2.5-0.5B on the MIME-info PDF wrote "## Overview" and "## Glob Patterns" inside its
    # section, which was headed "Section 1": the report showed three sections where it had one.
    from agents_llm.section_headings import split_inner_headings

    body = "## Overview\n\nEach stream keeps a read buffer.\n\n## Loop\n\nThe event loop runs on one thread."
    assert split_inner_headings(body) == (
        "Overview",
        "Each stream keeps a read buffer.\n\n### Loop\n\nThe event loop runs on one thread.",
    )
    # A writer's narration as a heading (SmolLM2 on pprint.html) is dropped, the text under it kept.
    chatter = (
        "## 1. The report will be edited by the team.\n\n### 2. The report will have a clean structure\n\n- One fact."
    )
    assert split_inner_headings(chatter) == ("", "- One fact.")
    prose = (
        "## Read buffers\n\nEach stream keeps a read buffer of 64 kilobytes by default.\n\n## The loop\n\n"
        "The event loop runs on a single thread and switches to another task while one coroutine waits."
    )
    result, _ = write_section(prose, ReportState("Streams"), [SourceRef("streams.txt", None, "c1", SOURCE)])
    assert result.title == "Read buffers"
    assert result.content.startswith("Each stream keeps") and "\n### The loop\n" in result.content
    assert "## " not in result.content.replace("### ", "")


def test_a_list_after_a_line_of_prose_stays_a_list():
    body = (
        "Two facts:\n"
        "- Each stream keeps a read buffer of 64 kilobytes by default.\n"
        "- The event loop runs on a single thread and switches to another task while one coroutine waits."
    )
    grounded, _ = ground_in_sources(body, [SOURCE])
    assert grounded == (
        "- Each stream keeps a read buffer of 64 kilobytes by default.\n"
        "- The event loop runs on a single thread and switches to another task while one coroutine waits."
    )
