"""The referee on the judge validity suite: silent on every good report, and the code/markup and prompt-echo
flags firing on their degradations over every topic; variants the suite does not generate (other tags,
other languages, other echo phrasings) are flagged too."""

from __future__ import annotations

import pytest

from agents_llm.judges.validity import DEGRADATIONS, load_good_reports, other_report
from agents_llm.referee import MARKUP, PROMPT_ECHO, Referee, RefereeConfig
from agents_llm.report_state import ReportState

from .sections import LOOP_CHUNK, TOPIC, hashing_judge


@pytest.fixture(scope="module")
def reports():
    return load_good_reports()


@pytest.fixture(scope="module")
def grounder():
    return hashing_judge()


def section_flags(state: ReportState, grounder) -> list[list[str]]:
    """The referee's flag kinds for each section, reviewed as the env appends them one per round."""
    ref, report, out = Referee(RefereeConfig(penalize=True), grounder=grounder), ReportState(state.topic), []
    for sec in state.sections:
        added = report.append(sec.title, sec.content, list(sec.sources))
        out.append(sorted(f.kind for f in ref.review_round(report, changed_section=added.id)))
    return out


def test_good_reports_raise_no_flag(reports, grounder):
    for good in reports:
        with_extra = good.state(list(good.sections) + [good.extra_section])
        assert section_flags(with_extra, grounder) == [[] for _ in with_extra.sections], good.task_id


@pytest.mark.parametrize(
    "kind,flag",
    [
        ("code_markup", MARKUP),
        ("echo_headings", PROMPT_ECHO),
        ("echo_rephrased", PROMPT_ECHO),
        ("prompt_echo", PROMPT_ECHO),
    ],
)
def test_flag_fires_on_every_section_of_its_degradation_on_every_topic(reports, grounder, kind, flag):
    for i, good in enumerate(reports):
        flags = section_flags(DEGRADATIONS[kind](good, other_report(reports, i)), grounder)
        missed = [n for n, kinds in enumerate(flags, 1) if flag not in kinds]
        assert not missed, f"{good.task_id}: {kind} sections {missed} not flagged {flag}: {flags}"


def test_code_flag_has_reason_and_evidence(reports, grounder):
    good = reports[0]
    state = DEGRADATIONS["code_markup"](good, other_report(reports, 0))
    ref, report = Referee(grounder=grounder), ReportState(state.topic)
    sec = state.sections[0]
    added = report.append(sec.title, sec.content, list(sec.sources))
    markup = [f for f in ref.review_round(report, changed_section=added.id) if f.kind == MARKUP]
    assert markup and "code or markup" in markup[0].reason
    assert markup[0].evidence["share"] >= 0.5 and markup[0].evidence["lines"]


# Held out from the generator: tags, languages and phrasings that CODE_STYLES and ECHO_FRAMES do not use.
UNSEEN_MARKUP = {
    "html_divs": (
        '<div class="card">\n  <span id="loop">event loop</span>\n  <svg width="10" height="10"></svg>\n'
        '</div>\n<ul><li><a href="#tasks">tasks</a></li></ul>'
    ),
    "rust": (
        "use std::collections::HashMap;\nfn main() {\n    let mut tasks = HashMap::new();\n"
        '    tasks.insert("loop", 1);\n    println!("{:?}", tasks);\n}'
    ),
    "yaml": "event_loop:\n  debug: true\n  tasks:\n    - name: gather\n      timeout: 10\n    - name: create_task",
    "go": (
        'package main\n\nimport "fmt"\n\nfunc main() {\n\tch := make(chan int)\n\tgo worker(ch)\n\tfmt.Println(<-ch)\n}'
    ),
    "latex": ("\\\\begin{itemize}\n\\\\item \\\\texttt{asyncio.run}\n\\\\item $O(n \\\\log n)$\n\\\\end{itemize}"),
    "python_repl": ">>> import asyncio\n>>> asyncio.run(main())\nhello\n>>> loop = asyncio.get_event_loop()",
}
UNSEEN_ECHO_TITLES = [
    "Task: List the facts from the sources",
    "Section goal: the next section of the report",
    "We are asked to write the section as clear paragraphs using only the evidence",
    "Next, list the key facts from the sources, one per line, each with its source",
]
UNSEEN_ECHO_BODIES = [
    "As requested, I will write a short factual draft of the section for the objective, in plain prose. "
    "Each key fact will end with its source in brackets.",
    "Objective (DRAFTING round 2): write the section for the objective as clear paragraphs. "
    "Report topic: asynchronous programming.",
]


@pytest.mark.parametrize("name", sorted(UNSEEN_MARKUP))
def test_markup_the_generator_does_not_write_is_flagged(name, grounder):
    report = ReportState(TOPIC)
    added = report.append("Event loop", UNSEEN_MARKUP[name], [LOOP_CHUNK])
    assert MARKUP in [f.kind for f in Referee(grounder=grounder).review_round(report, changed_section=added.id)]


@pytest.mark.parametrize("title", UNSEEN_ECHO_TITLES)
def test_echo_titles_the_generator_does_not_write_are_flagged(title, grounder):
    report = ReportState(TOPIC)
    added = report.append(title, LOOP_CHUNK.text, [LOOP_CHUNK])
    flags = Referee(grounder=grounder).review_round(report, changed_section=added.id)
    assert [f.kind for f in flags] == [PROMPT_ECHO] and flags[0].evidence["title_echo"]


@pytest.mark.parametrize("body", UNSEEN_ECHO_BODIES)
def test_echo_bodies_the_generator_does_not_write_are_flagged(body, grounder):
    report = ReportState(TOPIC)
    added = report.append("Event loops", body, [LOOP_CHUNK])
    assert PROMPT_ECHO in [f.kind for f in Referee(grounder=grounder).review_round(report, changed_section=added.id)]


def test_prose_that_mentions_code_inline_is_not_markup(grounder):
    text = (
        "The asyncio.run(main()) call creates an event loop, runs the coroutine and closes the loop. "
        "Heaps keep a[k] <= a[2*k+1] for every k, so a[0] is always the smallest element.\n"
        "Use asyncio.create_task to schedule a coroutine on the running event loop."
    )
    report = ReportState(TOPIC)
    added = report.append("Running coroutines", text, [LOOP_CHUNK])
    assert MARKUP not in [f.kind for f in Referee(grounder=grounder).review_round(report, changed_section=added.id)]
