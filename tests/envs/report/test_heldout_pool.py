"""The held-out pool (envs/report/heldout_pool.json) is held out: by topic, by task and by document.

A held-out task that needs a training task's document measures memory of that document, not
generalisation; a key term absent from the task's own documents is a term no report can
ground. Both are checked on the real corpora (the pydoc render and the installed packages'
descriptions), not on a listing.
"""

from __future__ import annotations

import json

import pytest

from agents_llm.judges.reference import key_terms_of
from envs.report.tasks import HELDOUT_POOL_FILE, TASKS_FILE, load_tasks, materialize_corpus

POOL_SIZE_AT_LEAST = 48  # what the benchmark needs to resolve a 0.05 difference (see docs/benchmark)


@pytest.fixture(scope="module")
def pool():
    return load_tasks("heldout_pool", split="holdout")


@pytest.fixture(scope="module")
def train():
    return load_tasks(split="train")


@pytest.fixture(scope="module")
def corpus_folders(pool, isolated_cache):
    return {corpus: materialize_corpus(corpus) for corpus in {t.corpus for t in pool}}


def test_the_pool_is_large_and_spans_more_than_one_corpus(pool):
    assert len(pool) >= POOL_SIZE_AT_LEAST, f"the held-out pool has {len(pool)} tasks; the benchmark needs 48"
    corpora = {t.corpus for t in pool}
    assert len(corpora) >= 2, f"every held-out task is on {corpora}: add tasks on another corpus"
    assert all(t.split == "holdout" for t in pool)
    assert load_tasks("heldout_pool", split="all") == pool, "the pool holds held-out tasks only"


def test_every_task_names_its_documents_and_they_exist(pool, train, corpus_folders):
    unnamed = [t.id for t in pool + train if not t.documents]
    assert not unnamed, f"tasks without 'documents' (the corpus files they write about): {unnamed}"
    missing = [f"{t.id}: {doc}" for t in pool for doc in t.documents if not (corpus_folders[t.corpus] / doc).is_file()]
    assert not missing, f"documents not in their corpus (renamed module or package?): {missing}"


def test_every_key_term_occurs_in_the_tasks_own_documents(pool, corpus_folders):
    missing = []
    for task in pool:
        text = " ".join((corpus_folders[task.corpus] / doc).read_text(encoding="utf-8") for doc in task.documents)
        words = set(key_terms_of(text))
        missing += [f"{task.id}: {term!r}" for term in task.key_terms if not set(key_terms_of(term)) <= words]
        assert len(task.key_terms) >= 5, f"{task.id}: at least 5 key terms, got {len(task.key_terms)}"
    assert not missing, f"key terms absent from the task's own documents: {missing}"


def test_no_held_out_task_shares_a_topic_an_id_or_a_document_with_a_training_task(pool, train):
    assert not {t.id for t in pool} & {t.id for t in train}
    assert not {t.topic.lower() for t in pool} & {t.topic.lower() for t in train}
    train_docs = {(t.corpus, doc) for t in train for doc in t.documents}
    shared = [f"{t.id}: {doc}" for t in pool for doc in t.documents if (t.corpus, doc) in train_docs]
    assert not shared, f"held-out tasks that need a training task's document: {shared}"
    # Within the pool too: two held-out tasks on one document are one task counted twice.
    seen: dict[tuple[str, str], str] = {}
    for task in pool:
        for doc in task.documents:
            other = seen.setdefault((task.corpus, doc), task.id)
            assert other == task.id, f"{task.id} and {other} both write about {doc}"


def test_the_tasks_read_while_designing_are_named_and_unchanged(pool):
    """The pool says which tasks anything was designed on; those are the default file's held-out
    tasks, word for word (one definition, whichever file a panel reads)."""
    doc = json.loads(HELDOUT_POOL_FILE.read_text(encoding="utf-8"))
    read = set(doc["read_during_design"]["tasks"])
    default_holdout = {t.id: t for t in load_tasks(TASKS_FILE, split="holdout")}
    assert read == set(default_holdout), "read_during_design must list the default file's held-out tasks"
    by_id = {t.id: t for t in pool}
    changed = [tid for tid in read if by_id.get(tid) != default_holdout[tid]]
    assert not changed, f"held-out tasks that differ between the two files: {changed}"


def test_a_task_set_is_chosen_by_name_and_an_unknown_name_says_which_exist():
    assert load_tasks("default", split="all") == load_tasks(split="all")
    with pytest.raises(FileNotFoundError, match="heldout_pool"):
        load_tasks("heldout_pol", split="holdout")
