"""write_report plans a section per part of the task and says which parts the documents do not
cover; the console ends with the files, the judge's score, the parts, time and tokens."""

from __future__ import annotations

import re

from tests.agents_llm.test_export_and_api import api_kwargs
from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)


def compost_docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "heap.md").write_text(
        "# Keeping a compost heap\n\n## Turning the heap\n\nTurn the compost heap every one to two weeks "
        "so that air reaches the middle. A compost heap that is never turned takes a year to rot.\n\n"
        "## Watering the heap\n\nWater the compost heap in dry weather so that it stays as damp as a "
        "wrung-out sponge.\n"
    )
    return folder


def test_each_part_gets_a_section_or_a_line_saying_it_is_not_covered(tmp_path):
    from report_app.api import run_report

    result = run_report(
        "How often should a compost heap be turned, when is the heap watered, and which dragons guard the heap?",
        compost_docs(tmp_path),
        **api_kwargs(tmp_path),
    )
    parts = {p.part: p for p in result.parts}
    assert list(parts) == [
        "How often should a compost heap be turned",
        "When is the heap watered",
        "Which dragons guard the heap",
    ]
    assert parts["How often should a compost heap be turned"].title == "Turning the heap"
    # A heading that says just what the part asks is the part's section, not an echo of the task.
    assert parts["When is the heap watered"].title == "Watering the heap"
    assert parts["Which dragons guard the heap"].title is None and not parts["Which dragons guard the heap"].covered
    assert "- Which dragons guard the heap: the documents do not cover this." in result.markdown
    assert result.score is not None


def test_the_console_ends_with_what_a_user_needs(tmp_path):
    from tests.agents_llm.test_export_and_api import run_cli

    docs = compost_docs(tmp_path)
    proc = run_cli(
        tmp_path, "task=How often should a compost heap be turned, and which dragons guard the heap?", f"docs={docs}"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    tail = proc.stdout[proc.stdout.index("Report: ") :].splitlines()
    assert [line.split()[0] for line in tail[-4:]] == ["files:", "markdown:", "latex:", "trace:"]
    text = "\n".join(tail)
    assert "task parts: 1 of 2 covered" in text or "task parts: 0 of 2 covered" in text
    assert re.search(r"not covered:\s+Which dragons guard the heap", text)
    assert "judge:      score " in text and " rounds; tokens " in text


def test_a_section_under_the_parts_heading_that_speaks_of_something_else_does_not_cover_it():
    """The pipe man page's task: the heading closest to "what happens on an empty or full pipe" heads
    text about how pipes are opened; that section was written, but it does not answer the part."""
    from report_app.task_plan import PartPlan, mark_covered
    from agents_llm.sentence_reuse import content_stems

    parts = ["What happens when a process reads from an empty pipe or writes to a full one",
             "How large is a pipe's capacity", "When are writes to a pipe atomic"]  # fmt: skip
    own = [content_stems(p) - set().union(*(content_stems(q) for q in parts if q != p)) for p in parts]
    plans = [
        PartPlan(parts[0], "I/O on pipes and FIFOs", asks=tuple(sorted(own[0]))),
        PartPlan(parts[1], "Pipe capacity", asks=tuple(sorted(own[1]))),
        PartPlan(parts[2], "PIPE_BUF", asks=tuple(sorted(own[2]))),
    ]
    mark_covered(
        plans,
        [
            ("I/O on pipes and FIFOs", "The only difference between pipes and FIFOs is the manner in which they "
             "are created and opened. The channel is a byte stream."),
            ("Pipe capacity", "A pipe has a limited capacity; since Linux 2.6.11 it is 65,536 bytes."),
            ("PIPE_BUF", "Writes of less than PIPE_BUF bytes must be atomic."),
        ],
    )  # fmt: skip
    assert [p.covered for p in plans] == [False, True, True]
    assert plans[0].written and {"empti", "full"} <= set(plans[0].unanswered)
    assert "does not answer this" in plans[0].line() and "I/O on pipes and FIFOs" in plans[0].line()
    assert {"empty", "full"} <= set(plans[0].missing_words) and "empti" not in plans[0].line()  # words, not stems
    # The same section, answering: covered.
    mark_covered(plans, [("I/O on pipes and FIFOs", "If a process reads from an empty pipe, read blocks; "
                          "if a process writes to a full pipe, write blocks.")])  # fmt: skip
    assert plans[0].covered and not plans[1].written and plans[1].line().endswith("the documents do not cover this.")


def test_a_part_is_answered_by_a_sentence_that_names_its_words_together():
    """The users task's last part: a body that names "owned" in one sentence and "needing" in another,
    each about something else, does not say how a package that needs its own user creates it."""
    from report_app.task_plan import PartPlan, mark_covered
    from agents_llm.sentence_reuse import content_stems

    part = "How should a package that needs its own user create it"
    plans = [PartPlan(part, "Creating users", asks=tuple(sorted(content_stems(part) - {"user"})))]
    spread = (
        "The files in /var/mail are owned by the mail group. Programs needing network access run as nobody. "
        "Debian creates the staff group on every system."
    )
    mark_covered(plans, [("Creating users", spread)])
    assert plans[0].written and not plans[0].covered
    assert "does not answer this" in plans[0].line() and "its closest sentence lacks" in plans[0].line()
    answering = "A package that needs its own user should create it with adduser in its postinst script."
    mark_covered(plans, [("Creating users", spread + " " + answering)])
    assert plans[0].covered and not plans[0].unanswered
