"""Evaluation statistics for comparing policies over seeds and tasks (rliable's)."""

from .statistics import (
    IntervalEstimate,
    aggregate_iqm,
    curve_bands,
    interval_estimates,
    probability_of_improvement,
    score_matrix,
)

__all__ = [
    "IntervalEstimate",
    "aggregate_iqm",
    "curve_bands",
    "interval_estimates",
    "probability_of_improvement",
    "score_matrix",
]
