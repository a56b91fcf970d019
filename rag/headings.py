"""The headings of the ingested documents: what each document says its parts are about.

A report planned from the documents' own headings covers what they treat as central, in
words they use. The headings are read back from the stored chunks (a chunk keeps its
document's lines, one paragraph per line), so no ingest is needed and every loader counts:

- a Markdown or HTML heading is a ``#`` line (the HTML loader writes them, a plain-text
  heading underlined with ``===`` or ``---`` becomes one);
- a PDF, plain-text or DOCX heading has no mark: it is a one-line paragraph, short, opening
  with a capital or an outline number, with no end punctuation and no trailing function word
  (a line cut from a sentence ends on one: "Each element has a type attribute giving").

What is left out: code comments and shell prompts that open with ``#`` (no capital, no
outline number, not a name and a dash: "# glob — Unix style pathname pattern expansion" is a
reference page's title), dates, versions and e-mail lines (mostly not words), a line found on three
or more pages (a running header or footer), and any line the injection guard flags (a
heading reaches the agents' prompts as a section title).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Iterable, Iterator, List, Optional, Tuple

from rag.guard import find_injections
from rag.sentences import Block, blocks
from rag.store_records import decode_locations

# Unmarked lines are headings only in documents without heading markup.
UNMARKED_HEADING_KINDS = frozenset({"pdf", "txt", "docx"})
MAX_HEADING_WORDS = 12
MAX_HEADING_CHARS = 90
RUNNING_HEADER_PAGES = 3  # a line on this many pages is a page header or footer
UNDER_HEADING_CHARS = 400  # what a heading's section says, for ranking it against a topic

_MARKS = re.compile(r"^\s*#{1,6}\s+")
_CODE_SPAN = re.compile(r"`[^`']+`")
_OUTLINE_NUMBER = re.compile(r"^(?:[A-Z]\.|\d{1,2}(?:\.\d{1,2})*\.?)\s+(?=\S)")  # "3.1 ", "2. ", "A. "
_QUESTION_MARK = re.compile(r"^Q\d*[:.)]\s+(?=\S)")  # a plain-text FAQ's "Q:  What is ...?"
# A FAQ's question, numbered or marked "Q:", may run to a few wrapped lines: its words are the
# title of the answer under it.
MAX_QUESTION_CHARS = 240
MAX_QUESTION_WORDS = 40
_NOT_TITLE_CHARS = re.compile(r"[\\{}=<>|@\u00a9$^~\[\]]|https?:|\s{2}")  # a run of spaces: table columns
_WORD = re.compile(r"^[A-Za-z][\w'\u2019\-.]*$")  # a word or an identifier
_END_PUNCTUATION = re.compile(r"[.,;:!][)\]\"'\u201d\u2019]*$")  # "... setfsuid(2).)": a sentence's end
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_CALL = re.compile(r"^((?:new\s+)?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\(.*\)$")  # a function's signature
# "glob — Unix style pathname pattern expansion": a reference page's title names its module, in lower case.
_NAMED_TITLE = re.compile(r"^[A-Za-z_][\w.]*\s+[\u2014\u2013]\s+[A-Za-z]")
_DATE = re.compile(rf"^(?:\d{{1,2}}\s+)?{_MONTH}(?:\s+\d{{1,2}},?)?\s+\d{{4}}$", re.IGNORECASE)
# A line that ends on one of these was cut from a sentence.
_TRAILING_FUNCTION_WORDS = frozenset(
    "a an the of to in on at by for from with and or but as is are was were be that which who whose "
    "its their this these those into than then when where if".split()
)


@dataclass(frozen=True)
class DocumentHeading:
    """One heading of one document, where it stands, and the first words of what it heads."""

    title: str  # the heading's words: no '#' marks, no outline number
    level: int  # 1 for a top heading ('#' count, or the outline number's depth); 0 unknown
    source: str  # file name as cited
    source_path: str
    page: Optional[int]
    chunk_id: str
    ordinal: int  # the chunk's place in its file
    position: int  # the heading's place in its chunk
    under: str = ""  # the text that follows the heading in its chunk (up to UNDER_HEADING_CHARS)


def _outline_depth(number: str) -> int:
    return number.strip().rstrip(".").count(".") + 1


def heading_title(line: str, *, marked_kinds: bool) -> Optional[Tuple[str, int]]:
    """(title, level) when ``line`` is a heading, else None. ``marked_kinds``: the document marks
    its headings with '#', so an unmarked line is none."""
    line = line.strip()
    marks = _MARKS.match(line)
    if marks is None and marked_kinds:
        return None
    # A Sphinx page's permalink mark follows its heading's words when the page is read as text.
    title = (line[marks.end() :] if marks else line).rstrip("\u00b6").rstrip()
    # "## `ffi_call`": a name, which may open in lower case (a quoted span, not TeX's `quote')
    code = bool(_CODE_SPAN.search(title))
    title = re.sub(r"`|\*\*", "", title.rstrip("#")).strip()  # the name, not its markup
    call = _CALL.match(title)
    if call:  # "querystring.parse(str[, sep[, eq]])": an API reference names the function, not its arguments
        title = f"{call.group(1)}()"
    numbered = _OUTLINE_NUMBER.match(title)
    level = _outline_depth(numbered.group(0)) if numbered else (marks.group(0).count("#") if marks else 0)
    if numbered:
        title = title[numbered.end() :].strip()
    asked = _QUESTION_MARK.match(title)
    if asked:
        title = title[asked.end() :].strip()
    question = bool(numbered or asked) and title.endswith("?")
    words = title.split()
    if not words:
        return None
    if question:
        if len(words) > MAX_QUESTION_WORDS or len(title) > MAX_QUESTION_CHARS:
            return None
    elif asked or len(words) > MAX_HEADING_WORDS or len(title) > MAX_HEADING_CHARS:
        return None
    # "## /proc files": a marked title may open with a path.
    path = bool(marks and re.match(r"/[A-Za-z]", title))
    if _NOT_TITLE_CHARS.search(title) or _END_PUNCTUATION.search(title) or not (title[:1].isalnum() or path):
        return None
    plain = [w.strip("()\"'\u201c\u201d?,") for w in words]
    if sum(1 for w in plain if _WORD.match(w)) * 2 < len(words) or not any(len(w) >= 3 for w in plain):
        return None  # a date, a version, a table row, an option list
    if _DATE.match(title):
        return None  # "February 1987", "12 March 2021": a title page's date
    named = bool(marks and _NAMED_TITLE.match(title))
    if not (title[:1].isupper() or code or named or path or (numbered and (marks or not marked_kinds))):
        return None  # "# callgrind format": a comment in a code sample
    if (
        marks is None
        and not question
        and (plain[-1].lower() in _TRAILING_FUNCTION_WORDS or not numbered and len(words) > 8)
    ):
        return None  # a line cut from a sentence
    if find_injections(title):
        return None
    return title, level


# A paragraph that goes on with a sentence begun before it: "to create an environment variable
# definition ..." after "Bourne-style shells support the syntax" and a displayed "NAME=value command".
CONTINUATION = re.compile(
    r"^(?:to|and|or|but|nor|which|that|of|in|for|with|where|when|while|as|by|from|is|are|was|were|then|than|"
    r"so|because|if|unless|until|into|onto|on|at)\b"
)
MAX_DISPLAY_WORDS = 8  # a displayed line between a sentence's halves: a command, a formula


def _sentence_goes_on(every: List[Block], n: int) -> bool:
    """Whether the line at ``n`` begins a sentence that goes on after it, at once or after one
    displayed line: then it is no heading, whatever its shape."""
    for k in (n + 1, n + 2):
        if k >= len(every):
            return False
        if CONTINUATION.match(every[k].text.lstrip()):
            return True
        short = every[k].kind == "code" or len(every[k].text.split()) <= MAX_DISPLAY_WORDS
        if not short or every[k].kind == "heading":
            return False
    return False


def heading_blocks(text: str, *, marked_kinds: bool) -> Iterator[Tuple[Block, Optional[Tuple[str, int]]]]:
    """Each block of one chunk's text with its (title, level) when it is a heading, else None:
    the one walk every reader of a chunk's headings shares, so their positions agree."""
    every = blocks(text)
    for n, block in enumerate(every):
        found = None
        if block.kind == "heading" or (block.kind == "prose" and "\n" not in block.text):
            found = heading_title(block.text, marked_kinds=marked_kinds)
            if found is not None and block.kind == "prose" and _sentence_goes_on(every, n):
                found = None
        elif block.kind == "item" and block.text.endswith("?") and not _is_item(every, n + 1):
            # " 1. Is zlib Y2K-compliant?" over its answer: a FAQ's numbered question reads as a
            # list item; one that a paragraph (not the next item) follows heads that answer.
            found = heading_title(block.text, marked_kinds=marked_kinds)
            found = found if found is not None and _OUTLINE_NUMBER.match(block.text.strip()) else None
        yield block, found


