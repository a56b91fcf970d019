"""Text helpers shared by the judges: paragraphs, sentences, chunks, content hashes."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# A sentence ends at . ! or ? followed by space and something that can start a sentence;
# "e.g. the" stays whole because a lowercase letter follows.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(\[])")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")


def content_hash(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x00")  # keeps ("ab", "c") and ("a", "bc") apart
    return h.hexdigest()


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]


def sentences(text: str) -> list[str]:
    out: list[str] = []
    for para in paragraphs(text):
        for line in para.splitlines():  # list items and headings are their own sentences
            out.extend(s.strip() for s in _SENTENCE_END.split(line.strip()) if s.strip())
    return out


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


@dataclass(frozen=True)
class Chunk:
    section_id: str
    section_title: str
    index: int  # position within its section
    text: str


def _split_long(paragraph: str, size: int) -> list[str]:
    """Cut a paragraph longer than `size` at sentence ends (hard cuts only inside a giant sentence)."""
    pieces: list[str] = []
    current = ""
    for sent in sentences(paragraph) or [paragraph]:
        while len(sent) > size:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sent[:size])
            sent = sent[size:].lstrip()
        if current and len(current) + 1 + len(sent) > size:
            pieces.append(current)
            current = sent
        else:
            current = f"{current} {sent}" if current else sent
    if current:
        pieces.append(current)
    return pieces


def chunk_text(text: str, unit: str = "chars", size: int = 1500) -> list[str]:
    """Split a section's content into judge-sized chunks.

    `paragraphs`: `size` consecutive paragraphs per chunk. `chars`: paragraphs packed in
    order while the chunk stays within `size` characters; a longer paragraph is cut at
    sentence ends. Chunks follow paragraph boundaries so that editing one paragraph
    leaves the chunks before it (and, once packing realigns, after it) byte-identical,
    which is what lets the content-hash cache skip them.
    """
    if size < 1:
        raise ValueError(f"chunk size must be >= 1, got {size}")
    paras = paragraphs(text)
    if unit == "paragraphs":
        return ["\n\n".join(paras[i : i + size]) for i in range(0, len(paras), size)]
    if unit != "chars":
        raise ValueError(f"chunk unit must be 'chars' or 'paragraphs', got {unit!r}")
    chunks: list[str] = []
    current = ""
    for para in paras:
        if len(para) > size:
            if current:
                chunks.append(current)
                current = ""
            chunks.extend(_split_long(para, size))
            continue
        if current and len(current) + 2 + len(para) > size:
            chunks.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
    if current:
        chunks.append(current)
    return chunks


# -- prose or code/markup -------------------------------------------------------------
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
