"""Tokenizers used for chunking: they report token character spans, so a chunk is an
exact slice of the original text (a WordPiece decode would lowercase and mangle it)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Protocol, Tuple

Span = Tuple[int, int]

# Words (identifiers like QX-7741-B or err_4471 stay whole) and single punctuation marks.
_WORD_OR_MARK = re.compile(r"\w+(?:[-.:/]\w+)*|[^\w\s]", re.UNICODE)


class Tokenizer(Protocol):
    # Tokens the model adds around every input ([CLS] and [SEP] for BERT-style models).
    special_tokens: int

    def spans(self, text: str) -> List[Span]: ...

    def count(self, text: str) -> int: ...


class WordTokenizer:
    """Regex word/punctuation tokenizer: the hashing embedding's own tokenizer, and an
    approximation for servers whose tokenizer is not available locally."""

    special_tokens = 0

    def spans(self, text: str) -> List[Span]:
        return [match.span() for match in _WORD_OR_MARK.finditer(text)]

    def count(self, text: str) -> int:
        return sum(1 for _ in _WORD_OR_MARK.finditer(text))


class HuggingFaceTokenizer:
    """A fast tokenizer loaded from a tokenizer.json file, without truncation/padding."""

    def __init__(self, tokenizer_file: str | Path, special_tokens: int = 2):
        from tokenizers import Tokenizer as _FastTokenizer

        self._tokenizer = _FastTokenizer.from_file(str(tokenizer_file))
        # The bundled MiniLM file truncates to 128 and pads: both would hide the real length.
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self.special_tokens = special_tokens

    def spans(self, text: str) -> List[Span]:
        if not text:
            return []
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        return [offset for offset in encoding.offsets if offset[1] > offset[0]]

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
