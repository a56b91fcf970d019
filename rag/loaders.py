"""Document loaders: .pdf (pypdf), .docx (python-docx, tables included), .html/.htm
(the standard library's HTML parser), .md and .txt.

Every loader returns plain text with one paragraph per line (wrapped lines joined, PDF
hyphenation undone; lists, tables and code kept apart: `rag.sentences`); PDF pages are marked with `[PAGE N]` lines, which the
chunker turns into page numbers. A file that cannot be loaded raises DocumentError with
a reason a person can act on.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable, Dict, List, Optional

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
# Elements whose text is never document content: code that runs, page chrome, forms.
_HTML_SKIP_TAGS = frozenset(
    "script style noscript template nav header footer aside form button select "
    "svg canvas iframe object embed head".split()
)
# Landmark roles and class names of page chrome (Sphinx, MkDocs and most site themes use these).
_HTML_SKIP_ROLES = frozenset("navigation search banner contentinfo complementary".split())
_HTML_SKIP_CLASSES = frozenset(
    "sphinxsidebar related footer headerlink breadcrumb breadcrumbs navbar sidebar toc skip-link".split()
)
_HTML_VOID_TAGS = frozenset("area base br col embed hr img input link meta param source track wbr".split())
# Elements that end a line of text; headings and list items get Markdown marks.
_HTML_BLOCK_TAGS = frozenset(
    "p div section article main li dt dd pre blockquote table tr ul ol dl figure "
    "figcaption caption h1 h2 h3 h4 h5 h6 br hr body".split()
)
_HTML_HEADINGS = {f"h{n}": n for n in range(1, 7)}


class _HTMLText(HTMLParser):
    """Collects the readable text of a page as Markdown-ish lines.

    Keeps headings (as `#` lines), paragraphs, list items, definition lists, tables (cells
    joined by ` | `) and preformatted blocks; drops scripts, styles, navigation and other
    page chrome. When the page marks its main content (`<main>` or `role="main"`), only
    that is kept. Tolerates unclosed tags: an end tag closes everything opened after its
    matching start tag.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: List[tuple[str, bool, bool]] = []  # (tag, skipped, is main content)
        self.lines: List[str] = []
        self.main_lines: Optional[List[str]] = None  # lines inside the main-content element
        self.current: List[str] = []
        self.title: List[str] = []
        self.in_title = False
        self.pre_depth = 0
        self.heading: Optional[int] = None
        self.cell_count = 0

    # state helpers
    def _skipping(self) -> bool:
        return any(skipped for _, skipped, _ in self.stack)

    def _in_main(self) -> bool:
        return any(main for _, _, main in self.stack)

    def _end_line(self) -> None:
        text = "".join(self.current)
        if text.strip() == "-":
            return  # a list item's mark waits for the item's first paragraph
        self.current = []
        text = text if self.pre_depth else " ".join(text.split())
        if not text.strip():
            return
        if self.heading:
            text = "#" * self.heading + " " + text.strip()
        for target in (self.lines, self.main_lines if self._in_main() else None):
            if target is not None:
                target.append(text)

    def _paragraph_break(self) -> None:
        self._end_line()
        if self.current:
            return  # inside a list item that has not started yet
        for target in (self.lines, self.main_lines if self._in_main() else None):
            if target is not None and target and target[-1] != "":
                target.append("")

    # parser callbacks
    def handle_starttag(self, tag: str, attrs) -> None:
        attributes = dict(attrs)
        if tag == "title":
            self.in_title = True
        if tag in _HTML_VOID_TAGS:
            if tag in ("br", "hr") and not self._skipping():
                self._end_line()
            return
        classes = set((attributes.get("class") or "").split())
        role = (attributes.get("role") or "").lower()
        skipped = (
            tag in _HTML_SKIP_TAGS
            or role in _HTML_SKIP_ROLES
            or bool(classes & _HTML_SKIP_CLASSES)
            or attributes.get("aria-hidden") == "true"
            or "hidden" in attributes
        )
        is_main = tag == "main" or role == "main"
        if is_main and self.main_lines is None:
            self.main_lines = []
        if not self._skipping() and tag in _HTML_BLOCK_TAGS:
            self._paragraph_break() if tag in (
                "p",
                "pre",
                "table",
                "ul",
                "ol",
                "dl",
                "blockquote",
            ) or tag in _HTML_HEADINGS else self._end_line()
        self.stack.append((tag, skipped, is_main))
        if self._skipping():
            return
        if tag in _HTML_HEADINGS:
            self.heading = _HTML_HEADINGS[tag]
        elif tag == "li":
            self.current.append("- ")
        elif tag == "pre":
            self.pre_depth += 1
        elif tag == "tr":
            self.cell_count = 0
        elif tag in ("td", "th"):
            if self.cell_count:
                self.current.append(" | ")
            self.cell_count += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _HTML_VOID_TAGS or not any(open_tag == tag for open_tag, _, _ in self.stack):
            return  # a stray end tag closes nothing
        while self.stack:
            open_tag, _, _ = self.stack[-1]
            skipping = self._skipping()
            if not skipping and open_tag in _HTML_BLOCK_TAGS:
                self._end_line() if open_tag not in _HTML_HEADINGS and open_tag != "pre" else self._paragraph_break()
            if not skipping and open_tag in _HTML_HEADINGS:
                self.heading = None
            if not skipping and open_tag == "pre":
                self.pre_depth = max(0, self.pre_depth - 1)
            self.stack.pop()
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self._skipping() or not any(True for _ in self.stack):
            return
        if self.pre_depth:
            for i, part in enumerate(data.split("\n")):
                if i:
                    self._end_line()
                self.current.append(part)
        else:
            self.current.append(data)

    def text(self) -> str:
        self._end_line()
        lines = self.main_lines if self.main_lines else self.lines
        title = " ".join("".join(self.title).split())
        if title and not any(line.startswith("# ") for line in lines):
            lines = [f"# {title}", ""] + lines
        return "\n".join(lines).strip() + "\n"


def html_to_text(html: str) -> str:
    """The readable text of an HTML page (see _HTMLText for what is kept)."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    return clean_text(parser.text())


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
