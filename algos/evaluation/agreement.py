"""Does one way of scoring policies rank them as another does? Rank agreement between two
score tables over the same (policy, task) cells: a cheap proxy team against the LLM team.

A table is ``(policies, tasks)``: one score per policy and task (one greedy episode each).

* Within-task Kendall tau (tau-b, ties allowed): per task, how alike the two rank the
  policies; the figure is the mean over tasks. Its 95 % interval resamples the tasks
  (percentile bootstrap); its p-value is exact: under the null the policies' order on the
  second table is a uniformly random permutation within each task, independently across
  tasks, so the null distribution of the mean is the convolution of each task's
  distribution over all ``P!`` permutations (on a grid of ``GRID``; P <= 8).
* Between-policy tau: the tau of the policies' mean scores, with its exact p over ``P!``.
* Pairwise signs: for every pair of policies whose difference on the reference table is
  significant (exact paired sign-flip test over the tasks), whether the other table orders
  them the same way.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

GRID = 1e-4  # resolution of the exact null distribution of a mean of taus
MAX_EXACT_POLICIES = 8  # 8! = 40,320 permutations per task


def kendall_tau(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall's tau-b; 0.0 when either side is constant (no order to agree with)."""
    from scipy.stats import kendalltau  # type: ignore[import-untyped]  # scipy ships no types; scipy-stubs is not a dependency

    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) != len(b) or len(a) < 2:
        raise ValueError(f"kendall_tau needs two sequences of the same length >= 2, got {len(a)} and {len(b)}")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return float(kendalltau(a, b).statistic)


