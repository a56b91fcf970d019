"""Hand-written sections for the referee tests: good, grounded ones and their degradations."""

from __future__ import annotations

from agents_llm import prompts
from agents_llm.judges import ReferenceJudge
from agents_llm.text.bands import GROUNDING_BANDS
from agents_llm.report_state import ReportState, SourceRef
from rag.embeddings import HashingEmbedding

TOPIC = "Asynchronous programming in Python with asyncio"

LOOP_CHUNK = SourceRef(
    "event_loop.txt",
    None,
    "c-loop",
    "The event loop runs asynchronous tasks and callbacks, performs network IO operations and runs "
    "subprocesses. A coroutine declared with async def is paused at every await expression until the awaited "
    "operation completes. While one coroutine waits, the event loop runs other ready tasks on the same thread.",
)
TASK_CHUNK = SourceRef(
    "tasks.txt",
    None,
    "c-tasks",
    "The function asyncio.create_task wraps a coroutine into a Task and schedules its execution on the running "
    "event loop. The function asyncio.gather runs awaitable objects concurrently and returns the list of their "
    "results in the order of the arguments. A Task can be cancelled, which raises CancelledError inside the "
    "wrapped coroutine.",
)
CHANGELOG_CHUNK = SourceRef(
    "changelog.md",
    None,
    "c-changes",
    "Version 0.4.2 fixes a packaging error in the wheel metadata. Version 0.4.1 drops support for an older "
    "build backend and updates the licence file.",
)

GOOD_LOOP = (
    "## The event loop\n"
    "The event loop runs asynchronous tasks and callbacks and performs network IO operations. "
    "A coroutine declared with async def is paused at every await expression until the awaited "
    "operation completes. While one coroutine waits, the event loop runs other ready tasks on the same "
    "thread."
)
GOOD_TASKS = (
    "## Tasks and gathering\n"
    "The function asyncio.create_task wraps a coroutine into a Task and schedules it on the running "
    "event loop. The function asyncio.gather runs awaitable objects concurrently and returns their "
    "results in the order of the arguments. Cancelling a Task raises CancelledError inside the wrapped "
    "coroutine."
)
STOCK = "## The sky is blue.\nThe sky is blue."
STOCK_LOOPED = "## Event loops\nThe sky is blue. The sky is blue. The sky is blue. The sky is blue."
LOOPING_PHRASE = (
    "## Summary of the report\nThe report is a list of facts and the report is a list of facts and "
    "the report is a list of facts and the report is a list of facts and the first point"
)
# Our own instructions coming back (built from the prompt texts, so a rewording keeps the test honest).
PROMPT_ECHO = (
    f"## Task: {prompts.task_for('LeadArchitect', 'drafting')}\n"
    f"{prompts.task_for('DataAnalyst', 'drafting')} {prompts.TASK['Reviewer']}"
)
OFF_TOPIC = (
    "## Market outlook\nMarketing teams expect rapid adoption across many consumer segments next year. "
    "Several startups announced ambitious partnerships with automakers recently. "
    "Investors remain optimistic about future valuations in this sector."
)
FILLER = (
    "## Further remarks\nIt is important to note that many aspects are relevant in this context. "
    "In general, various factors play a role and should be considered carefully. "
    "Overall, this is a significant matter with many implications for the future."
)


def hashing_judge() -> ReferenceJudge:
    floor, ceiling = GROUNDING_BANDS["hashing"]
    return ReferenceJudge(HashingEmbedding(dim=512), grounding_floor=floor, grounding_ceiling=ceiling)


def split(markdown: str) -> tuple[str, str]:
    title, _, body = markdown.partition("\n")
    return title.lstrip("# ").strip(), body.strip()


def append(report: ReportState, markdown: str, *sources: SourceRef):
    title, body = split(markdown)
    return report.append(title, body, list(sources))


# The default run's first append (trimmed): a code and HTML fragment quoting the cited chunk, under a tag title.
CODE_JUNK = (
    "## <pre><code>\n<pre><code>\nimport asyncio.create_task(asyncio)\ndef get_facts():\nfacts = []\n"
    'for task in asyncio.gather("loop"):\n'
    "raise ValueError('The event loop runs asynchronous tasks and callbacks')\n</code></pre>\n"
    '<table><tr class="d-block">\n<td class="d-block d-lg-sm">\n<h2 class="d-block text-white">## 1.'
)
