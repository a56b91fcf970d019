"""Fixtures for the whole suite. saved_figures records the matplotlib figures plotting code
saves, so a test can read their axes (lines, collections, texts) instead of the pixels."""

from __future__ import annotations

import pytest


@pytest.fixture
def saved_figures(monkeypatch):
    """The matplotlib figures the plotting code saves, as they were when saved."""
    from matplotlib.figure import Figure

    figures = []
    original = Figure.savefig

    def record(self, *args, **kwargs):
        figures.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", record)
    return figures
