"""Token-window chunking with overlap, page-aware, streamed.

A chunk never spans two pages, so its page number is exact, and it begins and ends
between sentences wherever a sentence is shorter than three quarters of a chunk (`rag.sentences`):
a chunk that began mid-sentence would hand the writer a fragment to quote. The token budget leaves
room for the contextual prefix `[Source: file | Page: N]`, which is embedded with the
chunk (it tells the model where the text comes from) but not stored as its text.

Chunks are produced lazily, one segment (paragraphs up to about `SEGMENT_CHARS`, a
giant paragraph cut at a blank) at a time: tokenizing a whole 18 MB single-line file
at once held 2.6 GB, and a caller that stops early (the per-file chunk cap) never
tokenizes the rest. A chunk does not span two segments either. A code block a chunk edge
cuts is fenced on both sides of the cut, so each chunk's code stays code when read alone.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Tuple

from rag.sentences import sentence_starts
from rag.tokenization import Span, Tokenizer

_PAGE_MARKER = re.compile(r"^\[PAGE (\d+)\][ \t]*$", re.MULTILINE)
_MAX_PREFIX_NAME_CHARS = 80
# How far a window edge may move to avoid cutting a word in two.
_SNAP_TOKENS = 8
# Characters tokenized at once: many chunks' worth, so the short last chunk of a
# segment is rare, and small enough that memory does not grow with the file.
SEGMENT_CHARS = 32_000
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)


@dataclass(frozen=True)
class Chunk:
    text: str
    page: Optional[int]
    ordinal: int
    token_count: int
    # Where the chunk ends in the chunked text (characters), to say how far a capped file got.
    end_offset: int = 0
    # Whether it begins a paragraph (or the page): a chunk may begin at any sentence, and what it
    # begins inside is read with the paragraph's start from the chunk before (`paragraph_before`).
    begins_paragraph: bool = True


def page_spans(text: str) -> List[Tuple[Optional[int], int, int]]:
    """(page, start, end) of each page's body, split on `[PAGE N]` marker lines; text
    before the first marker (or all of it, when there are none) has no page number.
    Blank pages are left out."""
    spans: List[Tuple[Optional[int], int, int]] = []
    matches = list(_PAGE_MARKER.finditer(text))
    head_end = matches[0].start() if matches else len(text)
    if text[:head_end].strip():
        spans.append((None, 0, head_end))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        if text[match.end() : end].strip():
            spans.append((int(match.group(1)), match.end(), end))
    return spans


def split_pages(text: str) -> List[Tuple[Optional[int], str]]:
    """(page, body) per page; see `page_spans`."""
    return [(page, text[start:end]) for page, start, end in page_spans(text)]


def segments(text: str, start: int, end: int, size: int = SEGMENT_CHARS) -> Iterator[Tuple[int, int]]:
    """(start, end) pieces of text[start:end] of about `size` characters, cut at paragraph
    breaks, or at a blank (or anywhere, for text without one) inside a giant paragraph."""
    cursor = start
    while cursor < end:
        if end - cursor <= size:
            yield cursor, end
            return
        limit = cursor + size
        # The last paragraph break before the limit, if it leaves a reasonable piece.
        cut = -1
        for match in _PARAGRAPH_BREAK.finditer(text, cursor + size // 4, limit):
            cut = match.end()
        if cut < 0:
            blank = max(text.rfind(" ", cursor + size // 2, limit), text.rfind("\n", cursor + size // 2, limit))
            cut = blank + 1 if blank >= 0 else limit
        yield cursor, cut
        cursor = cut


def context_prefix(source_name: str, page: Optional[int]) -> str:
    name = source_name if len(source_name) <= _MAX_PREFIX_NAME_CHARS else source_name[:_MAX_PREFIX_NAME_CHARS] + "..."
    if page is None:
        return f"[Source: {name}]"
    return f"[Source: {name} | Page: {page}]"


def embedding_input(source_name: str, page: Optional[int], chunk_text: str) -> str:
    return f"{context_prefix(source_name, page)}\n{chunk_text}"


_ENDS_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*\Z")


def _overlap(previous: str, text: str) -> int:
    """The length of the longest end of `previous` that `text` begins with (0: none)."""
    anchor = text[:16]
    at = previous.find(anchor) if anchor else -1
    while at >= 0:  # the earliest such place is the longest overlap
        if text.startswith(previous[at:]):
            return len(previous) - at
        at = previous.find(anchor, at + 1)
    # Shorter than the anchor.
    return next((m for m in range(min(len(anchor), len(previous)), 0, -1) if previous.endswith(text[:m])), 0)


def paragraph_before(previous: str, text: str) -> str:
    """The part of the paragraph a chunk begins inside that lies before it, read from the chunk
    before it in its document (`previous`, which overlaps it): '' when the chunk begins a paragraph.
    A chunk begins at any sentence, so its first paragraph may be the rest of one: what that
    paragraph says as a whole (an order and the tag it left, split by the cut) is read from both.
    When the chunks do not overlap, whether a paragraph break lay between them is in neither
    text (`Chunk.begins_paragraph` says it), and the chunk is read as going on from the previous
    chunk's last paragraph."""
    shared = _overlap(previous, text)
    before = previous[: len(previous) - shared]
    if shared and _ENDS_PARAGRAPH.search(before):
        return ""
    return _PARAGRAPH_BREAK.split(before)[-1].strip()


