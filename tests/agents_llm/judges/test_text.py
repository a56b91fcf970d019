import pytest

from agents_llm.text.split import chunk_text, sentences


def test_paragraph_chunks_group_a_fixed_number_of_paragraphs():
    text = "A one.\n\nB two.\n\nC three.\n\nD four.\n\nE five."
    assert chunk_text(text, "paragraphs", 2) == ["A one.\n\nB two.", "C three.\n\nD four.", "E five."]


def test_char_chunks_pack_paragraphs_and_cut_long_ones_at_sentence_ends():
    short = ["a" * 40, "b" * 40, "c" * 40]
    assert chunk_text("\n\n".join(short), "chars", 90) == [short[0] + "\n\n" + short[1], short[2]]
    long = "First sentence is here. Second sentence follows it. Third one ends the paragraph."
    pieces = chunk_text(long, "chars", 50)
    assert pieces == ["First sentence is here.", "Second sentence follows it.", "Third one ends the paragraph."]
    assert all(len(p) <= 50 for p in chunk_text("x" * 130, "chars", 50))


def test_editing_a_later_paragraph_keeps_earlier_chunks_identical():
    paras = [f"Paragraph {i} " + "word " * 30 for i in range(6)]
    before = chunk_text("\n\n".join(paras), "chars", 400)
    paras[4] = paras[4] + "extra words here"
    after = chunk_text("\n\n".join(paras), "chars", 400)
    assert after[:2] == before[:2] and after != before


def test_bad_unit_or_size_is_refused():
    with pytest.raises(ValueError, match="unit"):
        chunk_text("a", "words", 10)
    with pytest.raises(ValueError, match="size"):
        chunk_text("a", "chars", 0)


def test_sentences_split_at_ends_but_not_inside_abbreviations():
    assert sentences("It works, e.g. here. Next one! And 3 more?\n\n- a list item") == [
        "It works, e.g. here.",
        "Next one!",
        "And 3 more?",
        "- a list item",
    ]


@pytest.mark.parametrize(
    "line,kind",
    [
        ("The asyncio.run function executes a coroutine and returns its result.", "prose"),
        ("Heaps keep a[k] <= a[2*k+1] for all k, so a[0] is always the smallest element.", "prose"),
        ("def get_facts():", "code"),
        ("facts = []", "code"),
        ('console.log("done")', "code"),
        ("raise ValueError('Source must be a list or tuple of strings')", "code"),
        ("</code></pre>", "code"),
        ("SELECT name FROM users WHERE id = 3;", "code"),
        ("## Tasks", "other"),
        ("- deque", "other"),
    ],
)
def test_line_kind_tells_prose_from_code_by_shape_not_language(line, kind):
    from agents_llm.text.markup import line_kind

    assert line_kind(line) == kind


def test_markup_profile_share_and_prose_left():
    from agents_llm.text.markup import markup_profile

    code = markup_profile("```rust\nfn main() {\n    let x = 1;\n}\n```")
    assert code.is_markup and code.share == 1.0 and code.prose == ""
    mixed = markup_profile("<p>The event loop runs tasks and callbacks.</p>\nfacts = []")
    assert mixed.prose.startswith("The event loop runs tasks and callbacks.") and "<p>" not in mixed.prose
    assert 0 < mixed.share < 0.5 and not mixed.is_markup
    assert markup_profile("Plain prose that says something useful.").share == 0.0
