"""When the writer has nothing better, the Collector reuses the retrieved sentences (reuse_sources on)."""

from __future__ import annotations

import asyncio

import pytest

from agents_llm import prompts
from agents_llm.collector import Collector
from agents_llm.report_state import ReportState, SourceRef
from agents_llm.sentence_reuse import is_prose, pick_source_sentences, supported_share, why_reuse
from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)

TOPIC = "Asynchronous programming in Python with asyncio"
CHUNK = SourceRef(
    "tasks.txt",
    None,
    "c1",
    "The function asyncio.create_task wraps a coroutine into a Task and schedules it on the event loop. "
    "The function asyncio.gather runs awaitables concurrently and returns their results in order. "
    "\n\n```python\nimport asyncio\n```\n\n"
    "Cancelling a Task raises CancelledError inside the wrapped coroutine at its next await.",
)
GOOD = (
    "## Tasks\nThe function asyncio.create_task wraps a coroutine into a Task and schedules it on the event loop. "
    "The function asyncio.gather runs awaitables concurrently and returns their results in order."
)


def collect(prose: str, sources=(CHUNK,), report=None):
    report = report or ReportState(TOPIC)
    replies = [prose, "A summary."]

    async def call(agent, kind, messages, max_tokens):
        return replies.pop(0)

    result = asyncio.run(
        Collector(reuse_sources=True).run(
            call=call,
            report=report,
            contributions=[("DataAnalyst", "notes")],
            objective="Tasks in asyncio",
            sources=list(sources),
        )
    )
    return result, report


@pytest.mark.parametrize(
    "prose,why",
    [
        ("## The sky is blue.\nThe sky is blue.", "too short"),
        (
            "## "
            + prompts.task_for("LeadArchitect", "drafting")
            + "\n"
            + prompts.task_for("DataAnalyst", "drafting")
            + " "
            + prompts.TASK["Reviewer"]
            + " "
            + prompts.TASK["DataAnalyst"],
            "echoes the prompt",
        ),
        (
            "## Market\nMarketing teams expect rapid adoption across many consumer segments next year. Several startups "
            "announced ambitious partnerships with automakers recently.",
            "not supported",
        ),
    ],
)
def test_junk_prose_gives_way_to_source_sentences(prose, why):
    result, report = collect(prose)
    assert result.status == "appended" and why in result.reused_sources
    body = report.sections[0].content
    assert "create_task" in body and "sky" not in body and "Marketing" not in body
    assert "import asyncio" not in body  # code in the chunk is not quoted
    assert report.sections[0].sources[0].source == "tasks.txt"


def test_supported_prose_is_kept():
    result, report = collect(GOOD)
    assert result.status == "appended" and result.reused_sources == ""
    assert report.sections[0].title == "Tasks"


def test_junk_prose_without_sources_is_not_written():
    result, report = collect("## The sky is blue.\nThe sky is blue.", sources=())
    assert result.status == "skipped" and "too short" in result.reason and report.is_empty


def test_sentences_already_in_the_report_are_not_reused_again():
    report = ReportState(TOPIC)
    collect("The sky is blue.", report=report)
    second, report = collect("The sky is blue.", report=report)
    if second.status == "appended":
        first, again = report.sections[0].content, report.sections[1].content
        assert not set(first.split(". ")) & set(again.split(". "))
        assert report.sections[1].title != report.sections[0].title
    else:
        assert "no source sentence fits" in second.reason


def test_helpers():
    assert is_prose("The event loop runs tasks on a single thread.")
    assert not is_prose("import asyncio")
    assert not is_prose("x = await asyncio.gather(a(), b())")
    assert supported_share(GOOD, [CHUNK.text]) == 1.0
    assert why_reuse(GOOD.split("\n", 1)[1], "Tasks", [CHUNK.text]) is None
    assert pick_source_sentences([CHUNK], focus="gather results") == [
        "The function asyncio.gather runs awaitables concurrently and returns their results in order."
    ]
