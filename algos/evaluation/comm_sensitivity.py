"""Does communication decide the outcome? Three diagnostics printed beside every comparison.

A learner of communication can only beat a fixed topology on an env where who talks to whom
changes what the team produces. These figures say how far that holds on a panel:

* Message ablation: the same policy with every delivery between agents blanked, paired
  against the intact policy over the same tasks and seeds (`paired_difference` of intact minus
  ablated). A large positive difference: what agents send each other matters.
* Policy identity: over the policies other than the pipeline, how much of the score's
  within-task variance the policy explains (`share`), and a within-task permutation test of
  it (`p`): under the null the policy labels are exchangeable within each task.
* Report overlap: the mean sentence Jaccard between two different policies' reports on the
  same task. Near 1: the policies write the same report whatever they say to each other.

Score tables are ``(policies, tasks)``, one score per cell (or the mean of a cell's episodes).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .agreement import sign_flip_p


def paired_difference(diff: ArrayLike, reps: int = 5000, seed: int = 0) -> dict:
    """Mean over tasks of a per-task difference, its 95 % percentile bootstrap over tasks and the
    two-sided sign-flip p (exact up to 20 tasks, else from `reps` random flips)."""
    d = np.asarray(diff, dtype=float)
    if d.ndim != 1 or len(d) < 2:
        raise ValueError(f"paired_difference needs one difference per task for >= 2 tasks, got shape {d.shape}")
    rng = np.random.default_rng(seed)
    boot = d[rng.integers(0, len(d), size=(reps, len(d)))].mean(axis=1)
    low, high = np.percentile(boot, [2.5, 97.5])
    p = sign_flip_p(d, reps=reps, seed=seed)
    return {
        "mean": float(d.mean()),
        "low": float(low),
        "high": float(high),
        "p": p,
        "tasks": int(len(d)),
        **power(d),
    }


# Two-sided alpha 0.05 and 80 % power, the normal approximation of the paired test.
Z_ALPHA, Z_POWER = 1.959964, 0.841621


def power(diff: ArrayLike, target: float = 0.03) -> dict:
    """From a panel's own per-task differences: their sd, the minimum difference the panel detects
    with 80 % power at alpha 0.05 ((z_a + z_b) sd / sqrt(n)), and the tasks that would detect `target`."""
    d = np.asarray(diff, dtype=float)
    sd = float(d.std(ddof=1)) if len(d) > 1 else float("nan")
    factor = Z_ALPHA + Z_POWER
    return {
        "sd": sd,
        "mdd": factor * sd / np.sqrt(len(d)),
        f"tasks_for_{target:g}": int(np.ceil((factor * sd / target) ** 2)) if sd > 0 else 1,
    }


def power_words(d: Mapping, resolve: float = 0.05) -> str:
    """What a paired difference can say, in words: its minimum detectable difference, and that it
    cannot resolve `resolve` when that is below it."""
    text = f"minimum detectable difference {d['mdd']:.3f} (80 % power); {d['tasks_for_0.03']} tasks would detect 0.03"
    if not d["mdd"] <= resolve:
        text += f"; this panel CANNOT resolve a difference of {resolve:g}"
    return text


@dataclass(frozen=True)
class PolicyIdentity:
    share: float  # the policy's sum of squares over the within-task sum of squares
    p: float  # within-task permutation test of that share (one-sided: more than chance)
    policies: tuple[str, ...]
    tasks: int


def _policy_share(centred: np.ndarray) -> float:
    total = float((centred**2).sum())
    if total == 0.0:
        return 0.0
    return float(centred.shape[1] * (centred.mean(axis=1) ** 2).sum() / total)


def policy_identity(scores: ArrayLike, policies: Sequence[str], *, reps: int = 20000, seed: int = 0) -> PolicyIdentity:
    """How much the policy explains of the score beyond the task, `scores` ``(policies, tasks)``.

    Each task's scores are centred on the task's mean (the task explains the rest); the share is
    the policies' sum of squares over what is left. Its p permutes the policy labels within each
    task, independently across tasks: exactly when there are at most `reps` such relabellings,
    else by `reps` random ones."""
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2 or s.shape[0] != len(policies) or s.shape[0] < 2 or s.shape[1] < 2:
        raise ValueError(
            f"policy_identity needs a (policies, tasks) table with >= 2 of each for {len(policies)} policies, "
            f"got shape {s.shape}"
        )
    centred = s - s.mean(axis=0, keepdims=True)
    observed = _policy_share(centred)
    n_policies, n_tasks = s.shape
    perms = list(itertools.permutations(range(n_policies)))
    if len(perms) ** n_tasks <= reps:
        shares = [
            _policy_share(np.stack([centred[list(p), t] for t, p in enumerate(combo)], axis=1))
            for combo in itertools.product(perms, repeat=n_tasks)
        ]
        p = float(np.mean(np.asarray(shares) >= observed - 1e-12))
    else:
        rng = np.random.default_rng(seed)
        hits = 0
        for _ in range(reps):
            shuffled = np.stack([centred[rng.permutation(n_policies), t] for t in range(n_tasks)], axis=1)
            hits += _policy_share(shuffled) >= observed - 1e-12
        p = (1 + hits) / (1 + reps)
    return PolicyIdentity(share=observed, p=float(p), policies=tuple(policies), tasks=n_tasks)


def jaccard(a: set[str], b: set[str]) -> float:
    """|a & b| / |a | b|; two empty reports share everything (1.0)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True)
class ReportOverlap:
    mean: float  # over every pair of different policies and every task both wrote
    per_pair: dict[str, float]  # "A | B" -> mean over tasks
    pairs: int  # (policy pair, task) cells counted


def report_overlap(sentences: Mapping[str, Mapping[str, set[str]]]) -> ReportOverlap:
    """Mean sentence Jaccard between two different policies' reports on the same task.

    `sentences[policy][task]` is the set of a report's (normalised) sentences; a task counts for a
    pair only when both policies have its report."""
    names = list(sentences)
    if len(names) < 2:
        raise ValueError(f"report_overlap needs the reports of >= 2 policies, got {names}")
    per_pair: dict[str, float] = {}
    values: list[float] = []
    for a, b in itertools.combinations(names, 2):
        shared = [t for t in sentences[a] if t in sentences[b]]
        if not shared:
            continue
        pair = [jaccard(sentences[a][t], sentences[b][t]) for t in shared]
        per_pair[f"{a} | {b}"] = float(np.mean(pair))
        values.extend(pair)
    if not values:
        raise ValueError("report_overlap: no task has the reports of two policies")
    return ReportOverlap(mean=float(np.mean(values)), per_pair=per_pair, pairs=len(values))
