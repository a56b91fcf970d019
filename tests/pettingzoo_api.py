"""PettingZoo's API and seed tests with their warnings raised as errors.

``pettingzoo.test.parallel_api_test`` only *warns* on some contract violations (an
agent given an observation after it finished, a live agent missing from the rewards,
no agents left while some never finished); a warning is easy to miss in a green run.
Our env tests call these wrappers instead, so any such violation fails the test. Only
warnings issued by PettingZoo's own modules are raised: other libraries' warnings in
the same test (torch, Chroma) keep their usual treatment.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from pettingzoo.test import parallel_api_test, parallel_seed_test

PETTINGZOO_MODULES = r"pettingzoo(\..*)?$"  # the module a PettingZoo check warns from


def strict_parallel_api_test(env: Any, num_cycles: int = 1000) -> None:
    """``parallel_api_test`` with every PettingZoo warning an error."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", module=PETTINGZOO_MODULES)
        parallel_api_test(env, num_cycles=num_cycles)


def strict_parallel_seed_test(env_fn: Callable[[], Any], num_cycles: int = 500) -> None:
    """``parallel_seed_test`` with every PettingZoo warning an error."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", module=PETTINGZOO_MODULES)
        parallel_seed_test(env_fn, num_cycles=num_cycles)
