"""Headings come from the plan's outline, are distinct and never restate the task; no two sections share their text."""

from __future__ import annotations

import asyncio

from agents_llm.collector import Collector
from agents_llm.section_headings import document_heading, not_a_heading, restates, section_title
from agents_llm.engine.runner import planned_title
from agents_llm.report_state import ReportState, SourceRef
from report_protocol import RoundPlan
from report_protocol import vocabulary as v
from report_protocol.round_plan import Directive

TOPIC = "Creating and activating Python virtual environments with venv"
CHUNK = SourceRef(
    "venv.html",
    None,
    "c1",
    "The venv module creates a virtual environment in a directory of its own. "
    "A virtual environment is activated by sourcing the activate script in its bin directory. "
    "Deactivating it restores the shell's earlier search path for programs.",
)
PROSE = (
    "## Python virtual environments with venv\nThe venv module creates a virtual environment in a directory of its "
    "own. A virtual environment is activated by sourcing the activate script in its bin directory."
)


def collect(report, prose, planned="", sources=(CHUNK,)):
    replies = [prose, "A summary."]

    async def call(agent, kind, messages, max_tokens):
        return replies.pop(0)

    return asyncio.run(
        Collector(reuse_sources=True).run(
            call=call,
            report=report,
            contributions=[("DataAnalyst", "notes")],
            objective="Write the assigned section",
            sources=list(sources),
            planned_title=planned,
        )
    )


def test_the_heading_is_the_outline_title_not_the_task_restated():
    report = ReportState(TOPIC)
    result = collect(report, PROSE, planned="Activating an environment")
    assert result.status == "appended" and report.sections[0].title == "Activating an environment"
    # Without an outline title the writer's heading, which restates the task, gives way too.
    other = ReportState(TOPIC)
    collect(other, PROSE)
    assert (
        not restates(other.sections[0].title, TOPIC)
        and other.sections[0].title != "Python virtual environments with venv"
    )


def test_restated_empty_and_taken_headings_are_refused():
    assert restates("Python virtual environments with venv: creating and activating", TOPIC)
    assert restates("2.", TOPIC)
    assert not restates("Creating virtual environments", TOPIC)  # a part of the topic, not all of it
    title = section_title(
        ["Creating and activating virtual environments with venv in Python", "Activation", "Deactivation"],
        TOPIC,
        "Section 2",
        taken=["Activation"],
    )
    assert title == "Deactivation"
    assert section_title(["2."], TOPIC, "Section 2") == "Section 2"
    # An instruction echoed around the topic's words (seen as an outline entry) is no heading.
    echoed = "3. The next section to write now is the report on creating and activating Python virtual environments."
    assert section_title([echoed, "Activation"], TOPIC, "Section 3") == "Activation"


def test_an_outlines_numbering_is_not_part_of_the_heading():
    from agents_llm.section_headings import clean_title

    assert clean_title("1 What is libffi?", TOPIC) == "What is libffi?"  # SmolLM2 on libffi's manual
    assert clean_title("## 2.3. Magic rules", TOPIC) == "Magic rules"
    assert clean_title("4) Closures", TOPIC) == "Closures"
    assert clean_title("3D printing", TOPIC) == "3D printing" and clean_title("2024 changes", TOPIC) == "2024 changes"


def test_a_placeholder_heading_gives_way_to_what_the_section_says():
    # Seen with SmolLM2 on libffi's HTML manual: the writer's title was filtered away, its
    # placeholder "Section 2" came before the section's own opening words, and became the heading.
    opener = "A foreign function interface is the popular name"
    assert section_title(["Section 2", opener], TOPIC, "Section 2") == opener
    assert section_title(["section 12"], TOPIC, "Section 3") == "Section 3"


def test_a_section_that_repeats_another_is_not_written():
    report = ReportState(TOPIC)
    assert collect(report, PROSE, planned="Activation").status == "appended"
    again = collect(report, PROSE, planned="Deactivation")
    assert again.status == "skipped" and "repeats" in again.reason, again
    assert len(report.sections) == 1


