"""Fixtures for the rollout tests: experiments/ importable, one torch thread, stores in a temp cache."""

import sys
from pathlib import Path

import torch

from tests.report_doubles import isolated_cache  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[3]
for p in (str(ROOT), str(ROOT / "experiments")):
    if p not in sys.path:
        sys.path.insert(0, p)

torch.set_num_threads(1)
