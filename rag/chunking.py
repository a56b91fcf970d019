"""Token-window chunking with overlap, page-aware.

A chunk never spans two pages, so its page number is exact. The token budget leaves
room for the contextual prefix `[Source: file | Page: N]`, which is embedded with the
chunk (it tells the model where the text comes from) but not stored as its text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from rag.tokenization import Span, Tokenizer

_PAGE_MARKER = re.compile(r"^\[PAGE (\d+)\][ \t]*$", re.MULTILINE)
_MAX_PREFIX_NAME_CHARS = 80
# How far a window edge may move to avoid cutting a word in two.
_SNAP_TOKENS = 8


@dataclass(frozen=True)
class Chunk:
    text: str
    page: Optional[int]
    ordinal: int
    token_count: int


def split_pages(text: str) -> List[Tuple[Optional[int], str]]:
    """Split text on `[PAGE N]` marker lines; text before the first marker (or all of
    it, when there are none) has no page number."""
    segments: List[Tuple[Optional[int], str]] = []
    matches = list(_PAGE_MARKER.finditer(text))
    head = text[: matches[0].start()] if matches else text
    if head.strip():
        segments.append((None, head))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = text[match.end():end]
        if body.strip():
            segments.append((int(match.group(1)), body))
    return segments


def context_prefix(source_name: str, page: Optional[int]) -> str:
    name = source_name if len(source_name) <= _MAX_PREFIX_NAME_CHARS else source_name[:_MAX_PREFIX_NAME_CHARS] + "..."
    if page is None:
        return f"[Source: {name}]"
    return f"[Source: {name} | Page: {page}]"


def embedding_input(source_name: str, page: Optional[int], chunk_text: str) -> str:
    return f"{context_prefix(source_name, page)}\n{chunk_text}"


def _joined(text: str, left: Span, right: Span) -> bool:
    """True when two adjacent tokens are parts of one word (no gap between them)."""
    return left[1] == right[0] and text[left[1] - 1].isalnum() and text[right[0]].isalnum()


def _windows(text: str, spans: List[Span], size: int, overlap: int) -> Iterator[Tuple[int, int]]:
    start = 0
    total = len(spans)
    while start < total:
        end = min(start + size, total)
        if end < total:
            snapped = end
            while snapped > start + size // 2 and end - snapped < _SNAP_TOKENS and _joined(text, spans[snapped - 1], spans[snapped]):
                snapped -= 1
            if not _joined(text, spans[snapped - 1], spans[snapped]):
                end = snapped
        yield start, end
        if end >= total:
            return
        next_start = max(end - overlap, start + 1)
        snapped = next_start
        while snapped < end and snapped - next_start < _SNAP_TOKENS and _joined(text, spans[snapped - 1], spans[snapped]):
            snapped += 1
        start = snapped if snapped < end else next_start


def chunk_text(
    text: str,
    source_name: str,
    tokenizer: Tokenizer,
    max_tokens: int,
    overlap_tokens: int,
) -> List[Chunk]:
    chunks: List[Chunk] = []
    for page, page_text in split_pages(text):
        prefix_tokens = tokenizer.count(context_prefix(source_name, page) + "\n")
        budget = max_tokens - tokenizer.special_tokens - prefix_tokens
        if budget < 8:
            raise ValueError(
                f"rag.chunking.max_tokens={max_tokens} leaves {budget} tokens for text after "
                f"the {prefix_tokens}-token source prefix; raise it"
            )
        overlap = min(overlap_tokens, budget // 2)
        spans = tokenizer.spans(page_text)
        for start, end in _windows(page_text, spans, budget, overlap):
            body = page_text[spans[start][0]:spans[end - 1][1]]
            chunks.append(Chunk(text=body, page=page, ordinal=len(chunks), token_count=end - start))
    return chunks