def test_the_planned_title_is_read_from_the_plans_section_directive():
    plan = RoundPlan(
        phase=v.DRAFTING,
        acting=["LeadArchitect", "DataAnalyst"],
        directives={"LeadArchitect": Directive(v.ASSIGN_SECTION, title="Activation", position=1, total=3)},
    )
    assert planned_title(plan) == "Activation"
    assert planned_title(RoundPlan(phase=v.DRAFTING, acting=["LeadArchitect"])) == ""


def test_a_body_that_only_restates_the_topic_gives_way_to_source_sentences():
    report = ReportState(TOPIC)
    result = collect(report, "## Section 1\n<<Creating and activating Python virtual environments with venv>>")
    assert result.status == "appended" and result.reused_sources == "restates the topic", result
    assert "<<" not in report.sections[0].content and "activate script" in report.sections[0].content


def test_what_a_small_model_writes_where_a_heading_goes_is_refused():
    # Headings found in LLM-team reports of the validation panel (SmolLM2-135M).
    junk = [
        "```python",
        "pre><code",
        "pre><code>#include <iostream",
        "script",
        "Here's a possible start to the report:",
        "Here's a possible example of how you can write the next section:",
        "The report is now ready to be sent.",
        "This task will be completed in 10 minutes.",
        "This is the first bullet point.",
        "The report contains a module that is an asynchronous generator",
        "The team has found a path name that matches the one they are looking for.",  # a glob report's
        "This module creates temporary files and directories. It works",  # a tempfile report's
    ]
    for title in junk:
        assert not_a_heading(title), title
        assert section_title([title, "Frame records"], "Runtime introspection", "Section 2") == "Frame records"
    legit = ["Error reporting in the logging module", "Line numbers are 0-based", "Frame records", "venv"]
    # a document's own words about sections and tasks (configparser, asyncio) are headings
    legit += ["The DEFAULT section", "Cancelling the task", "Running tasks concurrently", "The team model in Scrum"]
    legit += ["Node.js streams", "Units, e.g. Pixels", "What is libffi?"]
    for title in legit:
        assert not_a_heading(title) == "", title


def test_an_outline_written_as_orders_to_the_writer_gives_no_headings():
    # Qwen2.5-0.5B's outline and title for a report on the shared MIME-info specification (a PDF).
    orders = [
        "Briefly introduce the shared MIME-info database and its purpose.",
        "Write a detailed section on how the shared MIME-info database detects a file's type by analyzing "
        "specific patterns, magic rules, and XML formats within its files.",
        "Provide an overview of glob patterns",
        "Describe the magic rules and their priorities",
        "Brief overview of the project, including its purpose and scope.",  # Qwen2.5-0.5B on libffi's manual
    ]
    for title in orders:
        assert not_a_heading(title) == "an instruction to the writer", title
    # A document's own imperative headings and short noun phrases stay headings.
    for title in ["Writing a trigger", "Overview", "Introduction", "Describing types", "Write access", "Brief history"]:
        assert not_a_heading(title) == "", title


PASSAGE = SourceRef(
    "inspect.md",
    None,
    "c9",
    "Return the module name for a given file, or None.\n\n## inspect.getsourcelines(object)\n\n"
    "Return a list of source lines and starting line number for an object.\n\n"
    "The argument may be a module, class, method, function, traceback, frame, or code object.\n\n"
    "## inspect.ismodule(object)\n\nReturn true if the object is a module.\n",
)


def test_quoted_sentences_are_headed_by_the_heading_their_document_gives_them():
    quoted = "The argument may be a module, class, method, function, traceback, frame, or code object."
    assert document_heading(quoted, [PASSAGE]) == "inspect.getsourcelines"
    assert document_heading("Return true if the object is a module.", [PASSAGE]) == "inspect.ismodule"
    # before the passage's first heading: under a heading the chunk does not hold, so none
    assert document_heading("Return the module name for a given file, or None.", [PASSAGE]) == ""
    assert document_heading("Nothing of this is in the passage at all.", [PASSAGE]) == ""


def test_a_section_of_source_sentences_gets_its_documents_heading_not_the_writers_chatter():
    report = ReportState("Runtime introspection with the inspect module")
    result = collect(report, "## Here's a possible start to the report:\nThe report is now ready.", sources=[PASSAGE])
    assert result.status == "appended" and result.reused_sources, result
    assert report.sections[0].title in {"inspect.getsourcelines", "inspect.ismodule"}, report.sections[0].title
