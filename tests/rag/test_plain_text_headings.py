"""Plain text and man pages: words broken at a line end are joined, and a man page's sections
and indented subsections come out as headings, not glued to the sentence under them."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    for heading in ("NAME", "DESCRIPTION", "## Limits on the queue", "EXAMPLES"):
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


def test_a_page_name_broken_at_its_own_hyphen_keeps_it(tmp_path):
    """groff breaks a word with U+2010; an ASCII hyphen at a line end before "config(1)" is the
    page name's own (git-config(1)), while a plain-text word broken there is still joined."""
    path = tmp_path / "hooks.5.txt"
    path.write_text(
        "DESCRIPTION\n       The directory can be changed with core.hooksPath (see git-\n       config(1)); a hook is\n"
        "       skipped with the --no-veri-\n       fy option.\n",
        encoding="utf-8",
    )
    text = load_text(path).text
    assert "(see git-config(1))" in text and "--no-verify option" in text


# Real documents chosen before the reader was changed (tests/rag/data/plain_text/README.md says
# where each comes from): man pages rendered by man/col, and plain-text FAQs.
DATA = Path(__file__).parent / "data" / "plain_text"


def _loaded(name: str) -> tuple[list[str], list[str]]:
    """The lines of a fixture as the plain-text loader gives them, and the headings read back."""
    text = load_text(DATA / name).text
    return text.splitlines(), [t for t, _, _ in headings_in(text, marked_kinds=False)]


def _glued(title: str, lines: list[str]) -> list[str]:
    """The lines that run ``title`` into the text after it."""
    return [line for line in lines if line.lstrip("# ").startswith(title + " ")]


@pytest.mark.parametrize(
    ("name", "titles", "first_sentences"),
    [
        (
            "symlink.7.txt",
            [
                "Magic links",
                "Obtaining a file descriptor that refers to a symbolic link",
                "Handling of symbolic links by system calls and commands",
                "Commands traversing a file tree",
            ],
            ["Symbolic links are handled either by operating on the link itself, or by operating on"],
        ),
        (
            "path_resolution.7.txt",
            [
                "Step 1: start of the resolution process",
                "Step 2: walk along the path",
                "Step 3: find the final entry",
                "Mount points",
                "Bypassing permission checks: superuser and capabilities",
            ],
            [
                "Set the current lookup directory to the starting lookup directory.",
                'By convention, every directory has the entries "." and "..",',
            ],
        ),
        (
            "pipe.7.txt",
            ["I/O on pipes and FIFOs", "Pipe capacity", "/proc files", "PIPE_BUF", "Portability notes"],
            ["On Linux, the following files control how much memory can be used for pipes:"],
        ),
    ],
)
def test_a_man_page_subsection_title_is_a_heading_not_glued_to_its_first_sentence(name, titles, first_sentences):
    lines, headings = _loaded(name)
    for title in titles:
        assert title in headings, (name, title)
        assert not _glued(title, lines), (name, title)
    for sentence in first_sentences:
        assert any(line.startswith(sentence) for line in lines), (name, sentence)


@pytest.mark.parametrize(
    ("name", "questions", "answers"),
    [
        (
            "valgrind-FAQ.txt",
            [
                'How do you pronounce "Valgrind"?',
                'Where does the name "Valgrind" come from?',
                "I tried running a Java program (or another program that uses a just-in-time compiler) "
                "under Valgrind but something went wrong. Does Valgrind handle such programs?",
                "The stack traces given by Memcheck (or another tool) aren't helpful. How can I improve them?",
                "Is it possible to attach Valgrind to a program that is already running?",
                "Where can I get more help?",
            ],
            ['The "Val" as in the word "value".', "From Nordic mythology.", "Read the appropriate section(s)"],
        ),
        (
            "xz-faq.txt",
            [
                "What do the letters XZ mean?",
                "There are many LZMA related projects. How does XZ Utils relate to them?",
                "Why is liblzma named liblzma if its primary file format is .xz? Shouldn't it be e.g. libxz?",
                "I told xz to use many threads but it is using only one or two processor cores. What is wrong?",
                "The default build of liblzma is too big. How can I make it smaller?",
            ],
            ["A: Nothing. They are just two letters"],
        ),
    ],
)
def test_a_faq_question_wrapped_over_lines_is_a_heading_and_its_answer_stands_apart(name, questions, answers):
    lines, headings = _loaded(name)
    for question in questions:
        assert question in headings, (name, question)
    for answer in answers:
        assert any(line.startswith(answer) for line in lines), (name, answer)


def test_a_word_in_capitals_broken_by_groff_is_joined(tmp_path):
    path = tmp_path / "pipe.7.txt"
    text = "DESCRIPTION\n       If the pipe is full, then write(2) fails, with errno set to  EA\u2010\n       GAIN.   Otherwise it blocks.\n"
    path.write_text(text, encoding="utf-8")
    assert "If the pipe is full, then write(2) fails, with errno set to EAGAIN." in load_text(path).text
    # an ASCII hyphen at a line end may join two words of a name: it stays
    path.write_text("DESCRIPTION\n       The cable is UTP-\n       RJ45 wired.\n", encoding="utf-8")
    assert "UTP-" in load_text(path).text


def test_a_line_whose_sentence_goes_on_after_a_displayed_command_is_no_heading(tmp_path):
    """environ(7): "Bourne-style shells support the syntax", a displayed "NAME=value command", then
    "to create an environment variable definition ..." is one sentence, not a section."""
    path = tmp_path / "spool.7.txt"
    path.write_text(
        "DESCRIPTION\n       A job may be queued with the command\n\n           lpq -P name file\n\n"
        "       to place it on the named printer.\n\n       Printers\n\n       Each printer has a queue of its own.\n",
        encoding="utf-8",
    )
    titles = [t for t, _, _ in headings_in(load_text(path).text, marked_kinds=False)]
    assert "A job may be queued with the command" not in titles
    assert "Printers" in titles and "DESCRIPTION" in titles
