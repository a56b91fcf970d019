#!/usr/bin/env python
"""Count what a reader trips over in a report, against its source documents.

    python experiments/check_report.py outputs/<run dir> --docs path/to/docs
    python experiments/check_report.py report.md --docs a.txt b.txt --json counts.json

Counts repeated sentences, headings glued to a sentence, sentences cut at a line wrap or
hyphen, dangling references (a sentence leaning on text the report left out) and false
sentences (a sentence its closest source sentence does not agree with), as
`agents_llm.report_checks` finds them, and lists each finding. Exit code 0 when every count
is 0, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import List, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]

from agents_llm.report_checks import KINDS, SourceText, check_sections  # noqa: E402
from rag.loaders import LOADERS, DocumentError, load_document  # noqa: E402
from rag.sentences import blocks, split_sentences  # noqa: E402

# Parts of report.md that are the report's apparatus, not its prose.
_APPARATUS = ("references", "information not found in the documents")
_ITEM = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+")  # a list item is a sentence of its own
_SOURCES_LINE = re.compile(r"^Sources: (\[\d+\](, )?)+$")


def report_sections(markdown: str) -> List[Tuple[str, List[str]]]:
    """(section title, its sentences: prose and list items) for each section of a report.md;
    the title, subtitle, notes, "Sources:" lines, code, tables and the apparatus sections aside."""
    out: List[Tuple[str, List[str]]] = []
    title, body = None, []  # type: ignore[var-annotated]

    def close() -> None:
        if title is not None and title.lower() not in _APPARATUS:
            text = "\n".join(line for line in body if not _SOURCES_LINE.match(line.strip()))
            prose = [
                s
                for b in blocks(text)
                for s in (
                    split_sentences(b.text)
                    if b.kind == "prose"
                    else [_ITEM.sub("", b.text)]
                    if _ITEM.match(b.text)
                    else []
                )
            ]
            out.append((title, prose))

    for line in markdown.splitlines():
        heading = re.match(r"^(#{2,6})\s+(.*)$", line)
        if heading:
            close()
            title, body = heading.group(2).strip(), []
        elif title is not None:
            body.append(line)
    close()
    return out


def document_files(paths: Sequence[Path]) -> List[Path]:
    files: List[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(p for p in sorted(path.rglob("*")) if p.is_file() and p.suffix.lower() in LOADERS)
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"--docs {path}: no such file or folder")
    if not files:
        raise FileNotFoundError(f"--docs {', '.join(map(str, paths))}: no document with a readable extension")
    return files


def source_text(paths: Sequence[Path]) -> SourceText:
    raw, loaded = [], []
    for path in document_files(paths):
        try:
            loaded.append(load_document(path).text)
        except DocumentError as e:
            raise FileNotFoundError(str(e)) from None
        raw.append(path.read_text(encoding="utf-8", errors="replace") if path.suffix.lower() != ".pdf" else loaded[-1])
    return SourceText.of(raw, loaded)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="report.md, or the run folder write_report wrote")
    parser.add_argument("--docs", type=Path, nargs="+", required=True, help="the source documents (files or folders)")
    parser.add_argument("--json", type=Path, help="also write the counts and findings here")
    args = parser.parse_args(argv)
    report = args.report / "report.md" if args.report.is_dir() else args.report
    try:
        markdown = report.read_text(encoding="utf-8")
        sources = source_text(args.docs)
    except (OSError, FileNotFoundError) as e:
        print(f"check_report: {e}", file=sys.stderr)
        return 2
    sections = report_sections(markdown)
    findings = check_sections(sections, sources)
    counts = {kind: sum(1 for f in findings if f.kind == kind) for kind in KINDS}
    n_sentences = sum(len(s) for _, s in sections)
    print(f"{report}: {n_sentences} sentence(s) in {len(sections)} section(s)")
    print("  " + ", ".join(f"{kind}: {n}" for kind, n in counts.items()))
    for f in findings:
        print(f"  [{f.kind}] ({f.section}) {f.sentence[:100]!r}" + (f": {f.detail}" if f.detail else ""))
    if args.json:
        payload = {
            "report": str(report),
            "sentences": n_sentences,
            "counts": counts,
            "findings": [vars(f) for f in findings],
        }
        args.json.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return 1 if any(counts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
