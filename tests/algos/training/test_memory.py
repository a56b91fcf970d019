"""retain_freed_memory: a process that frees and re-allocates the same large buffers stops
page-faulting them in (run in a fresh interpreter each: the setting is process-wide)."""

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
    default, retained = faults("default"), faults("retain")
    # glibc's defaults give the freed heap back to the kernel: its pages fault in again each time
    assert default > 20 * 1000, f"expected glibc's defaults to fault each block in again, got {default} faults"
    assert retained < default / 20, f"retain_freed_memory left {retained} faults (glibc defaults: {default})"
