"""retain_freed_memory: a process that frees and re-allocates the same large buffers stops
page-faulting them in (run in a fresh interpreter each: the setting is process-wide).

glibc's own thresholds adapt at run time (freeing a block it had mapped raises them), so
whether its defaults fault again depends on the allocation history: measured, the same
probe faulted 233,740 times in one run and 0 in another. The baseline therefore pins the
thresholds low (every large block mapped and returned on free), which is what the
defaults do until they adapt, and what bench_learner measured in a learner update
(1,392 faults per update)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

PROBE = """
import sys, torch
from algos.training.memory import minor_faults, retain_freed_memory
if sys.argv[1] == "retain":
    assert retain_freed_memory(), "mallopt was refused"
else:  # large blocks mapped and unmapped, thresholds fixed (no run-time adaptation)
    assert retain_freed_memory(mmap_threshold=128 * 1024, trim_threshold=128 * 1024), "mallopt was refused"
def update():  # a learner update's pattern: several large buffers alive at once, then all freed
    buffers = [torch.empty(2_000_000).fill_(1.0) for _ in range(6)]  # 6 x 8 MB
    del buffers
for _ in range(3):  # warm up: the first allocations fault in any case
    update()
before = minor_faults()
for _ in range(20):
    update()
print(minor_faults() - before)
"""


def faults(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc thresholds")
def test_kept_memory_is_not_faulted_in_again():
    returned, retained = faults("return"), faults("retain")
    # memory given back to the kernel on free faults in again on every use: 20 x 6 blocks of ~2,000 pages
    assert returned > 20 * 6 * 1000, f"expected returned blocks to fault in again, got {returned} faults"
    assert retained < returned / 20, f"retain_freed_memory left {retained} faults (blocks returned: {returned})"
