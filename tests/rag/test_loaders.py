from __future__ import annotations

import pytest

from rag.chunking import chunk_text, split_pages
from rag.loaders import DocumentError, decode_text_bytes, load_document
from rag.tokenization import WordTokenizer
from tests.rag.docs import write_docx, write_encrypted_pdf, write_pdf


def test_pdf_pages_are_marked_and_chunks_carry_page_numbers(tmp_path):
    pdf = write_pdf(
        tmp_path / "manual.pdf",
        [
            "Introduction to the pump manual\nalpha bravo charlie",
            "Seal replacement for QX-7741-B\ndelta echo foxtrot",
            "Warranty terms and conditions\ngolf hotel india",
        ],
    )
    document = load_document(pdf)
    assert document.kind == "pdf" and document.page_count == 3
    pages = split_pages(document.text)
    assert [page for page, _ in pages] == [1, 2, 3]
    assert "QX-7741-B" in pages[1][1] and "QX-7741-B" not in pages[0][1] + pages[2][1]

    chunks = chunk_text(document.text, pdf.name, WordTokenizer(), max_tokens=64, overlap_tokens=4)
    by_page = {chunk.page: chunk.text for chunk in chunks}
    assert "Seal replacement" in by_page[2]
    assert "Warranty" in by_page[3]
    assert all("[PAGE" not in chunk.text for chunk in chunks)


def test_docx_keeps_tables_and_headings_in_order(tmp_path):
    path = write_docx(
        tmp_path / "materials.docx",
        "Material properties",
        ["Steel and aluminium were compared.", "The table above lists tensile strength."],
        [["Material", "Tensile strength"], ["Steel S235", "360 MPa"], ["Al 6061-T6", "310 MPa"]],
    )
    text = load_document(path).text
    assert text.startswith("# Material properties")
    assert "Steel S235 | 360 MPa" in text and "Al 6061-T6 | 310 MPa" in text
    assert text.index("compared") < text.index("Steel S235") < text.index("table above")


def test_markdown_and_latin1_text_are_decoded(tmp_path):
    latin = tmp_path / "notes.txt"
    latin.write_bytes("Café crème, naïve façade in Zürich: 25 °C.".encode("latin-1"))
    document = load_document(latin)
    assert "Café crème, naïve façade in Zürich: 25 °C." in document.text
    assert document.encoding in ("cp1252", "latin-1")

    markdown = tmp_path / "readme.md"
    markdown.write_text("# Title\n\nBody with `code` and **bold**.\n", encoding="utf-8")
    assert load_document(markdown).text.startswith("# Title")


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("smart “quotes” – dash".encode("cp1252"), "smart “quotes” – dash"),
        ("utf-16 text ü".encode("utf-16"), "utf-16 text ü"),
        ("\ufeffutf-8 with bom ü".encode("utf-8"), "utf-8 with bom ü"),
        ("plain utf-8 ü €".encode("utf-8"), "plain utf-8 ü €"),
        ("utf-16 without a byte order mark".encode("utf-16-le"), "utf-16 without a byte order mark"),
    ],
)
def test_decoding_of_unknown_encodings(raw, expected):
    text, _ = decode_text_bytes(raw)
    assert text == expected


def test_control_characters_are_removed_from_loaded_text(tmp_path):
    path = tmp_path / "ctrl.txt"
    path.write_text("clean\x1b[31m red\u202e text\n", encoding="utf-8")
    text = load_document(path).text
    assert "\x1b" not in text and "\u202e" not in text and "clean[31m red text" in text


def test_bad_files_raise_document_errors_that_say_why(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    garbage = tmp_path / "garbage.pdf"
    garbage.write_bytes(bytes(range(256)) * 40)
    binary_txt = tmp_path / "blob.txt"
    binary_txt.write_bytes(bytes(range(256)) * 40)
    text_pdf = write_pdf(tmp_path / "plain.pdf", ["secret text"])
    encrypted = write_encrypted_pdf(tmp_path / "locked.pdf", text_pdf)
    image_only = write_pdf(tmp_path / "scan.pdf", [None, None])
    unsupported = tmp_path / "sheet.xlsx"
    unsupported.write_bytes(b"PK\x03\x04")

    expectations = {
        empty: "empty file",
        garbage: "not a readable PDF",
        binary_txt: "binary",
        encrypted: "password is required",
        image_only: "no extractable text in 2 page(s)",
        unsupported: "unsupported extension '.xlsx'",
        tmp_path / "missing.md": "does not exist",
    }
    for path, fragment in expectations.items():
        with pytest.raises(DocumentError) as raised:
            load_document(path)
        assert fragment in raised.value.reason, (path, raised.value.reason)
        assert str(path) in str(raised.value)


def test_size_limit_is_checked_before_reading(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"word " * 300_000)  # 1.5 MB
    with pytest.raises(DocumentError, match="over the 1.0 MiB limit"):
        load_document(path, max_bytes=2**20)
