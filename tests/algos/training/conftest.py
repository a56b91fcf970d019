"""Fixtures for the rollout tests: one torch thread, stores in a temp cache."""

import torch

from tests.report_doubles import isolated_cache  # noqa: F401 (fixture)


torch.set_num_threads(1)
