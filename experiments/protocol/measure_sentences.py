#!/usr/bin/env python
"""How many of the sentences a report may quote are fragments, per loader: line-based
splitting of the text as extracted (how sentences were cut before `rag.sentences`)
against whole sentences of the unwrapped text, taken from its chunks.

    python experiments/protocol/measure_sentences.py FILE_OR_FOLDER [...]

For each document (.md .txt .html .pdf .docx) it prints the quotable sentences (prose:
`sentence_reuse.is_prose`) of each method and how many of them do not begin a sentence of
the document (`rag.sentences.begins_sentence` against the whole unwrapped text), then a
total per loader. The "as extracted" text is what the loaders returned before unwrapping:
the decoded file (md, txt), pypdf's page text (pdf), the paragraphs with their soft line
breaks (docx), the HTML reader's text (html).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from agents_llm.text.split import sentences as line_sentences  # noqa: E402
from agents_llm.sentence_reuse import is_prose, source_sentences  # noqa: E402
from rag.chunking import chunk_text  # noqa: E402
from rag.loaders import LOADERS, clean_text, decode_text_bytes, html_to_text, load_document  # noqa: E402
from rag.sentences import begins_sentence  # noqa: E402
from rag.tokenization import WordTokenizer  # noqa: E402


def as_extracted(path: Path) -> str:
    """The text of `path` as the loaders gave it before wrapped lines were joined."""
    kind = path.suffix.lower()
    if kind == ".pdf":
        from pypdf import PdfReader

        return "\n".join(clean_text(p.extract_text() or "") for p in PdfReader(str(path)).pages)
    if kind == ".docx":
        import docx

        return "\n".join(p.text.strip() for p in docx.Document(str(path)).paragraphs if p.text.strip())
    raw, _ = decode_text_bytes(path.read_bytes())
    return html_to_text(raw) if kind in (".html", ".htm") else clean_text(raw)


def measure(path: Path) -> dict[str, tuple[int, int]]:
    """{method: (quotable sentences, fragments among them)} for one document."""
    whole = load_document(path).text
    before = [s for s in line_sentences(as_extracted(path)) if is_prose(s)]
    after = [
        s
        for c in chunk_text(whole, path.name, WordTokenizer(), max_tokens=256, overlap_tokens=32)
        for s in source_sentences(c.text)
        if is_prose(s)
    ]
    return {
        "line-based": (len(before), sum(not begins_sentence(s, whole) for s in before)),
        "rag.sentences": (len(after), sum(not begins_sentence(s, whole) for s in after)),
    }


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    files = []
    for arg in argv:
        p = Path(arg)
        files += sorted(f for f in p.rglob("*") if f.suffix.lower() in LOADERS) if p.is_dir() else [p]
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for f in files:
        result = measure(f)
        line = ", ".join(f"{m}: {bad}/{n} fragments" for m, (n, bad) in result.items())
        print(f"{f.name}: {line}")
        for m, (n, bad) in result.items():
            totals[(f.suffix.lower().lstrip("."), m)][0] += n
            totals[(f.suffix.lower().lstrip("."), m)][1] += bad
    print("\nper loader (fragments / quotable sentences):")
    for (kind, method), (n, bad) in sorted(totals.items()):
        print(f"  {kind:5} {method:14} {bad:5d} / {n:5d} = {bad / n if n else 0:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
