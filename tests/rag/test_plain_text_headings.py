"""Plain text and man pages: words broken at a line end are joined, and a man page's sections
and indented subsections come out as headings, not glued to the sentence under them."""

from __future__ import annotations

from rag.headings import headings_in
from rag.loaders import load_text

MAN_PAGE = """\
NAME
       spool - a queue of files for a printer

DESCRIPTION
       Each job is a file in /var/spool/prin\u2010
       ter/queue, named by its number.  A long-
       running job keeps its file.

   Limits on the queue
       A queue holds at most 64 jobs.

EXAMPLES
       The program below lists the jobs of one printer.
"""


def test_man_page_sections_and_hyphens(tmp_path):
    path = tmp_path / "spool.7.txt"
    path.write_text(MAN_PAGE, encoding="utf-8")
    text = load_text(path).text
    lines = text.splitlines()
    for heading in ("NAME", "DESCRIPTION", "Limits on the queue", "EXAMPLES"):
        assert heading in lines, heading
    assert (
        "Each job is a file in /var/spool/printer/queue, named by its number. A longrunning job keeps its file."
        in lines
    )
    assert "The program below lists the jobs of one printer." in lines
    titles = [t for t, _, _ in headings_in(text, marked_kinds=False)]
    assert "Limits on the queue" in titles and "EXAMPLES" in titles


def test_plain_text_hyphen_at_line_end(tmp_path):
    path = tmp_path / "note.txt"
    path.write_text("Put the heap in a spot that is shel-\ntered from wind.\n", encoding="utf-8")
    assert load_text(path).text.strip() == "Put the heap in a spot that is sheltered from wind."
