"""Builders for real test documents: PDFs written by hand (text, image-only), encrypted
PDFs through pypdf, DOCX with a table through python-docx, Latin-1 text."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence


def _pdf_string(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode("latin-1", errors="replace") + b")"


def write_pdf(path: Path, pages: Sequence[Optional[str]], hidden: Sequence[Optional[str]] = ()) -> Path:
    """A valid PDF, one page per entry: a string becomes lines of Helvetica text, None
    becomes a page that only draws an image (no text layer, like a scan). `hidden[i]`
    is drawn on page i as text no reader sees: render mode 3 (invisible), then again
    white at 1 pt, the two usual ways to hide text in a PDF."""
    objects: List[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled once the page tree id is known
    page_tree = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    pixels = bytes([0, 255, 255, 0])
    image = add(
        b"<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 /Length 4 >>\nstream\n" + pixels + b"\nendstream"
    )
    page_ids = []
    for text in pages:
        if text is None:
            content = b"q 200 0 0 200 72 500 cm /Im1 Do Q"
        else:
            lines = [_pdf_string(line) + b" Tj T*" for line in text.split("\n")]
            content = b"BT /F1 11 Tf 14 TL 72 760 Td " + b" ".join(lines) + b" ET"
            secret = hidden[len(page_ids)] if len(page_ids) < len(hidden) else None
            if secret:
                content += (
                    b" BT 3 Tr /F1 11 Tf 72 300 Td " + _pdf_string(secret) + b" Tj ET"
                    b" BT 0 Tr 1 1 1 rg /F1 1 Tf 72 200 Td " + _pdf_string(secret) + b" Tj ET"
                )
        stream = add(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        page_ids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                b"/Resources << /Font << /F1 %d 0 R >> /XObject << /Im1 %d 0 R >> >> >>"
                % (page_tree, stream, font, image)
            )
        )
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % page_tree
    kids = b" ".join(b"%d 0 R" % page_id for page_id in page_ids)
    objects[page_tree - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, catalog, xref_at)
    path.write_bytes(bytes(out))
    return path


def write_encrypted_pdf(path: Path, source_pdf: Path, password: str = "s3cret") -> Path:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(str(source_pdf)))
    # RC4 needs no crypto library; the point is that a password is required.
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    with open(path, "wb") as handle:
        writer.write(handle)
    return path


def write_docx(path: Path, heading: str, paragraphs: Sequence[str], table: Sequence[Sequence[str]]) -> Path:
    import docx

    document = docx.Document()
    document.add_heading(heading, level=1)
    for paragraph in paragraphs[:1]:
        document.add_paragraph(paragraph)
    grid = document.add_table(rows=len(table), cols=len(table[0]))
    for row_index, row in enumerate(table):
        for column_index, value in enumerate(row):
            grid.cell(row_index, column_index).text = value
    for paragraph in paragraphs[1:]:
        document.add_paragraph(paragraph)
    document.save(str(path))
    return path
