from __future__ import annotations

import numpy as np
from rank_bm25 import BM25Okapi

from rag.lexical import RankBM25Index, bm25_tokens


def test_tokens_keep_identifiers_whole_and_in_parts():
    assert bm25_tokens("The QX-7741-B pump and err_4471.") == [
        "qx-7741-b",
        "qx",
        "7741",
        "b",
        "pump",
        "err_4471",
        "err",
        "4471",
    ]


def test_postings_scores_equal_rank_bm25_formula():
    index = RankBM25Index()
    texts = [
        "pump seal leak pump",
        "seal kit order",
        "valve stem packing",
        "pump motor winding heat",
        "coolant pump impeller wear",
        "unrelated words entirely",
    ]
    index.add([f"d{i}" for i in range(len(texts))], texts)
    index.search("pump", 1)  # builds the scorer
    scorer = index._scorer
    for query in (["pump"], ["pump", "seal"], ["seal", "seal", "heat"], ["absent"]):
        # BM25Okapi's own loop over every document, on the same statistics.
        assert np.allclose(scorer.get_scores(query), BM25Okapi.get_scores(scorer, query))
    # A term in half the documents still scores above zero (Lucene idf).
    assert [chunk_id for chunk_id, _ in index.search("pump", 10)] == ["d0", "d3", "d4"]
    assert all(score > 0 for _, score in index.search("pump", 10))


def test_remove_and_add_take_effect_on_next_search():
    index = RankBM25Index()
    index.add(["a", "b"], ["alpha beta", "beta gamma"])
    assert [c for c, _ in index.search("beta", 5)] and index.builds == 1
    index.remove(["a"])
    index.add(["c"], ["delta beta beta"])
    assert sorted(c for c, _ in index.search("beta", 5)) == ["b", "c"]
    assert index.search("alpha", 5) == [] and index.builds == 2
    index.remove(["missing"])
    index.search("beta", 5)
    assert index.builds == 2  # removing an unknown id changes nothing
