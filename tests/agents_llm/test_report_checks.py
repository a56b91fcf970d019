"""The report checker finds what a reader trips over: each kind on a report that has it, none
on a clean one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agents_llm.report_checks import SourceText, check_sections, rule_agreement

ROOT = Path(__file__).resolve().parents[2]

# A man page as `man -P cat` prints it: sections at column 0, a subsection at column 3, text at 7,
# a word broken at a line end with groff's hyphen (U+2010).
MAN_PAGE = """\
NAME
       spool - a queue of files for a printer

DESCRIPTION
       The spooler keeps one directory per printer.  Each job is a file in the
       directory of its printer, named by its number.  So a job can be removed by
       deleting its file from /var/spool/prin\u2010
       ter/queue.

   Limits on the queue
       A queue holds at most 64 jobs.  These limits are set in the configuration
       file.

EXAMPLES
       The program below lists the jobs of one printer.
"""

CLEAN = [
    (
        "Description",
        [
            "The spooler keeps one directory per printer.",
            "Each job is a file in the directory of its printer, named by its number.",
            "So a job can be removed by deleting its file from /var/spool/printer/queue.",
        ],
    ),
    ("Limits on the queue", ["A queue holds at most 64 jobs."]),
]


def source_text_of(text: str, name: str) -> SourceText:
    """``text`` as a document file named ``name`` gives it: raw lines and the loader's text."""
    import tempfile

    from rag.loaders import load_text

    with tempfile.TemporaryDirectory() as folder:  # one per call: tests on parallel workers never share a file
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        return SourceText.of([text], [load_text(path).text])


def _sources() -> SourceText:
    return source_text_of(MAN_PAGE, "_spool.7.txt")


def _kinds(sections) -> list[str]:
    return sorted(f.kind for f in check_sections(sections, _sources(), agreement=rule_agreement))


def test_a_clean_report_has_no_finding():
    assert _kinds(CLEAN) == []


def test_each_fault_is_found():
    bad = [
        (
            "Description",
            [
                "So a job can be removed by deleting its file from /var/spool/prin- ter/queue.",  # dangling, cut
                "The spooler keeps one directory per printer.",
                "The spooler keeps one directory per printer.",  # repeated
                "EXAMPLES The program below lists the jobs of one printer.",  # glued, dangling (below)
                "Limits on the queue A queue holds at most 64 jobs.",  # glued
            ],
        ),
        ("Limits", ["These limits are set in the configuration file.", "A queue holds at most 32 jobs."]),
    ]
    found = check_sections(bad, _sources(), agreement=rule_agreement)
    by_kind = {k: [f.sentence for f in found if f.kind == k] for k in ("repeated", "glued", "cut", "dangling", "false")}
    assert by_kind["repeated"] == ["The spooler keeps one directory per printer."]
    assert len(by_kind["glued"]) == 2
    assert by_kind["cut"] == [bad[0][1][0]]
    assert set(by_kind["dangling"]) == {bad[0][1][0], bad[0][1][3], "These limits are set in the configuration file."}
    assert by_kind["false"] == ["A queue holds at most 32 jobs."]


def test_a_reversed_or_merged_claim_does_not_agree():
    source = "The writer blocks until the reader has taken the data."
    assert not rule_agreement("The writer does not block until the reader has taken the data.", source).agrees
    assert not rule_agreement(
        "The writer blocks until the reader has taken the data, as POSIX standardises.", source
    ).agrees
    assert rule_agreement("The writer blocks until the reader has taken the data.", source).agrees