def _permutation_taus(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if len(x) > MAX_EXACT_POLICIES:
        raise ValueError(
            f"an exact permutation test over {len(x)} policies is too large (at most {MAX_EXACT_POLICIES})"
        )
    return np.array([kendall_tau(x, y[list(p)]) for p in itertools.permutations(range(len(y)))])


def exact_mean_tau_p(proxy: np.ndarray, reference: np.ndarray) -> float:
    """P(mean within-task tau >= observed) when each task's reference order is a random
    permutation: the exact distribution of the sum, convolved task by task on ``GRID``."""
    observed = 0  # in grid units, rounded as the null's values are
    dist = {0: 1.0}  # sum of taus (in grid units) -> probability
    for t in range(proxy.shape[1]):
        taus = np.rint(_permutation_taus(proxy[:, t], reference[:, t]) / GRID).astype(np.int64)
        observed += int(np.rint(kendall_tau(proxy[:, t], reference[:, t]) / GRID))
        values, counts = np.unique(taus, return_counts=True)
        probs = counts / counts.sum()
        nxt: dict[int, float] = {}
        for s, ps in dist.items():
            for v, pv in zip(values.tolist(), probs.tolist()):
                nxt[s + v] = nxt.get(s + v, 0.0) + ps * pv
        dist = nxt
    # Each task's tau was rounded on its own: sums equal in exact arithmetic differ by up to one
    # unit per task; distinct sums of taus of <= 8 policies lie much further apart.
    slack = proxy.shape[1]
    return float(min(1.0, sum(p for s, p in dist.items() if s >= observed - slack)))


MAX_EXACT_SIGN_FLIP = 20  # tasks: 2^20 flips; beyond, the p-value is estimated from random flips


def sign_flip_p(differences: ArrayLike, reps: int = 20000, seed: int = 0) -> float:
    """Two-sided paired test: P(|mean| >= observed) over the sign flips, all 2^n of them up to
    20 tasks, else `reps` random ones ((hits + 1) / (reps + 1), never 0)."""
    d = np.asarray(differences, dtype=float)
    observed = abs(d.mean())
    if len(d) <= MAX_EXACT_SIGN_FLIP:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
        return float(np.mean(np.abs((signs * d).mean(axis=1)) >= observed - 1e-12))
    signs = np.random.default_rng(seed).choice((-1.0, 1.0), size=(reps, len(d)))
    hits = int(np.sum(np.abs((signs * d).mean(axis=1)) >= observed - 1e-12))
    return (hits + 1) / (reps + 1)


def _bootstrap_interval(per_task: np.ndarray, reps: int, seed: int) -> tuple[float, float]:
    """95 % percentile bootstrap interval of the mean over tasks (the tasks resampled)."""
    rng = np.random.default_rng(seed)
    boot = per_task[rng.integers(0, len(per_task), size=(reps, len(per_task)))].mean(axis=1)
    low, high = np.percentile(boot, [2.5, 97.5])
    return float(low), float(high)


@dataclass(frozen=True)
class PairVerdict:
    better: str  # the policy the reference table scores higher
    worse: str
    reference_difference: float  # mean over tasks
    p_value: float  # exact sign-flip test on the reference table
    proxy_difference: float
    same_sign: bool


@dataclass(frozen=True)
class Agreement:
    within_task_tau: float  # mean over tasks
    within_task_low: float  # 95 % bootstrap interval over tasks
    within_task_high: float
    within_task_p: float  # exact permutation p (one-sided: agreement above chance)
    per_task_tau: dict[str, float]
    between_policy_tau: float  # tau of the policies' mean scores
    between_policy_p: float  # exact, one-sided
    significant_pairs: list[PairVerdict]  # reference differences with p < alpha

    @property
    def signs_agree(self) -> bool:
        return all(p.same_sign for p in self.significant_pairs)


def rank_agreement(
    proxy: np.ndarray,
    reference: np.ndarray,
    policies: Sequence[str],
    tasks: Sequence[str],
    *,
    alpha: float = 0.05,
    reps: int = 5000,
    seed: int = 0,
) -> Agreement:
    """How the ``proxy`` table ranks ``policies`` against the ``reference`` table, both
    ``(policies, tasks)``."""
    proxy, reference = np.asarray(proxy, dtype=float), np.asarray(reference, dtype=float)
    if proxy.shape != reference.shape or proxy.shape != (len(policies), len(tasks)):
        raise ValueError(
            f"rank_agreement: tables of shape (policies, tasks) = ({len(policies)}, {len(tasks)}) expected, "
            f"got proxy {proxy.shape} and reference {reference.shape}"
        )
    if len(policies) < 3 or len(tasks) < 2:
        raise ValueError(f"rank_agreement needs >= 3 policies and >= 2 tasks, got {len(policies)} and {len(tasks)}")
    per_task = np.array([kendall_tau(proxy[:, t], reference[:, t]) for t in range(len(tasks))])
    low, high = _bootstrap_interval(per_task, reps, seed)
    p_mean, r_mean = proxy.mean(axis=1), reference.mean(axis=1)
    between = kendall_tau(p_mean, r_mean)
    between_p = float(np.mean(_permutation_taus(p_mean, r_mean) >= between - 1e-12))
    pairs = []
    for i, j in itertools.combinations(range(len(policies)), 2):
        diff = reference[i] - reference[j]
        p = sign_flip_p(diff)
        if p >= alpha:
            continue
        hi, lo = (i, j) if diff.mean() > 0 else (j, i)
        proxy_diff = float((proxy[hi] - proxy[lo]).mean())
        pairs.append(
            PairVerdict(
                better=policies[hi],
                worse=policies[lo],
                reference_difference=float(abs(diff.mean())),
                p_value=p,
                proxy_difference=proxy_diff,
                same_sign=proxy_diff > 0,
            )
        )
    return Agreement(
        within_task_tau=float(per_task.mean()),
        within_task_low=float(low),
        within_task_high=float(high),
        within_task_p=exact_mean_tau_p(proxy, reference),
        per_task_tau={t: float(v) for t, v in zip(tasks, per_task)},
        between_policy_tau=between,
        between_policy_p=between_p,
        significant_pairs=pairs,
    )


@dataclass(frozen=True)
class NoiseCeiling:
    """How well the reference agrees with itself: the within-task tau between replicate tables
    that differ only in what should not matter (the sampling seed), and the proxy's tau against
    one replicate, the same footing (a mean of replicates is less noisy than either)."""

    within_task_tau: float  # mean over tasks of the mean over replicate pairs
    low: float  # 95 % bootstrap interval over tasks
    high: float
    per_task_tau: dict[str, float]
    proxy_vs_one_replicate: float  # the proxy's within-task tau against each replicate, averaged
    replicates: int

    @property
    def proxy_share(self) -> float:
        """The proxy's tau as a share of the ceiling (nan when the ceiling is not above 0)."""
        return self.proxy_vs_one_replicate / self.within_task_tau if self.within_task_tau > 0 else float("nan")


def noise_ceiling(
    proxy: np.ndarray,
    replicates: Sequence[np.ndarray],
    tasks: Sequence[str],
    *,
    reps: int = 5000,
    seed: int = 0,
) -> NoiseCeiling:
    """The reference's own noise ceiling from >= 2 replicate ``(policies, tasks)`` tables."""
    tables = [np.asarray(r, dtype=float) for r in replicates]
    shape = np.asarray(proxy).shape
    if len(tables) < 2 or any(t.shape != shape for t in tables) or shape[1] != len(tasks) or shape[0] < 3:
        raise ValueError(
            f"noise_ceiling needs >= 2 replicate tables shaped like the proxy's {shape} (>= 3 policies, "
            f"{len(tasks)} tasks), got {[t.shape for t in tables]}"
        )
    pairs = list(itertools.combinations(range(len(tables)), 2))
    per_task = np.array(
        [np.mean([kendall_tau(tables[a][:, t], tables[b][:, t]) for a, b in pairs]) for t in range(len(tasks))]
    )
    low, high = _bootstrap_interval(per_task, reps, seed)
    proxy_one = np.mean(
        [kendall_tau(np.asarray(proxy)[:, t], table[:, t]) for table in tables for t in range(len(tasks))]
    )
    return NoiseCeiling(
        within_task_tau=float(per_task.mean()),
        low=float(low),
        high=float(high),
        per_task_tau={t: float(v) for t, v in zip(tasks, per_task)},
        proxy_vs_one_replicate=float(proxy_one),
        replicates=len(tables),
    )