def _is_item(every: List[Block], n: int) -> bool:
    return n < len(every) and every[n].kind == "item"


def headings_in(text: str, *, marked_kinds: bool) -> List[Tuple[str, int, str]]:
    """(title, level, the text under it) for each heading of one chunk's text, in order."""
    out: List[Tuple[str, int, str]] = []
    for block, found in heading_blocks(text, marked_kinds=marked_kinds):
        if found is not None:
            out.append((found[0], found[1], ""))
        elif out and block.kind in ("prose", "item") and len(out[-1][2]) < UNDER_HEADING_CHARS:
            title, level, under = out[-1]
            out[-1] = (title, level, (under + " " + block.text).strip()[:UNDER_HEADING_CHARS])
    return out


def heading_key(title: str) -> str:
    """A heading's words, lower case, without punctuation: two spellings of one heading match."""
    return " ".join(re.findall(r"[a-z0-9]+", title.lower()))


# A heading's tail after one of these may be the document set's name, repeated on every page's
# title: "The Basics (libffi: the portable foreign function interface library)", "venv — Python
# 3.11 documentation".
_TAIL = re.compile(r"\s+(?:\([^()]+\)|[\u2014\u2013|]\s+.+|-\s+.+)$")
RUNNING_TAIL_FILES = 3  # a tail on the headings of this many files is the set's name, not the heading's


