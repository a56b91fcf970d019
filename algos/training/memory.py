"""Keep freed memory in the process, so a learner update does not page-fault its buffers in.

PyTorch's CPU tensors come straight from malloc. A learner update allocates and frees the
same few-megabyte buffers every time (a batch's GRU gates, the input projections, their
gradients), and glibc hands blocks that large to the kernel and back: each update then
touches fresh pages, one minor fault per 4 KiB. Measured with experiments/bench_learner.py
(32 episodes x 20 rounds x 4 agents, one thread; docs/benchmark/learner): 1,392 faults and
27.5 ms per update with glibc's defaults, 47 faults and 23.8 ms with the thresholds below
(glibc's own thresholds adapt at run time, so how often its defaults fault depends on the
allocation history). It is what the
environment variables ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` do, set from
inside the process so that every entry point gets it.

The cost is memory the process keeps instead of returning to the system: up to
``trim_threshold`` bytes of freed heap. Elsewhere than glibc (macOS, musl) this is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import resource

# mallopt parameter numbers (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD = 32 * 1024 * 1024  # blocks below this come from the heap (glibc's largest allowed value)
TRIM_THRESHOLD = 256 * 1024 * 1024  # free heap kept before any is returned to the system


def retain_freed_memory(mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Set glibc's malloc thresholds for this process; True when they were set, False
    where the C library is not glibc."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and bool(mallopt(_M_TRIM_THRESHOLD, trim_threshold))


def minor_faults() -> int:
    """Minor page faults of this process so far (a benchmark reads the difference)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