def test_the_script_counts_a_run_folder_and_fails_on_faults(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "spool.7.txt").write_text(MAN_PAGE, encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.md").write_text(
        "# Spooling\n\n*Written by the handcrafted policy*\n\n## Examples\n\n"
        "EXAMPLES The program below lists the jobs of one printer.\n\nSources: [1]\n\n"
        "## References\n\n1. spool.7.txt\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "check_report.py"), str(run), "--docs", str(docs)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1, out.stderr
    assert "glued: 1" in out.stdout and "dangling: 1" in out.stdout and "repeated: 0" in out.stdout


# A plain-text list of terms, each on its own line over its indented description.
ACCOUNTS = """\
Static users

   root
          Root is the superuser. Its password is set at install time.

   sync
          The shell of user sync is /bin/sync. It flushes the disks.
"""


def accounts_sources() -> SourceText:
    return source_text_of(ACCOUNTS, "_accounts.txt")


def test_a_lower_case_term_glued_to_its_description_is_found():
    sources = accounts_sources()
    glued = "sync The shell of user sync is /bin/sync."
    found = check_sections([("Static users", [glued, "Root is the superuser."])], sources, agreement=rule_agreement)
    assert [(f.kind, f.sentence) for f in found] == [("glued", glued)]
    # A sentence that merely opens with a lower-case word is no glued term.
    assert not check_sections([("Static users", ["sync: The shell of user sync is /bin/sync."])], sources)


def test_a_sentence_quoted_from_a_list_item_is_the_documents():
    """A man page's points are bullets: their sentences support a report as its prose does."""
    page = (
        "OPTIONS\n"
        "       \u2022   A blank line is ignored.  Put a hash in front of a line to make it a\n"
        "           comment.\n\n"
        "       \u2022   At most 64 jobs are kept in the queue of one printer.\n"
    )
    sources = source_text_of(page, "_options.5.txt")
    quoted = [
        (
            "Options",
            [
                "Put a hash in front of a line to make it a comment.",
                "At most 64 jobs are kept in the queue of one printer.",
            ],
        )
    ]
    assert check_sections(quoted, sources, agreement=rule_agreement) == []
    changed = [("Options", ["At most 32 jobs are kept in the queue of one printer."])]
    assert [f.kind for f in check_sections(changed, sources, agreement=rule_agreement)] == ["false"]


def test_an_aside_in_parentheses_and_a_bare_pointer_are_dangling():
    """An aside comments on the sentence before it; "See X for further details." says nothing itself."""
    page = (
        "The spooler keeps one directory per printer. (If nothing else, the directory should be "
        "writable by the spooler.) Each job is a file in the directory of its printer. See the "
        "printing guide for further details.\n"
    )
    sources = source_text_of(page, "spool.txt")
    aside = "(If nothing else, the directory should be writable by the spooler.)"
    pointer = "See the printing guide for further details."
    found = check_sections([("Jobs", [aside, "Each job is a file in the directory of its printer.", pointer])], sources)
    assert sorted(f.sentence for f in found if f.kind == "dangling") == [aside, pointer]
    # After the sentence it comments on, the aside stands.
    kept = [("Jobs", ["The spooler keeps one directory per printer.", aside])]
    assert not [f for f in check_sections(kept, sources) if f.kind == "dangling"]


def test_a_sentence_after_a_bare_pointer_leans_on_the_one_before_the_pointer():
    page = (
        "A queue holds at most 64 jobs. See the printing guide for further details. "
        "These limits are set in the configuration file.\n"
    )
    sources = source_text_of(page, "spool.txt")
    from agents_llm.report_checks import missing_antecedent

    assert missing_antecedent("These limits are set in the configuration file.", [], sources) == (
        "A queue holds at most 64 jobs."
    )
    assert (
        missing_antecedent(
            "These limits are set in the configuration file.", ["A queue holds at most 64 jobs."], sources
        )
        is None
    )


def test_a_term_glued_to_its_description_opens_a_part_and_lends_it_its_antecedent():
    """A plain-text list of accounts puts each term on a line over its indented description; the
    loader glues the term to the description's first sentence ("lp Print jobs ... owned by this
    user"), whose "this user" is the term, not the sentence before it in the document."""
    page = (
        "ACCOUNTS\n\n"
        "   daemon\n"
        "          Some unprivileged daemons run as this user. (If nothing else, the uid\n"
        "          should be configurable.)\n\n"
        "   lp\n"
        "          Print jobs and spool files are owned by this user\n"
        "          and group. Some printer filters run as this user too.\n"
    )
    sources = source_text_of(page, "accounts.txt")
    from agents_llm.report_checks import missing_antecedent

    glued = next(s for d in sources.documents for s in d if "Print jobs" in s)
    assert missing_antecedent(glued, [], sources) is None
    # inside the part, a sentence still leans on the one before it
    assert missing_antecedent("Some printer filters run as this user too.", [], sources) == glued


def test_a_word_in_capitals_broken_at_a_line_end_is_counted_and_mended():
    from agents_llm.report_checks import broken_word, mend_broken_words

    sentence = "If the pipe is full, then write(2) fails, with errno set to EA\u2010 GAIN."
    assert broken_word(sentence) == "EA\u2010 GAIN"
    assert mend_broken_words(sentence).endswith("set to EAGAIN.")
    assert broken_word("The kernel returns EAGAIN to the caller.") is None


def test_a_conjunction_a_pointer_for_details_a_list_announced_and_a_sentence_about_its_page_are_dangling():
    page = (
        "A hook may refuse the commit by exiting with a non-zero status. Or it can rewrite the "
        "message and exit with zero. See the TEMPLATES section in spool-init(1) for details. "
        "When the rest of this manual page says spool it means the printer queue.\n\n"
        "What follows is a list of the hooks a spooler runs.\n\n"
        "- pre-print runs before a job is printed.\n"
    )
    sources = source_text_of(page, "hooks.txt")
    alone = [
        "Or it can rewrite the message and exit with zero.",
        "See the TEMPLATES section in spool-init(1) for details.",
        "When the rest of this manual page says spool it means the printer queue.",
        "What follows is a list of the hooks a spooler runs.",
    ]
    found = check_sections([("Hooks", alone)], sources)
    assert sorted(f.sentence for f in found if f.kind == "dangling") == sorted(alone)
    # With what it continues before it, the conjunction stands; the announced list after it, the announcement.
    whole = [
        "A hook may refuse the commit by exiting with a non-zero status.",
        "Or it can rewrite the message and exit with zero.",
    ]
    listed = ["What follows is a list of the hooks a spooler runs.", "pre-print runs before a job is printed."]
    assert not [f for f in check_sections([("Hooks", whole), ("List", listed)], sources) if f.kind == "dangling"]


PUSH_PAGE = """\
HOOKS
   pre-push
       This hook is called by git push.  It takes two parameters.  The hook
       may stop the push by exiting with a non-zero status.

   post-merge
       This hook is invoked by git merge.  The hook cannot affect the outcome
       of the merge.
"""


def test_the_noun_a_term_was_described_by_names_that_term_and_quoted_alone_dangles():
    """In pre-push's part, "The hook may stop the push ..." means pre-push; quoted apart from
    the opening it could be any hook. With the term before it in its section it reads."""
    sources = source_text_of(PUSH_PAGE, "_hooks.5.txt")
    alone = "The hook may stop the push by exiting with a non-zero status."
    found = check_sections([("Hooks", [alone])], sources, agreement=rule_agreement)
    assert [(f.kind, f.detail) for f in found] == [("dangling", "speaks of 'pre-push' without naming it")]
    named = "pre-push: The hook may stop the push by exiting with a non-zero status."
    assert not check_sections([("Hooks", [named])], sources, agreement=rule_agreement)
    opened = ["pre-push: This hook is called by git push.", alone]
    assert not check_sections([("Hooks", opened)], sources, agreement=rule_agreement)
    # The opening sentence itself, and a sentence of the part that names its own subject, are fine.
    assert sources.unnamed_term("This hook is called by git push.") is None
    assert sources.unnamed_term("It takes two parameters.") is None


def test_a_source_sentence_that_opens_on_a_joining_word_is_the_rest_of_one_and_never_quoted():
    """A displayed command cuts a man page's sentence in two; its second half ("to place it on ...")
    is a sentence of the source but a fragment in a report. A command's name may open one."""
    from agents_llm.sentence_reuse import is_prose

    page = (
        "DESCRIPTION\n       A job may be queued with the command\n\n           lpq -P name file\n\n"
        "       to place it on the named printer and print it in turn.\n\n"
        "       lpq lists the jobs that wait in each queue.\n"
    )
    sources = source_text_of(page, "_spool.7.txt")
    half = "to place it on the named printer and print it in turn."
    found = check_sections([("Queue", [half])], sources, agreement=rule_agreement)
    assert [f.kind for f in found] == ["cut"] and not is_prose(half)
    whole = "lpq lists the jobs that wait in each queue."
    assert not check_sections([("Queue", [whole])], sources, agreement=rule_agreement) and is_prose(whole)
