"""Rank agreement between a proxy's and the LLM team's score tables (algos/evaluation/agreement.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from algos.evaluation.agreement import exact_mean_tau_p, kendall_tau, rank_agreement, sign_flip_p

POLICIES = ["a", "b", "c", "d"]
TASKS = ["t1", "t2", "t3"]


def test_identical_orders_agree_and_reversed_orders_disagree():
    llm = np.array([[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.3, 0.2, 0.1], [0.0, 0.05, 0.02]])
    same = rank_agreement(llm * 0.5 + 0.1, llm, POLICIES, TASKS)
    assert same.within_task_tau == pytest.approx(1.0)
    assert same.between_policy_tau == pytest.approx(1.0)
    reverse = rank_agreement(-llm, llm, POLICIES, TASKS)
    assert reverse.within_task_tau == pytest.approx(-1.0)
    assert reverse.within_task_p == pytest.approx(1.0)
    # a perfect order on 4 policies x 3 tasks: (1/24)^3 under the null
    assert same.within_task_p == pytest.approx((1 / 24) ** 3, rel=1e-6)


def test_exact_p_matches_the_enumerated_null():
    rng = np.random.default_rng(3)
    proxy, llm = rng.random((4, 2)), rng.random((4, 2))
    observed = np.mean([kendall_tau(proxy[:, t], llm[:, t]) for t in range(2)])
    perms = list(itertools.permutations(range(4)))
    null = [
        np.mean([kendall_tau(proxy[:, 0], llm[list(p), 0]), kendall_tau(proxy[:, 1], llm[list(q), 1])])
        for p in perms
        for q in perms
    ]
    assert exact_mean_tau_p(proxy, llm) == pytest.approx(np.mean(np.array(null) >= observed - 1e-9))


def test_a_significant_llm_difference_is_checked_for_its_sign_on_the_proxy():
    tasks = [f"t{i}" for i in range(6)]
    llm = np.array([[0.8] * 6, [0.2] * 6, [0.5, 0.4, 0.6, 0.5, 0.45, 0.55]])
    llm = llm + np.linspace(0, 0.01, 6)  # distinct values per task
    proxy = np.array([[0.1] * 6, [0.9] * 6, [0.5] * 6])  # orders a below b: disagrees on a pair the LLM separates
    a = rank_agreement(proxy, llm, ["a", "b", "c"], tasks)
    pairs = {(p.better, p.worse): p for p in a.significant_pairs}
    assert ("a", "b") in pairs and not pairs[("a", "b")].same_sign
    assert not a.signs_agree
    assert sign_flip_p([0.3] * 6) == pytest.approx(2 / 64)  # all 6 signs alike: 2 of 64 flips as extreme


def test_bad_tables_are_refused_with_their_shapes():
    with pytest.raises(ValueError, match=r"\(policies, tasks\) = \(4, 3\)"):
        rank_agreement(np.zeros((4, 2)), np.zeros((4, 3)), POLICIES, TASKS)
    with pytest.raises(ValueError, match=">= 3 policies"):
        rank_agreement(np.zeros((2, 3)), np.zeros((2, 3)), ["a", "b"], TASKS)


def test_the_noise_ceiling_is_the_references_agreement_with_its_own_replicate():
    from algos.evaluation.agreement import noise_ceiling

    tasks = ["t1", "t2", "t3"]
    rep0 = np.array([[0.1, 0.2, 0.3], [0.5, 0.6, 0.4], [0.9, 0.8, 0.7]])  # 3 policies x 3 tasks
    same = noise_ceiling(rep0, [rep0, rep0.copy()], tasks, reps=200)
    assert same.within_task_tau == pytest.approx(1.0) and same.proxy_vs_one_replicate == pytest.approx(1.0)
    reversed_ = noise_ceiling(rep0, [rep0, -rep0], tasks, reps=200)
    assert reversed_.within_task_tau == pytest.approx(-1.0)
    # The proxy is scored against each replicate alone: here it matches one and reverses the other.
    assert reversed_.proxy_vs_one_replicate == pytest.approx(0.0)
    # One task's replicates disagree on one pair: its tau is 1/3, the mean (1 + 1 + 1/3) / 3.
    rep1 = rep0.copy()
    rep1[[0, 1], 2] = rep1[[1, 0], 2]
    partly = noise_ceiling(rep0, [rep0, rep1], tasks, reps=200)
    assert partly.per_task_tau["t3"] == pytest.approx(1 / 3) and partly.within_task_tau == pytest.approx(7 / 9)
    assert partly.low <= partly.within_task_tau <= partly.high
    assert partly.proxy_share == pytest.approx((1 + 7 / 9) / 2 / (7 / 9))
    with pytest.raises(ValueError, match=">= 2 replicate tables"):
        noise_ceiling(rep0, [rep0], tasks)
