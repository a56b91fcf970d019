"""How a text splits: paragraphs, sentences, words, judge-sized chunks, and content hashes."""

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
