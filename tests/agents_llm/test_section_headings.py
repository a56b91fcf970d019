"""Headings come from the plan's outline, are distinct and never restate the task; no two sections share their text."""

from __future__ import annotations

import asyncio

from agents_llm.collector import Collector, restates, section_title
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


def collect(report, prose, planned=""):
    replies = [prose, "A summary."]

    async def call(agent, kind, messages, max_tokens):
        return replies.pop(0)

    return asyncio.run(
        Collector(reuse_sources=True).run(
            call=call,
            report=report,
            contributions=[("DataAnalyst", "notes")],
            objective="Write the assigned section",
            sources=[CHUNK],
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
