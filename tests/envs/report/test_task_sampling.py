"""task_sampling=by_seed: n consecutive seeds play each of the split's n tasks once
(evaluate.py's draw: its episodes used to draw held-out tasks with replacement)."""

from __future__ import annotations

import collections

import pytest

import envs
from tests.report_doubles import HASHING_JUDGE, HASHING_RAG, isolated_cache  # noqa: F401 (fixture)

BASE = dict(llm={"backend": "scripted"}, rag=HASHING_RAG, judge=HASHING_JUDGE, max_rounds=2, split="holdout")


def _tasks_played(env, seeds):
    played = []
    for s in seeds:
        env.reset(seed=s)
        played.append(env.task.id)
    return played


@pytest.mark.slow
@pytest.mark.usefixtures("isolated_cache")
def test_by_seed_plays_every_task_once_per_n_consecutive_seeds():
    env = envs.make("report_writing_v0", **BASE, task_sampling="by_seed")
    ids = [t.id for t in env.tasks]
    n = len(ids)
    assert n >= 3
    played = _tasks_played(env, range(7, 7 + 2 * n))  # any offset: consecutive seeds
    assert collections.Counter(played) == {t: 2 for t in ids}
    assert _tasks_played(env, [7]) == played[:1], "the same seed plays the same task"


@pytest.mark.usefixtures("isolated_cache")
def test_random_sampling_is_the_default_and_draws_with_replacement():
    env = envs.make("report_writing_v0", **BASE)
    n = len(env.tasks)
    played = _tasks_played(env, range(3 * n))
    assert len(set(played)) < n or collections.Counter(played).most_common(1)[0][1] != 3


def test_an_unknown_sampling_is_refused_naming_the_key():
    with pytest.raises(ValueError, match="task_sampling must be one of random, by_seed"):
        envs.make("report_writing_v0", **BASE, task_sampling="cycle")
