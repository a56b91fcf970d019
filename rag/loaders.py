"""Document loaders: .pdf (pypdf), .docx (python-docx, tables included), .html/.htm
(the standard library's HTML parser), .md and .txt.

Every loader returns plain text with one paragraph per line (wrapped lines joined, PDF
hyphenation undone in every kind; a man page's section lines and indented subsections kept as headings; lists, tables and code kept apart: `rag.sentences`); PDF pages are marked with `[PAGE N]` lines, which the
chunker turns into page numbers. A file that cannot be loaded raises DocumentError with
a reason a person can act on.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

from rag.html_text import readable_text
from rag.sentences import unwrap

PAGE_MARKER = "[PAGE {number}]"

# Control characters other than tab and newline carry nothing for retrieval and can
# smuggle terminal escapes into prompts.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_BINARY_SNIFF_CHARS = 65536
# Control characters (category Cc) other than whitespace, and the replacement character.
_BINARY_HINTS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufffd]")


class DocumentError(Exception):
    """A file that cannot be ingested; `reason` says why in plain words."""

    def __init__(self, path: Path | str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


@dataclass
class LoadedDocument:
    path: Path
    kind: str
    text: str
    encoding: Optional[str] = None
    page_count: Optional[int] = None
    warnings: List[str] = field(default_factory=list)


def clean_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL_CHARS.sub("", text)


def decode_text_bytes(raw: bytes) -> tuple[str, str]:
    """Decode bytes of unknown encoding: BOMs first, then UTF-8, then Windows-1252
    (what most 'Latin-1' files really are), then Latin-1, which never fails."""
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if raw.startswith(bom):
            return raw.decode(encoding, errors="replace"), encoding
    # UTF-16 without a BOM: ASCII text then has a NUL in every other byte.
    sample = raw[:4096]
    if len(sample) >= 8 and sample.count(0) > len(sample) // 3:
        odd_zeros, even_zeros = sample[1::2].count(0), sample[0::2].count(0)
        utf16 = (
            "utf-16-le"
            if odd_zeros > 0.8 * len(sample) // 2
            else "utf-16-be"
            if even_zeros > 0.8 * len(sample) // 2
            else None
        )
        if utf16:
            try:
                return raw.decode(utf16), utf16
            except UnicodeDecodeError:
                pass
    for encoding in ("utf-8", "cp1252", "latin-1"):
        try:
            return raw.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes every byte string")


def _looks_binary(text: str) -> bool:
    sample = text[:_BINARY_SNIFF_CHARS]
    if not sample:
        return False
    suspicious = len(_BINARY_HINTS.findall(sample))
    # A handful of stray escapes is dirty text; binary data has them everywhere.
    return suspicious >= 4 and suspicious / len(sample) > 0.02


def load_text(path: Path) -> LoadedDocument:
    text, encoding = decode_text_bytes(path.read_bytes())
    if _looks_binary(text):
        raise DocumentError(path, "looks like binary data, not text (many control bytes)")
    kind = path.suffix.lower().lstrip(".")
    # Wrapped lines joined per paragraph (see rag.sentences); plain text indents paragraphs, not code.
    text = unwrap(clean_text(text), indented_code=kind == "md")
    return LoadedDocument(path=path, kind=kind, text=text, encoding=encoding)


def load_pdf(path: Path) -> LoadedDocument:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(str(path), strict=False)
    except Exception as error:  # pypdf raises many types for malformed files
        raise DocumentError(path, f"not a readable PDF ({type(error).__name__}: {error})") from None
    if reader.is_encrypted:
        # Many PDFs are "encrypted" with an empty user password and open freely.
        try:
            opened = reader.decrypt("")
        except DependencyError as error:
            raise DocumentError(path, f"encrypted PDF needing a crypto library: {error}") from None
        except Exception as error:
            raise DocumentError(path, f"encrypted PDF that could not be decrypted ({error})") from None
        if not opened:
            raise DocumentError(path, "encrypted PDF: a password is required to read it")
    try:
        pages = reader.pages
        page_count = len(pages)
    except Exception as error:
        raise DocumentError(path, f"not a readable PDF ({type(error).__name__}: {error})") from None
    document = LoadedDocument(path=path, kind="pdf", text="", page_count=page_count)
    parts: List[str] = []
    pages_with_text = 0
    for number in range(1, page_count + 1):
        try:
            page_text = pages[number - 1].extract_text() or ""
        except Exception as error:
            document.warnings.append(f"page {number}: text extraction failed ({error})")
            page_text = ""
        # Printed lines joined into paragraphs, end-of-line hyphens undone (see rag.sentences).
        page_text = unwrap(clean_text(page_text), pdf=True).strip()
        if page_text:
            pages_with_text += 1
        parts.append(PAGE_MARKER.format(number=number) + "\n" + page_text)
    if pages_with_text == 0:
        raise DocumentError(
            path,
            f"no extractable text in {page_count} page(s): image-only or scanned PDF (OCR is not supported)",
        )
    document.text = "\n".join(parts)
    return document


def _table_lines(table) -> List[str]:
    lines = []
    for row in table.rows:
        cells: List[str] = []
        previous = None
        for cell in row.cells:
            # Merged cells come back once per grid column; keep one copy.
            if previous is not None and cell._tc is previous:
                continue
            previous = cell._tc
            cells.append(" ".join(cell.text.split()))
        if any(cells):
            lines.append(" | ".join(cells))
    return lines


def load_docx(path: Path) -> LoadedDocument:
    import docx
    from docx.table import Table

    try:
        document = docx.Document(str(path))
    except Exception as error:
        raise DocumentError(path, f"not a readable .docx ({type(error).__name__}: {error})") from None
    lines: List[str] = []
    # iter_inner_content keeps paragraphs and tables in document order.
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            if lines and lines[-1]:
                lines.append("")
            lines.extend(_table_lines(block))
            lines.append("")
            continue
        # A soft line break inside a paragraph wraps it; it does not end a sentence.
        text = " ".join(block.text.split())
        if not text:
            continue
        style = (block.style.name or "") if block.style is not None else ""
        if style.startswith("Heading") and style[len("Heading") :].strip().isdigit():
            text = "#" * int(style[len("Heading") :].strip()) + " " + text
        elif style.startswith("List") and not text.startswith(("-", "*", "\u2022")):
            text = "- " + text  # a list item stays one unit, apart from the prose
        if lines and lines[-1] and not (text.startswith("- ") and lines[-1].startswith("- ")):
            lines.append("")  # paragraphs apart, as in the other loaders
        lines.append(text)
    return LoadedDocument(path=path, kind="docx", text=clean_text("\n".join(lines)))


# -- HTML ------------------------------------------------------------------------------
def html_to_text(html: str) -> str:
    """The readable text of an HTML page (`rag.html_text`: what is kept), cleaned."""
    return clean_text(readable_text(html))


def load_html(path: Path) -> LoadedDocument:
    raw, encoding = decode_text_bytes(path.read_bytes())
    if _looks_binary(raw):
        raise DocumentError(path, "looks like binary data, not HTML (many control bytes)")
    text = html_to_text(raw)
    if not text.strip():
        raise DocumentError(path, "no readable text in the HTML (only scripts, styles or navigation)")
    return LoadedDocument(path=path, kind="html", text=text, encoding=encoding)


LOADERS: Dict[str, Callable[[Path], LoadedDocument]] = {
    ".pdf": load_pdf,
    ".docx": load_docx,
    ".html": load_html,
    ".htm": load_html,
    ".md": load_text,
    ".txt": load_text,
}


def load_document(path: Path | str, max_bytes: Optional[int] = None) -> LoadedDocument:
    path = Path(path)
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        raise DocumentError(
            path, f"unsupported extension {path.suffix or '(none)'!r} (supported: {', '.join(LOADERS)})"
        )
    if not path.exists():
        raise DocumentError(path, "path does not exist")
    if not path.is_file():
        raise DocumentError(path, "not a regular file")
    size = path.stat().st_size
    if size == 0:
        raise DocumentError(path, "empty file (0 bytes)")
    if max_bytes is not None and size > max_bytes:
        raise DocumentError(
            path,
            f"file is {size / 2**20:.1f} MiB, over the {max_bytes / 2**20:.1f} MiB limit "
            "(raise rag.ingest.max_file_mb to ingest it)",
        )
    document = loader(path)
    if not document.text.strip():
        raise DocumentError(path, "no text content")
    return document
