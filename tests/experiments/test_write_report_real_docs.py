"""write_report on a folder of real documents, with each local model: a multi-section report whose
sentences come from those documents, with references naming the files.

Slow: one short handcrafted run per installed model (about 2.5 minutes each on a 2-core CPU;
qwen2.5-coder-0.5b is skipped unless its `qwen05` extra is installed).
The documents are technical prose written for this test (how Python's asyncio works).
"""

from __future__ import annotations

import asyncio

import pytest

from agents_llm.text.split import sentences, words
from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)

pytestmark = pytest.mark.slow

DOCS = {
    "event_loop.txt": (
        "The event loop is the core of every asyncio application. It runs asynchronous tasks and callbacks, "
        "performs network input and output, and runs subprocesses. An application normally starts the loop "
        "with asyncio.run, which creates a new event loop, runs the given coroutine until it finishes and then "
        "closes the loop.\n\n"
        "The loop runs on a single thread. While one coroutine waits for a socket or a timer, the loop switches "
        "to another task that is ready to run. Concurrency in asyncio therefore comes from cooperative "
        "multitasking rather than from several threads running at once.\n\n"
        "A blocking call such as a long computation or a synchronous file read stops the whole loop. Such work "
        "should be moved to a thread pool with asyncio.to_thread or to a process pool, so that other tasks keep "
        "running.\n"
    ),
    "coroutines.txt": (
        "A coroutine function is declared with async def. Calling it does not run its body; it returns a "
        "coroutine object that must be awaited or scheduled on the event loop.\n\n"
        "The await keyword suspends the current coroutine until the awaited object completes. Only awaitable "
        "objects can be awaited: coroutines, tasks and futures. While the coroutine is suspended, the event loop "
        "is free to run other work.\n\n"
        "Forgetting to await a coroutine is a common mistake. The coroutine object is then never executed, and "
        "Python emits a RuntimeWarning saying that the coroutine was never awaited.\n"
    ),
    "tasks.txt": (
        "A task wraps a coroutine and schedules it to run on the event loop as soon as possible. The function "
        "asyncio.create_task returns a Task object, and the coroutine starts running concurrently with the code "
        "that created it.\n\n"
        "The function asyncio.gather runs several awaitables concurrently and returns a list of their results in "
        "the order in which they were passed. If one of them raises an exception, gather propagates it to the "
        "caller unless return_exceptions is set to true.\n\n"
        "A running task can be cancelled with its cancel method. Cancellation raises a CancelledError inside the "
        "wrapped coroutine at its next suspension point, which gives the coroutine a chance to clean up.\n"
    ),
    "timeouts.txt": (
        "Network code must not wait forever. The function asyncio.wait_for waits for an awaitable with a "
        "timeout and cancels it when the timeout expires, raising TimeoutError in the caller.\n\n"
        "Since Python 3.11 the asyncio.timeout context manager limits the time spent in a block of code. When "
        "the deadline passes, the tasks inside the block are cancelled and the error is raised when the block "
        "exits.\n\n"
        "Timeouts combine with task groups. An asyncio.TaskGroup waits for all the tasks it created, and when "
        "one task fails, the group cancels the remaining tasks before it raises the error.\n"
    ),
}
ROUNDS = {"planning": 1, "research": 1, "drafting": 4, "review": 0, "revision": 0}
# qwen2.5-coder-0.5b wrote 1 section here until its Researcher's [RESEARCH_EXHAUSTED] beside the chunks it
# had just retrieved was believed (report_protocol.feedback.exhaustion_believed) and its NO_QUERY for a
# section stopped the search (agents_llm.engine.query_check): the pipeline skipped the second writing round.
MODELS = ["smollm2-135m", "qwen2.5-coder-0.5b"]


def overlap(sentence: str, source: str) -> float:
    """Share of the sentence's words that the source sentence has (containment)."""
    a, b = set(words(sentence)), set(words(source))
    return len(a & b) / len(a) if a else 0.0


@pytest.mark.parametrize("model", MODELS)
def test_write_report_on_real_documents_quotes_them_with_references(tmp_path, model):
    pytest.importorskip("llama_cpp")
    from report_app import write_report
    from agents_llm.backends.errors import LLMConfigError
    from agents_llm.backends.models import resolve_model

    try:
        resolve_model(model, None)
    except (LLMConfigError, FileNotFoundError) as e:  # an optional model that is not installed
        pytest.skip(f"{model} is not installed: {e}")
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    result = asyncio.run(
        write_report(
            "Asynchronous programming in Python with asyncio",
            docs,
            data_root=tmp_path / "data",
            output_root=tmp_path / "out",
            algo={"rounds": ROUNDS},
            pdf=False,
            llm={"backend": "llamacpp", "model": model},
            rag={"embedding": {"backend": "hashing"}},
            judge={"kind": "reference", "embedding": "hashing"},
        )
    )
    report = result.report
    source_sentences = [s for text in DOCS.values() for s in sentences(text)]
    report_sentences = [s for sec in report.sections for s in sentences(sec.content) if len(words(s)) >= 4]
    quoted = [s for s in report_sentences if max(overlap(s, src) for src in source_sentences) >= 0.7]
    print(
        f"\n{model}: {result.seconds:.0f} s, {result.rounds} rounds, {len(report.sections)} sections, "
        f"{len(quoted)}/{len(report_sentences)} sentences from the documents\n{report.to_markdown()}"
    )
    assert len(report.sections) >= 2, report.to_markdown()
    assert report_sentences and len(quoted) / len(report_sentences) >= 0.6, report_sentences
    md = (result.output_dir / "report.md").read_text()
    assert "## References" in md
    cited = {r.source for r in report.all_sources()}
    assert cited and cited <= set(DOCS) and all(name in md for name in cited), cited