def _running_tails(heads: Iterable[DocumentHeading]) -> set[str]:
    files: dict[str, set] = defaultdict(set)
    for h in heads:
        m = _TAIL.search(h.title)
        if m and m.start() > 0:
            files[m.group(0).strip()].add(h.source_path)
    return {tail for tail, where in files.items() if len(where) >= RUNNING_TAIL_FILES}


def _without_tail(title: str, tails: set[str]) -> str:
    m = _TAIL.search(title)
    return title[: m.start()].strip() if m and m.start() > 0 and m.group(0).strip() in tails else title


def without_tail(title: str) -> str:
    """`title` without a trailing parenthesis or dash clause, whatever it says (to match a heading
    line as written against a heading whose shared tail `document_headings` took off)."""
    m = _TAIL.search(title)
    return title[: m.start()].strip() if m and m.start() > 0 else title


_TRAILING_NUMBER = re.compile(r"^(.*\D)\s(\d{1,4})$")


def _numbered_page_line(title: str, page: Optional[int]) -> Optional[Tuple[str, int]]:
    """What a running header that ends on its printed page number ("Chapter 4: Function
    reference 22") has in common from page to page: its words without the number, and how far
    the number runs from the file's page (a manual's front matter is unnumbered; the same for
    every chapter's header). A heading whose number does not follow its page ("Exercise 1" on
    page 2, "Exercise 2" on page 5) shares none. None for a line with no such number or no page."""
    m = _TRAILING_NUMBER.match(title.strip())
    if m is None or page is None:
        return None
    return (heading_key(m.group(1)), int(m.group(2)) - page)


def document_headings(chunks: Iterable[Tuple[str, str, dict]]) -> List[DocumentHeading]:
    """The headings in ``chunks`` ((id, text, metadata) as the store keeps them), in document
    order, each once per file (chunks overlap: a heading found twice keeps its first place and
    the longer text under it); running headers and footers left out, and a tail that the
    headings of several files share (the document set's name) taken off."""
    raw: List[DocumentHeading] = []
    lines_of: List[set] = []  # per heading in raw: the keys its line is counted under
    pages: dict[object, set] = defaultdict(set)
    for chunk_id, text, metadata in chunks:
        ordinal = int(metadata.get("ordinal", 0))
        for key, entry in decode_locations(metadata).items():
            marked = entry.get("kind", "") not in UNMARKED_HEADING_KINDS
            page = entry["pages"][0] if entry.get("pages") else None
            for position, (title, level, under) in enumerate(headings_in(text, marked_kinds=marked)):
                # The line, counted on each page its chunk spans; and, when it ends on a number, as
                # a header numbered from each of those pages (only one is the page it is on).
                lines: set = {heading_key(title)}
                pages[heading_key(title)].update((key, p) for p in entry.get("pages") or [None])
                for p in entry.get("pages") or []:
                    numbered = _numbered_page_line(title, p)
                    if numbered is not None:
                        # Counted as this header, and as any header of the file at this offset:
                        # each chapter's header may show on only two pages ("Chapter 2: ... 3").
                        offset = (key, numbered[1])
                        lines |= {numbered, offset}
                        pages[numbered].add((key, p))
                        pages[offset].add((key, p))
                raw.append(DocumentHeading(title, level, entry["name"], key, page, chunk_id, ordinal, position, under))
                lines_of.append(lines)
    running = {k for k, where in pages.items() if len({p for _, p in where if p is not None}) >= RUNNING_HEADER_PAGES}
    tails = _running_tails(raw)
    found: dict[Tuple[str, str], DocumentHeading] = {}
    for here, lines in zip(raw, lines_of):
        if lines & running:
            continue
        here = replace(here, title=_without_tail(here.title, tails))
        place = (here.source_path, heading_key(here.title))
        old = found.get(place)
        if old is not None:
            first = old if (old.ordinal, old.position) <= (here.ordinal, here.position) else here
            here = replace(first, under=max(old.under, here.under, key=len))
        found[place] = here
    return sorted(found.values(), key=lambda h: (h.source_path, h.ordinal, h.position))


def store_headings(store) -> List[DocumentHeading]:
    """Every heading of the documents in ``store`` (a RagStore), read from its chunks."""
    return document_headings(store.iter_chunks())
