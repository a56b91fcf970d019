"""bm25s behind the lexical interface ranks like the postings backend; auto picks by size."""

from __future__ import annotations

import random

import pytest

from rag.lexical import AutoLexicalIndex, BM25sIndex, RankBM25Index, build_lexical_index

WORDS = (
    "garnet electrolyte lithium anode cathode conductivity sulfide oxide polymer interface dendrite "
    "separator voltage capacity cycle temperature pressure coating ceramic QX-7741-B err_4471"
).split()


def _corpus(n=400, seed=0):
    rng = random.Random(seed)
    return [f"c{i}" for i in range(n)], [" ".join(rng.choices(WORDS, k=rng.randint(3, 30))) for i in range(n)]


@pytest.mark.parametrize(
    "query",
    [
        "garnet electrolyte conductivity",
        "QX-7741-B",
        "lithium lithium dendrite",
        "err_4471 separator",
        "unknownword",
        "ceramic coating at high temperature",
    ],
)
def test_bm25s_ranks_like_the_rank_bm25_backend(query):
    ids, texts = _corpus()
    ours, theirs = RankBM25Index(), BM25sIndex()
    for index in (ours, theirs):
        index.add(ids, texts)
        index.remove(["c3", "c7"])  # mutations before the (lazy) build
    a, b = ours.search(query, 20), theirs.search(query, 20)
    assert [cid for cid, _ in a] == [cid for cid, _ in b]
    if a:  # scores differ by the constant (k1 + 1) of the tf factor only
        ratios = {round(sa / sb, 6) for (_, sa), (_, sb) in zip(a, b)}
        assert ratios == {2.5}


def test_auto_switches_to_bm25s_at_its_threshold_and_a_bad_name_is_named():
    ids, texts = _corpus(50)
    small = build_lexical_index("auto", bm25s_min_chunks=51)
    small.add(ids, texts)
    small.search("garnet", 5)
    large = build_lexical_index("auto", bm25s_min_chunks=50)
    large.add(ids, texts)
    assert [c for c, _ in large.search("garnet", 5)] == [c for c, _ in small.search("garnet", 5)]
    assert (small.scorer_backend, large.scorer_backend) == ("rank_bm25", "bm25s")
    assert isinstance(large, AutoLexicalIndex)
    with pytest.raises(ValueError, match="unknown backend 'bm25x'"):
        build_lexical_index("bm25x")
