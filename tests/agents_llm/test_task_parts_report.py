"""write_report plans a section per part of the task and says which parts the documents do not
cover; the console ends with the files, the judge's score, the parts, time and tokens."""

from __future__ import annotations

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
        "How often should a compost heap be turned, and which dragons guard the heap?",
        compost_docs(tmp_path),
        **api_kwargs(tmp_path),
    )
    parts = {p.part: p for p in result.parts}
    assert list(parts) == ["How often should a compost heap be turned", "Which dragons guard the heap"]
    assert parts["How often should a compost heap be turned"].title == "Turning the heap"
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
    assert "not covered: Which dragons guard the heap" in text
    assert "judge:      score " in text and " rounds; tokens " in text
