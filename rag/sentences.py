"""Sentences of a document by their real boundaries, not by its line breaks.

Source text comes wrapped: Markdown and plain text at a fixed width, PDF pages one
printed line per line (hyphenated at the margin), DOCX paragraphs with soft breaks. A
sentence cut at such a break reads as a sentence and says something else ("provide the
availability benefits ..." from "It does not, of course, provide ..."). So:

- `unwrap` joins the wrapped lines of each paragraph into one line (undoing a PDF's
  end-of-line hyphenation) and keeps apart what is not running prose: headings, list
  items, table rows, block quotes, fenced and indented code, shell and REPL lines and
  `[PAGE N]` markers. Paragraphs come out separated by a blank line, so unwrapping
  unwrapped text changes nothing.
- `split_sentences` cuts each paragraph with pySBD (rule-based, no model, no download);
  a heading, list item, table row or code block is one unit, never merged with prose.
- `sentence_starts` gives the cheap boundaries (line starts, `. ` before a capital) the
  chunker snaps its windows to, so a chunk begins where a sentence does.
- `begins_sentence` tells whether a sentence quoted from a source text begins a
  sentence there: the check that keeps fragments out of a report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from statistics import median
from typing import List

_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022\u25aa\u25e6\u2013]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])\s+\S")
_HEADING = re.compile(r"^\s*#{1,6}(\s|$)")
_SETEXT = re.compile(r"^\s*(=+|-+)\s*$")
_PLAIN_UNDERLINE = re.compile(r"^\s*(=+|-+|~{3,})\s*$")
_STATEMENT_END = re.compile(r"[.!:;,][\"'\u201d\u2019)\]]*$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_TABLE = re.compile(r"^\s*\||\s\|\s")
_QUOTE = re.compile(r"^\s*>")
_PAGE = re.compile(r"^\[PAGE \d+\][ \t]*$")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+\S")  # reStructuredText directives and comments
_SHELL = re.compile(r"^\s*(?:\$|>>>|\.\.\.|%|#!)\s")
_INDENTED = re.compile(r"^(?: {4}|\t)")
_HYPHENATED = re.compile(r"[A-Za-z]{2}[-\u2010\u00ad]$")  # groff breaks words with U+2010
# A word in capitals broken by groff ("EA\u2010" / "GAIN."): only groff's and the soft hyphen, since an
# ASCII hyphen at a line end may join two words of a compound name.
_CAPS_BROKEN = re.compile(r"[A-Z]{2}[\u2010\u00ad]$")
_CAPS_GOES_ON = re.compile(r"[A-Z]{2,}(?![a-z])")
# A man page's name broken at its own hyphen ("see git-" / "config(1)"): the ASCII hyphen is the
# name's, so the line is joined with it kept ("git-config(1)", not "gitconfig(1)").
_PAGE_NAME_GOES_ON = re.compile(r"[a-z][\w.+-]*\(\d[a-z]*\)")
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")
# Where a sentence can start inside a line: after . ! or ? (closing quotes and brackets
# aside) and a space, before a capital, digit, quote or bracket.
_INLINE_START = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)\]]*[ \t]+(?=[A-Z0-9\"'\u201c\u2018(\[])")
_LINE_START = re.compile(r"^[ \t]*(?=\S)", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """A unit of a document: `kind` is prose, heading, item (list item, table row,
    quote, directive) or code; prose is one paragraph on one line."""

    kind: str
    text: str


def _structural(line: str) -> bool:
    return bool(
        _HEADING.match(line)
        or _RULE.match(line)
        or _TABLE.search(line)
        or _QUOTE.match(line)
        or _PAGE.match(line)
        or _DIRECTIVE.match(line)
    )


class _OpenBlock:
    """The paragraph or list item being read: its lines are kept as pieces and joined once
    at the end, so a paragraph of 40,000 lines costs linear time, not quadratic."""

    def __init__(self, first: str, kind: str, indent: int = 0) -> None:
        self.pieces = [first]
        self.kind = kind
        self.lines = 1
        self.indent = indent  # the first line's

    def join(self, right: str) -> None:
        right = right.strip()
        self.lines += 1
        last = self.pieces[-1]
        if last.endswith("-") and _PAGE_NAME_GOES_ON.match(right):
            self.pieces[-1] = last + right
        elif (_HYPHENATED.search(last[-3:]) and right[:1].islower()) or (
            _CAPS_BROKEN.search(last[-3:]) and _CAPS_GOES_ON.match(right)
        ):
            self.pieces[-1] = last[:-1] + right  # "segmen-" + "tation" -> "segmentation", in every kind of text
        else:
            self.pieces[-1] = last.rstrip()
            self.pieces.append(right)

    @property
    def single_line(self) -> bool:
        return self.lines == 1

    @property
    def text(self) -> str:
        return " ".join(self.pieces)


# A man page's section or subsection title: up to twelve words, opening with a capital, a path
# ("/proc files") or a dot (". and .."), no code's characters, ending on no comma, colon or
# sentence's full stop.
_SECTION_LINE = re.compile(r"^(?:[A-Z]|/[A-Za-z]|\.\.? )[^\s{}<>=|\\;]*(?: [^\s{}<>=|\\;]+){0,11}$")
_NO_TITLE_END = re.compile(r"[,;:]$|[\w)\]\"']\.$")
MAX_SECTION_CHARS = 80


def _heads_indented_part(line: str, next_line: str | None) -> bool:
    """A plain-text line that heads the lines under it: short, no end punctuation, and less
    indented than the line after it: a man page's "EXAMPLES" in capitals at column 0 over text
    at column 7, its subsection "   Pipe capacity" at column 3 over text at 7. A line this
    layout marks is a title whatever its length up to twelve words, so the reader keeps it apart
    from the paragraph under it instead of running one into the other."""
    if next_line is None or not next_line.strip():
        return False
    indent = len(line) - len(line.lstrip())
    title = " ".join(line.split())
    if indent == 0 and not title.isupper():
        return False  # at column 0 a man page's sections are in capitals; other lines open a paragraph
    return (
        indent <= 4
        and len(next_line) - len(next_line.lstrip()) > indent
        and len(title) <= MAX_SECTION_CHARS
        and bool(_SECTION_LINE.match(title))
        and not _NO_TITLE_END.search(title)
    )


# A plain-text FAQ's question: numbered ("4.2.", "12)") or marked "Q:", its words wrapped over
# at most QUESTION_LINES lines, the last ending in "?"; the answer may follow on the next line.
_QUESTION_OPEN = re.compile(r"^\s*(?:\d{1,3}(?:\.\d{1,3})*[.)]|Q\d*[:.)])\s+\S")
QUESTION_LINES = 3


def _question_goes_on(lines: List[str], n: int, indent: int, room: int) -> bool:
    """Whether the question opened at column `indent` goes on after line `n`, which ends in "?":
    the next lines hang under its text and, within `room` lines, one ends in "?" too ("Q:  Why is
    ...?" over "    Shouldn't it ...?"). An answer indented under its question ends in no "?"."""
    for line in lines[n + 1 : n + 1 + room]:
        if not line.strip() or len(line) - len(line.lstrip()) <= indent:
            return False
        if line.rstrip().endswith("?"):
            return True
    return False


def blocks(text: str, *, pdf: bool = False, indented_code: bool = True) -> List[Block]:
    """The blocks of `text` (see the module doc). `pdf`: lines are printed lines, so
    hyphens at their ends are undone, and a short line that ends a sentence, or a short
    line with no end punctuation (a heading), ends its paragraph. `indented_code`: lines
    indented by four spaces after a blank line are code (Markdown); plain text indents
    paragraphs too, so its loader turns this off."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    plain = not pdf and not indented_code  # plain text: a man page's or a note's
    typical = median([len(x.strip()) for x in lines if len(x.strip()) > 20] or [0]) if pdf else 0
    out: List[Block] = []
    current: _OpenBlock | None = None  # the open paragraph or list item
    fence: List[str] = []
    in_fence = False
    previous_blank = True

    def flush() -> None:
        nonlocal current
        if current is not None:
            out.append(Block(current.kind, current.text))
            current = None

    for n, raw in enumerate(lines):
        line = raw.rstrip()
        stripped = " ".join(line.split()) if plain else line.strip()  # justified text's double spaces
        if in_fence:
            fence.append(line)
            if _FENCE.match(line):
                out.append(Block("code", "\n".join(fence)))
                fence.clear()
                in_fence = False
            continue
        if not stripped:
            flush()
            previous_blank = True
            continue
        underline = plain and current is not None and current.kind == "prose" and _PLAIN_UNDERLINE.match(line)
        if underline and _STATEMENT_END.search(current.text if current else ""):
            # Under a paragraph that ends a statement, a line of dashes is a rule, not an underline.
            flush()
            out.append(Block("item", stripped))
        elif underline and current is not None:
            # Plain text underlines a title with ~~~ too; a fence opens with ``` or ~~~ on no title.
            level = "#" if stripped.startswith("=") else "##"
            out.append(Block("heading", f"{level} {current.text}"))
            current = None
        elif _FENCE.match(line):
            flush()
            fence.append(line)
            in_fence = True
        elif _SETEXT.match(line) and current is not None and current.kind == "prose" and not pdf:
            level = "#" if stripped.startswith("=") else "##"
            out.append(Block("heading", f"{level} {current.text}"))  # a heading underlined with === or ---
            current = None
        elif _structural(line):
            flush()
            out.append(Block("heading" if _HEADING.match(line) else "item", stripped))
        elif _SHELL.match(line) or (
            indented_code
            and not pdf
            and _INDENTED.match(line)
            and (previous_blank or (out and out[-1].kind == "code"))
            and current is None
        ):
            flush()
            if out and out[-1].kind == "code" and not previous_blank:
                out[-1] = Block("code", out[-1].text + "\n" + line)
            else:
                out.append(Block("code", line))
        elif _LIST_ITEM.match(line):
            flush()
            current = _OpenBlock(stripped, "item", len(line) - len(line.lstrip()))
        elif (
            plain
            and (previous_blank or (current is None and out and out[-1].kind == "heading"))
            and _heads_indented_part(line, lines[n + 1] if n + 1 < len(lines) else None)
        ):
            flush()
            # An indented subsection's title is marked as Markdown marks one, so that whoever reads
            # the unwrapped text back knows it for a heading however long it is.
            out.append(Block("heading", stripped if line[:1].strip() else f"## {stripped}"))
        elif current is not None:
            current.join(stripped)
        else:
            current = _OpenBlock(stripped, "prose", len(line) - len(line.lstrip()))
        previous_blank = False
        if (
            plain
            and current is not None
            and current.lines <= QUESTION_LINES
            and stripped.endswith("?")
            and _QUESTION_OPEN.match(current.pieces[0])
            and not _question_goes_on(lines, n, current.indent, QUESTION_LINES - current.lines)
        ):
            flush()  # a FAQ's question ends at its question mark: the answer under it is not part of it
        if pdf and current is not None and typical:
            short = len(stripped) < 0.7 * typical
            if short and _SENTENCE_END.search(stripped):
                flush()  # the last line of a paragraph
            elif (
                short
                and not re.search(r"[,;:\-]$", stripped)
                and current.single_line
                and stripped[:1].isalnum()
                and not stripped[:1].islower()
            ):
                current.kind = "heading"  # a short line standing alone, with no end punctuation
                flush()
    if fence:
        out.append(Block("code", "\n".join(fence)))
    flush()
    return out


def unwrap(text: str, *, pdf: bool = False, indented_code: bool = True) -> str:
    """`text` with each paragraph on one line, blocks separated by blank lines (list items,
    table rows and code lines stay on their own lines, next to each other)."""
    parts: List[str] = []
    last = ""
    for block in blocks(text, pdf=pdf, indented_code=indented_code):
        if parts and not (block.kind == "item" and last == "item"):
            parts.append("")
        parts.append(block.text)
        last = block.kind
    return "\n".join(parts) + ("\n" if parts else "")


@lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


# A period that opens a word (".txt", "`.bashrc`", "(.pdf)") ends no sentence, but pySBD cuts
# there: "with the extension .txt:" became "... extension ." and "txt:". It is hidden from the
# segmenter as a one-dot leader, a character prose does not use, and put back.
_LEADING_DOT = re.compile(r"(?<=[\s`'\"(\[])\.(?=\w)")
_HIDDEN_DOT = "\u2024"


# A lower-case term and a colon before a capital, after a full stop, opens an entry ("... be
# configurable.) list: Mailing list archives are ..."): pySBD waits for a capital to cut.
_TERM_ENTRY = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][)\]\"'”]))\s+(?=[a-z][\w./+-]*:\s+[A-Z])")


@lru_cache(maxsize=4096)
def _split_paragraph(paragraph: str) -> tuple[str, ...]:
    hide = _HIDDEN_DOT not in paragraph
    text = _LEADING_DOT.sub(_HIDDEN_DOT, paragraph) if hide else paragraph
    parts = (piece.strip() for s in _segmenter().segment(text) for piece in _term_entries(s) if piece.strip())
    return tuple(p.replace(_HIDDEN_DOT, ".") if hide else p for p in parts)


def _term_entries(segment: str) -> List[str]:
    """`segment` cut before each term entry that follows a full stop (not an abbreviation's)."""
    pieces, start = [], 0
    for match in _TERM_ENTRY.finditer(segment):
        before = _WORD_BEFORE.search(segment, max(0, match.start() - 12), match.start())
        if before and before.group(1).lower().rstrip(".") in _ABBREVIATIONS:
            continue
        pieces.append(segment[start : match.start()])
        start = match.end()
    return pieces + [segment[start:]]


def split_sentences(text: str, *, pdf: bool = False) -> List[str]:
    """The sentences of `text`: prose cut by pySBD after `unwrap`; a heading, list item,
    table row or code block is one unit."""
    out: List[str] = []
    for block in blocks(text, pdf=pdf):
        if block.kind == "prose":
            out.extend(_split_paragraph(block.text))
        elif block.kind != "code" or block.text.strip():
            out.append(block.text.strip())
    return out


# Abbreviations whose period ends no sentence ("Mr. Smith", "Fig. 3", "e.g. The").
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e cf fig figs eq eqs no nos vol pp p ch sec sect approx "
    "dept est inc ltd co corp jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.[\"'\u201d\u2019)\]]*$")


def sentence_starts(text: str) -> List[int]:
    """Offsets in `text` where a sentence or a line starts (cheap: a pattern, not the
    segmenter, as it runs over every document at ingest), sorted. A period after a known
    abbreviation or a single capital ("J. Smith") starts no sentence."""
    starts = {m.end() for m in _LINE_START.finditer(text)}
    for m in _INLINE_START.finditer(text):
        before = _WORD_BEFORE.search(text, max(0, m.start() - 12), m.start())
        word = before.group(1).lower() if before else ""
        if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
            continue
        starts.add(m.end())
    return sorted(starts)


def _opens_like_sentence(sentence: str) -> bool:
    first = sentence.lstrip("\"'\u201c\u2018([*_`#-> ")[:1]
    return first.isupper() or first.isdigit()


def begins_sentence(sentence: str, source: str) -> bool:
    """Does `sentence` occur in `source` where a sentence begins: at the start of a
    paragraph, list item or other block of the unwrapped source, or after an end of
    sentence; at the very start of `source` (a chunk may start mid-sentence) only
    when it opens like a sentence (a capital or a digit)? False when it is not in `source`."""
    tokens = sentence.split()
    if not tokens:
        return False
    source = unwrap(source)  # a line break inside a paragraph begins nothing
    pattern = re.compile(r"\s+".join(re.escape(t) for t in tokens))
    for match in pattern.finditer(source):
        before = source[: match.start()]
        if not before.strip():
            if _opens_like_sentence(sentence):
                return True
        elif re.search(r"\n[ \t]*$", before) or re.search(r"[.!?][\"'\u201d\u2019)\]]*\s+$", before):
            return True
    return False
