"""The experiments/ entry points' tests: experiments/ importable, one torch thread (a busy 2-core machine)."""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
for p in (str(ROOT), str(ROOT / "experiments")):
    if p not in sys.path:
        sys.path.insert(0, p)

torch.set_num_threads(1)