def _joined(text: str, left: Span, right: Span) -> bool:
    """True when two adjacent tokens are parts of one word (no gap between them)."""
    return left[1] == right[0] and text[left[1] - 1].isalnum() and text[right[0]].isalnum()


def _sentence_tokens(text: str, spans: List[Span]) -> List[int]:
    """Indices of the tokens that begin a sentence or a line of `text` (sorted)."""
    token_starts = [a for a, _ in spans]
    return sorted({bisect_left(token_starts, offset) for offset in sentence_starts(text)} - {len(spans)})


def _windows(
    text: str, spans: List[Span], size: int, overlap: int, sentence_tokens: Sequence[int] = ()
) -> Iterator[Tuple[int, int]]:
    """(first, last) token windows of at most `size` tokens, overlapping by up to `overlap`.

    With `sentence_tokens` (the tokens that begin a sentence), a window ends before its
    last sentence start past its first quarter and the next one begins at the first
    sentence start of the overlap, so chunks hold whole sentences; a sentence longer than
    three quarters of a window is cut between words, as text without sentence starts is."""
    start = 0
    total = len(spans)
    while start < total:
        end = min(start + size, total)
        if end < total and sentence_tokens:
            # The last sentence start in (start + size // 4, end]
            at = bisect_right(sentence_tokens, end) - 1
            if at >= 0 and sentence_tokens[at] > start + size // 4:
                end = sentence_tokens[at]
                yield start, end
                at = bisect_left(sentence_tokens, max(end - overlap, start + 1))
                start = sentence_tokens[at] if at < len(sentence_tokens) and sentence_tokens[at] <= end else end
                continue
        if end < total:
            snapped = end
            while (
                snapped > start + size // 2
                and end - snapped < _SNAP_TOKENS
                and _joined(text, spans[snapped - 1], spans[snapped])
            ):
                snapped -= 1
            if not _joined(text, spans[snapped - 1], spans[snapped]):
                end = snapped
        yield start, end
        if end >= total:
            return
        next_start = max(end - overlap, start + 1)
        snapped = next_start
        while (
            snapped < end and snapped - next_start < _SNAP_TOKENS and _joined(text, spans[snapped - 1], spans[snapped])
        ):
            snapped += 1
        start = snapped if snapped < end else next_start


def iter_chunks(
    text: str,
    source_name: str,
    tokenizer: Tokenizer,
    max_tokens: int,
    overlap_tokens: int,
) -> Iterator[Chunk]:
    """Chunks of `text` in order, produced one segment at a time (see the module doc)."""
    ordinal = 0
    # A code block cut by a chunk edge is fenced again on each side of the cut: read alone, the
    # chunk's closing fence would open a block and turn the prose and headings after it into code.
    fences = [m.start() for m in _FENCE_LINE.finditer(text)]
    for page, page_start, page_end in page_spans(text):
        prefix_tokens = tokenizer.count(context_prefix(source_name, page) + "\n")
        # Room for the fences a cut code block gets again (only in a text that has fences).
        fence_tokens = 2 * tokenizer.count("```\n") if fences else 0
        budget = max_tokens - tokenizer.special_tokens - prefix_tokens - fence_tokens
        if budget < 8:
            raise ValueError(
                f"rag.chunking.max_tokens={max_tokens} leaves {budget} tokens for text after "
                f"the {prefix_tokens}-token source prefix; raise it"
            )
        overlap = min(overlap_tokens, budget // 2)
        for start, end in segments(text, page_start, page_end):
            piece = text[start:end]
            spans = tokenizer.spans(piece)
            for first, last in _windows(piece, spans, budget, overlap, _sentence_tokens(piece, spans)):
                body = piece[spans[first][0] : spans[last - 1][1]]
                if bisect_left(fences, start + spans[first][0]) % 2:
                    body = "```\n" + body
                if bisect_left(fences, start + spans[last - 1][1]) % 2:
                    body = body + "\n```"
                at = start + spans[first][0]
                yield Chunk(
                    text=body,
                    page=page,
                    ordinal=ordinal,
                    token_count=last - first,
                    end_offset=start + spans[last - 1][1],
                    begins_paragraph=not text[page_start:at].strip()
                    or bool(_ENDS_PARAGRAPH.search(text, max(page_start, at - 64), at)),
                )
                ordinal += 1


def chunk_text(
    text: str,
    source_name: str,
    tokenizer: Tokenizer,
    max_tokens: int,
    overlap_tokens: int,
) -> List[Chunk]:
    return list(iter_chunks(text, source_name, tokenizer, max_tokens, overlap_tokens))
