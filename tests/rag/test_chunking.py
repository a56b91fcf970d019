from __future__ import annotations

from rag.chunking import chunk_text, context_prefix, embedding_input, paragraph_before
from rag.embeddings import bundled_minilm_path
from rag.sentences import split_sentences
from rag.tokenization import HuggingFaceTokenizer, WordTokenizer

TEXT = " ".join(
    f"Sentence {i} describes Valve-{i % 7} pressure of {i * 3} kPa in the CamelCase Subsystem." for i in range(120)
)


def _check_budget_and_slices(tokenizer, text, name, max_tokens, overlap):
    chunks = chunk_text(text, name, tokenizer, max_tokens=max_tokens, overlap_tokens=overlap)
    assert len(chunks) > 3
    for chunk in chunks:
        # The chunk is an exact slice of the source (case and punctuation preserved).
        assert chunk.text in text
        embedded = embedding_input(name, chunk.page, chunk.text)
        assert tokenizer.count(embedded) + tokenizer.special_tokens <= max_tokens
    return chunks


def test_word_tokenizer_chunks_respect_budget_and_overlap():
    # Text with no sentence start to snap to: windows overlap by exactly the overlap.
    text = " ".join(f"valve{i % 7} pressure of {i * 3} kpa in the camelcase subsystem" for i in range(120))
    tokenizer = WordTokenizer()
    chunks = _check_budget_and_slices(tokenizer, text, "report.txt", max_tokens=64, overlap=8)
    for previous, current in zip(chunks, chunks[1:]):
        previous_tokens = [previous.text[a:b] for a, b in tokenizer.spans(previous.text)]
        current_tokens = [current.text[a:b] for a, b in tokenizer.spans(current.text)]
        assert previous_tokens[-8:] == current_tokens[:8]
    # Together the chunks cover the whole text.
    assert chunks[0].text == text[: len(chunks[0].text)]
    assert text.endswith(chunks[-1].text)


def test_chunks_of_prose_begin_and_end_between_sentences():
    tokenizer = WordTokenizer()
    chunks = _check_budget_and_slices(tokenizer, TEXT, "report.txt", max_tokens=64, overlap=8)
    for previous, current in zip(chunks, chunks[1:]):
        # Whole sentences: each chunk opens on one and closes on an end of sentence.
        assert current.text.startswith("Sentence ") and previous.text.endswith("Subsystem."), current.text
        # No gap, and an overlap of whole sentences within the overlap budget (here none fits).
        start = TEXT.index(current.text)
        previous_end = TEXT.index(previous.text) + len(previous.text)
        assert start <= previous_end + 1
        assert len(tokenizer.spans(TEXT[start:previous_end])) <= 8
    assert chunks[0].text == TEXT[: len(chunks[0].text)]
    assert TEXT.endswith(chunks[-1].text)


def test_minilm_tokenizer_budget_leaves_room_for_the_prefix():
    tokenizer = HuggingFaceTokenizer(bundled_minilm_path() / "tokenizer.json")
    long_name = "a-rather-long-file-name-for-the-quarterly-maintenance-report-2024.pdf"
    pdf_text = "[PAGE 1]\n" + TEXT + "\n[PAGE 2]\n" + TEXT[:2000]
    chunks = _check_budget_and_slices(tokenizer, pdf_text, long_name, max_tokens=128, overlap=16)
    assert {chunk.page for chunk in chunks} == {1, 2}
    prefix_tokens = tokenizer.count(context_prefix(long_name, 1) + "\n")
    budget = 128 - 2 - prefix_tokens
    # Chunks fill the budget that is left, up to the whole sentence that would not fit.
    longest_sentence = max(tokenizer.count(s) for s in split_sentences(TEXT))
    assert max(chunk.token_count for chunk in chunks) >= budget - longest_sentence
    # Text with no sentence start fills it up to a word boundary.
    words_only = "[PAGE 1]\n" + TEXT.replace(".", "").lower()
    chunks = _check_budget_and_slices(tokenizer, words_only, long_name, max_tokens=128, overlap=16)
    assert max(chunk.token_count for chunk in chunks) >= budget - 8


def test_prefix_names_source_and_page():
    assert context_prefix("a.pdf", 3) == "[Source: a.pdf | Page: 3]"
    assert context_prefix("notes.md", None) == "[Source: notes.md]"


def test_a_code_block_cut_by_a_chunk_edge_is_fenced_again_on_both_sides():
    from rag.sentences import blocks

    tokenizer = WordTokenizer()
    code = "\n".join(f"value_{n} = compute(value_{n - 1}, step={n})" for n in range(1, 40))
    text = (
        "# Setup\n\nThe installer copies every file into the prefix.\n\n"
        f"```python\n{code}\n```\n\n# Usage\n\nThe tool reads its configuration from the prefix.\n"
    )
    chunks = chunk_text(text, "guide.md", tokenizer, max_tokens=64, overlap_tokens=8)
    assert len(chunks) >= 3  # the block is cut at least once
    for chunk in chunks:  # the fences added fit the budget too
        assert tokenizer.count(embedding_input("guide.md", None, chunk.text)) + tokenizer.special_tokens <= 64
    for chunk in chunks:
        fence_lines = [line for line in chunk.text.splitlines() if line.strip().startswith("```")]
        assert len(fence_lines) % 2 == 0, chunk.text  # read alone, every code block closes
    # The heading after the block is a heading in the chunk that holds it, not a line of code.
    last = next(c for c in chunks if "# Usage" in c.text)
    assert any(b.kind == "heading" and b.text == "# Usage" for b in blocks(last.text)), last.text


def test_the_paragraph_a_chunk_begins_inside_is_read_from_the_chunk_before():
    previous = "The pump lifts water.\n\nSummaries must call it unsafe. The gasket seals the housing."
    # Overlapping by a sentence inside the paragraph: the part of the paragraph before the chunk.
    assert paragraph_before(previous, "The gasket seals the housing. KITE46 The motor is quiet.") == (
        "Summaries must call it unsafe."
    )
    # Overlapping from a paragraph's start: the chunk begins the paragraph.
    assert paragraph_before(previous, "Summaries must call it unsafe. The gasket seals the housing. More.") == ""
    # No overlap: whether a paragraph break lay between them is in neither text, so the chunk goes on
    # from the previous chunk's last paragraph.
    assert paragraph_before(previous, "KITE46 The motor is quiet.") == (
        "Summaries must call it unsafe. The gasket seals the housing."
    )


def test_a_chunk_knows_whether_it_begins_a_paragraph():
    text = "\n\n".join(" ".join(f"Paragraph {p} says thing number {n}." for n in range(3)) for p in range(8))
    chunks = chunk_text(text, "doc.md", WordTokenizer(), max_tokens=40, overlap_tokens=6)
    begins = [chunk.text.split(".")[0].endswith("number 0") for chunk in chunks]
    assert True in begins[1:] and False in begins, [c.text[:40] for c in chunks]  # both kinds of cut occur
    assert [chunk.begins_paragraph for chunk in chunks] == begins
