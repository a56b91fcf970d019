"""Prose or code and markup: what kind of line a line is (`line_kind`) and how much of a text
is code or markup (`markup_profile`), by a general rule, not a list of languages."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Markup: HTML/XML tags, comments and entities; a line opening or closing a code fence.
_TAG = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>|&(?:[a-z]+|#\d+);", re.DOTALL)
_FENCE = re.compile(r"^\s*(?:```|~~~)")
# A natural word as prose writes it: letters (one inner hyphen or apostrophe), maybe quoted or
# bracketed, maybe followed by punctuation. Identifiers (snake_case, dotted.names, calls) are not.
_NATURAL = re.compile(r"^[(\"'\u201c]?[A-Za-z]+(?:['\u2019-][A-Za-z]+)*[.,;:!?)\"'\u201d]*$")
# Characters that prose uses rarely and code (in any language) or markup constantly.
_CODE_SYMBOLS = frozenset('{}[]()<>=;`$\\|&^~@#*/%_"+')
# Line shapes of code whatever the language: a statement or block end (; { } , ( [ or ):),
# an assignment opening the line, a shell/REPL prompt or a line comment.
_CODE_END = re.compile(r"(?:[;{}(\[,\\]|\)\s*:|\]\s*:|=>|->)\s*$")
_ASSIGN = re.compile(r"^\s*(?:[A-Za-z_$][\w$.\[\]'\"]*\s*(?::\s*[\w\[\], .]+)?\s*(?:[-+*/%|&^]|\*\*|//)?=(?!=)\s*\S)")
_PROMPT_OR_COMMENT = re.compile(r"^\s*(?:>>>|\.\.\.\s|\$\s|%\s|//|/\*|\*/|--\s|#!|<\?)")
_CALL_WITHOUT_SENTENCE_END = re.compile(r"^(?=.*[\w\])]\().*[^.!?:\s]\s*$")  # f(x) and no full stop: a statement
MIN_PROSE_WORDS = 3  # a line of prose has at least this many natural words
PROSE_WORD_SHARE = 0.6  # ... that make up at least this share of its tokens
MAX_PROSE_SYMBOLS = 0.12  # ... and at most this share of its characters are code symbols
LONG_PROSE_WORDS = 6  # a sentence of this many natural words may quote code inline
MARKUP_SHARE = 0.5  # a text with this share of its classified characters in code or markup is not prose


@dataclass(frozen=True)
class MarkupProfile:
    """What of a text is prose and what is code or markup, line by line.

    `share`: code/markup characters (tags, fences, code lines) over the characters of every
    classified line (prose or code); lines that are neither (headings, short fragments such
    as "## 1." or "- deque") are left out of both. `prose`: the text with code lines and
    fences removed and tags stripped from the prose lines left. `code_lines`: the lines
    counted as code or markup.
    """

    share: float
    prose: str
    code_lines: tuple[str, ...]
    prose_chars: int
    code_chars: int

    @property
    def is_markup(self) -> bool:
        return self.share >= MARKUP_SHARE


def line_kind(line: str) -> str:
    """'prose', 'code' (code, markup or a fence), or 'other' (a heading, a short fragment, empty).

    A general rule, not a list of languages: prose is a line of natural words with few code
    symbols; code is a line with a code shape (statement end, assignment, prompt, fence),
    dense code symbols, or mostly non-natural tokens; markup is a line that is mostly tags.
    """
    stripped = line.strip()
    if not stripped:
        return "other"
    if _FENCE.match(stripped):
        return "code"
    tags = sum(len(m.group(0)) for m in _TAG.finditer(stripped))
    text = _TAG.sub(" ", stripped).strip()
    if tags and (not text or tags >= len(stripped) / 2):
        return "code"
    if text.startswith("#") and not text.startswith("#!") and re.match(r"^#{1,6}\s", text):
        return "other"  # a Markdown heading: structure, judged as a title
    text = re.sub(r"^(?:[-*+\u2022]|\d+[.)])\s+", "", text)  # a list marker is Markdown, not code
    tokens = text.split()
    natural = sum(bool(_NATURAL.match(t)) for t in tokens)
    visible = [ch for ch in text if not ch.isspace()]
    symbols = sum(ch in _CODE_SYMBOLS for ch in visible) / max(len(visible), 1)
    shaped = bool(
        _CODE_END.search(text)
        or _ASSIGN.match(text)
        or _PROMPT_OR_COMMENT.match(text)
        or _CALL_WITHOUT_SENTENCE_END.match(text)
    )
    # A long sentence may quote a formula or a call ("a[k] <= a[2*k+1]") and stay prose.
    sentence_like = natural >= LONG_PROSE_WORDS and natural >= 0.7 * len(tokens) and text[-1] in ".!?:"
    if (
        natural >= MIN_PROSE_WORDS
        and natural >= PROSE_WORD_SHARE * len(tokens)
        and not shaped
        and (symbols <= MAX_PROSE_SYMBOLS or sentence_like)
    ):
        return "prose"
    if shaped or symbols > MAX_PROSE_SYMBOLS or (tokens and natural < PROSE_WORD_SHARE * len(tokens)) or tags:
        return "code"
    return "other"


def markup_profile(text: str) -> MarkupProfile:
    """How much of `text` is code or markup rather than prose (see MarkupProfile)."""
    prose_lines, code_lines = [], []
    prose_chars = code_chars = 0
    in_fence = False
    for line in text.splitlines():
        stripped = line.strip()
        if _FENCE.match(stripped):
            in_fence = not in_fence
            code_lines.append(stripped)
            code_chars += len(stripped)
            continue
        kind = "code" if in_fence and stripped else line_kind(line)
        if kind == "code":
            code_lines.append(stripped)
            code_chars += len(stripped)
            continue
        if kind == "prose":
            tags = sum(len(m.group(0)) for m in _TAG.finditer(stripped))
            code_chars += tags
            prose_chars += len(stripped) - tags
            line = _TAG.sub(" ", line)
            line = re.sub(r"[ \t]{2,}", " ", line).strip()
        prose_lines.append(line)
    classified = prose_chars + code_chars
    return MarkupProfile(
        share=code_chars / classified if classified else 0.0,
        prose="\n".join(prose_lines).strip(),
        code_lines=tuple(code_lines),
        prose_chars=prose_chars,
        code_chars=code_chars,
    )
