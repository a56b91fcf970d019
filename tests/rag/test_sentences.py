"""A wrapped document yields whole sentences on every loader, and a fragment is refused."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rag.chunking import chunk_text
from rag.loaders import load_document
from rag.sentences import begins_sentence, split_sentences, unwrap
from rag.tokenization import WordTokenizer
from tests.rag.docs import write_pdf

SENTENCES = [
    "It does not, of course, provide the availability benefits of a private index or a vendored library.",
    "The pyvenv script was the recommended tool for creating virtual environments for Python 3.3 and 3.4, "
    "and is deprecated in Python 3.6.",
    "Requirement files should not use quotes around version specifiers, e.g. around a pinned release.",
    "Mr. Smith keeps a mirror of the index at 3 p.m. every day, so installs continue when the network fails.",
]
ITEMS = ["Create the environment with the venv module.", "Activate it before installing anything."]
CODE = "python3 -m venv /path/to/env"


def _wrapped(width: int) -> list[str]:
    """The prose as a typesetter wraps it: one paragraph, lines cut at `width` columns."""
    return textwrap.wrap(" ".join(SENTENCES), width=width, break_on_hyphens=False)


def _write_md(path: Path) -> Path:
    body = "\n".join(_wrapped(52))
    items = "\n".join(f"- {item}" for item in ITEMS)
    path.write_text(f"# Mirrors\n\n{body}\n\n{items}\n\n```\n{CODE}\n```\n", encoding="utf-8")
    return path


def _write_txt(path: Path) -> Path:
    path.write_text("Mirrors\n=======\n\n" + "\n".join(_wrapped(60)) + "\n", encoding="utf-8")
    return path


def _write_html(path: Path) -> Path:
    body = "\n".join(_wrapped(45))
    items = "".join(f"<li>{item}</li>" for item in ITEMS)
    path.write_text(
        f"<html><body><h1>Mirrors</h1><p>{body}</p><ul>{items}</ul><pre>{CODE}</pre></body></html>", encoding="utf-8"
    )
    return path


def _write_pdf(path: Path) -> Path:
    # Printed lines, with the typesetter's end-of-line hyphen in "avail-/ability".
    lines = _wrapped(58)
    i = next(n for n, line in enumerate(lines) if "availability" in line)
    head, tail = lines[i].split("availability", 1)
    lines[i : i + 1] = [head + "avail-", "ability" + tail]
    joined = "\n".join(lines)
    assert "avail-\nability" in joined  # the fixture really hyphenates
    return write_pdf(path, ["Mirrors\n" + joined + "\n" + "\n".join(f"- {item}" for item in ITEMS)])


def _write_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.add_heading("Mirrors", level=1)
    # Soft line breaks inside one paragraph, as a pasted wrapped text has.
    document.add_paragraph("\n".join(_wrapped(50)))
    for item in ITEMS:
        document.add_paragraph(item, style="List Bullet")
    document.save(str(path))
    return path


WRITERS = {"md": _write_md, "txt": _write_txt, "html": _write_html, "pdf": _write_pdf, "docx": _write_docx}


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_a_wrapped_document_yields_only_whole_sentences_on_every_loader(tmp_path, kind):
    document = load_document(WRITERS[kind](tmp_path / f"mirrors.{kind}"))
    found = split_sentences(document.text, pdf=kind == "pdf")
    prose = [s for s in found if s.endswith(".") and not s.lstrip("-\u2022 ").startswith(tuple(ITEMS))]
    assert prose == SENTENCES, found
    if kind != "txt":  # the list items stay items, apart from the prose
        for item in ITEMS:
            assert any(s.endswith(item) and s != item + " " + SENTENCES[-1] for s in found), (item, found)
    # Every piece begins a sentence of the loaded text, and every chunk begins with one.
    assert all(begins_sentence(s, document.text) for s in found if not s.startswith("[PAGE"))
    for chunk in chunk_text(document.text, f"mirrors.{kind}", WordTokenizer(), max_tokens=48, overlap_tokens=6):
        first = split_sentences(chunk.text)[0]
        assert any(first == s or first.endswith(s) for s in found), (first, chunk.text)


def test_markdown_code_and_lists_stay_apart_and_unwrap_is_idempotent():
    text = _write_md_text()
    once = unwrap(text)
    assert unwrap(once) == once
    assert f"\n\n    {CODE}\n" in once  # the indented code line is not joined to the list item above
    found = split_sentences(text)
    assert CODE in found
    assert f"- {ITEMS[0]}" in found and f"- {ITEMS[1]}" in found
    assert "# Mirrors" in found


def _write_md_text() -> str:
    return "# Mirrors\n\n" + "\n".join(_wrapped(40)) + "\n- " + ITEMS[0] + "\n- " + ITEMS[1] + f"\n\n    {CODE}\n"


def test_a_word_that_opens_with_a_period_ends_no_sentence():
    # fnmatch's page: "... with the extension .txt:" was cut into "... extension ." and "txt:".
    text = (
        "This example prints the file names in the current directory with the extension .txt: it "
        "matches them one by one. Settings live in `.bashrc` and (.profile) files. They are read at login."
    )
    assert split_sentences(text) == [
        "This example prints the file names in the current directory with the extension .txt: it "
        "matches them one by one.",
        "Settings live in `.bashrc` and (.profile) files.",
        "They are read at login.",
    ]


def test_a_fragment_cut_at_a_line_wrap_does_not_begin_a_sentence():
    source = "It does not, of course,\nprovide the benefits of a mirror. Use pip\nto install it."
    assert begins_sentence("It does not, of course, provide the benefits of a mirror.", source)
    assert begins_sentence("Use pip to install it.", source)
    assert not begins_sentence("provide the benefits of a mirror.", source)
    assert not begins_sentence("to install it.", source)
    assert not begins_sentence("Something the source never says.", source)
    # A chunk that starts mid-sentence: its opening words begin no sentence.
    assert not begins_sentence("the recommended tool for environments.", "the recommended tool for environments.")


def test_a_term_entry_after_a_full_stop_is_a_sentence_of_its_own():
    """A report joins a man page's or a list's lower-case term to its description ("list:
    Mailing list ..."); after the previous entry's ".)" it is still a new sentence, or a
    checker reads the previous entry's "nothing" as this one's negation."""
    text = (
        "New applications should not behave this way. (If nothing else, the group should be "
        "configurable.) list: Mailing list archives and data are owned by this user and group."
    )
    assert split_sentences(text) == [
        "New applications should not behave this way.",
        "(If nothing else, the group should be configurable.)",
        "list: Mailing list archives and data are owned by this user and group.",
    ]
    # An abbreviation's period opens no entry.
    assert split_sentences("Pick a group, e.g. staff: Allows local changes.") == [
        "Pick a group, e.g. staff: Allows local changes."
    ]
