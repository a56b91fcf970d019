"""algos.evaluation matches rliable's statistics (and their definitions) on fixed inputs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

pytest.importorskip("rliable")
from rliable import library, metrics  # noqa: E402

from algos.evaluation import (
    aggregate_iqm,
    curve_bands,
    interval_estimates,
    probability_of_improvement,  # noqa: E402
    score_matrix,
)

X = np.array([[0.10, 0.50, 0.90], [0.20, 0.55, 0.80], [0.15, 0.60, 0.95], [0.30, 0.40, 0.70], [0.25, 0.45, 0.85]])
Y = np.array([[0.12, 0.52, 0.60], [0.12, 0.52, 0.60], [0.12, 0.52, 0.60]])


def test_iqm_is_the_mean_of_the_middle_half():
    assert aggregate_iqm(X) == pytest.approx(sps.trim_mean(X.reshape(-1), 0.25))
    # 8 values: the middle four are 3, 4, 5, 6
    assert aggregate_iqm(np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 100.0]])) == pytest.approx(4.5)


def test_interval_matches_rliable():
    # arch's bootstrap is not reproducible from a passed RandomState alone, so the two runs
    # agree up to resampling noise (percentiles of 3000 resamples: well under 0.02 here).
    ours = interval_estimates({"x": X}, reps=3000, seed=3)["x"]
    points, cis = library.get_interval_estimates(
        {"x": X}, lambda s: np.array([metrics.aggregate_iqm(s)]), reps=3000, random_state=np.random.RandomState(3)
    )
    assert ours.point == pytest.approx(float(points["x"][0]))
    assert (ours.low, ours.high) == pytest.approx((float(cis["x"][0][0]), float(cis["x"][1][0])), abs=0.02)
    assert ours.low < ours.point < ours.high


def test_a_constant_policy_has_a_point_interval():
    est = interval_estimates({"y": Y}, reps=200)["y"]
    assert est.low == pytest.approx(est.point) == pytest.approx(est.high)


def test_one_run_per_task_has_an_interval_only_when_tasks_are_resampled():
    # One greedy episode per task (an LLM-team panel): resampling runs within tasks cannot move
    # the IQM; resampling the tasks gives the spread over tasks.
    one_run = X[:1]
    stratified = interval_estimates({"x": one_run}, reps=500)["x"]
    assert stratified.low == pytest.approx(stratified.point) == pytest.approx(stratified.high)
    over_tasks = interval_estimates({"x": one_run}, reps=500, task_bootstrap=True)["x"]
    assert over_tasks.point == pytest.approx(stratified.point)
    assert one_run.min() <= over_tasks.low < over_tasks.point < over_tasks.high <= one_run.max()


def test_probability_of_improvement_matches_rliable_and_its_definition():
    est = probability_of_improvement(X, Y, reps=500, seed=1)
    # Per task: P(x > y) + 0.5 P(x = y), then the mean over tasks.
    by_hand = np.mean([np.mean([(x > y) + 0.5 * (x == y) for x in X[:, t] for y in Y[:, t]]) for t in range(3)])
    assert est.point == pytest.approx(by_hand)
    assert est.point == pytest.approx(metrics.probability_of_improvement(X, Y))
    assert est.low <= est.point <= est.high
    assert probability_of_improvement(Y, X, reps=100).point == pytest.approx(1 - by_hand)


def test_curve_band_brackets_the_iqm_at_each_point():
    curves = np.array([[0.0, 0.2, 0.5], [0.1, 0.3, 0.6], [0.0, 0.25, 0.7], [0.05, 0.2, 0.55], [0.1, 0.35, 0.65]])
    point, band = curve_bands(curves, reps=300)
    assert point == pytest.approx([sps.trim_mean(curves[:, j], 0.25) for j in range(3)])
    assert band.shape == (2, 3) and np.all(band[0] <= point + 1e-12) and np.all(point <= band[1] + 1e-12)


def test_score_matrix_and_its_errors():
    rows = [{"run": r, "task": t, "v": r + 10 * i} for r in range(2) for i, t in enumerate(["a", "b"])]
    mat, tasks, runs = score_matrix(rows, run="run", task="task", value="v")
    assert tasks == ["a", "b"] and runs == [0, 1] and mat.tolist() == [[0, 10], [1, 11]]
    with pytest.raises(ValueError, match="runs lack tasks"):
        score_matrix(rows[:-1], run="run", task="task", value="v")
    with pytest.raises(ValueError, match="non-finite"):
        aggregate_iqm(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="same tasks"):
        probability_of_improvement(X, Y[:, :2])
