"""Module size is a note for a reviewer, not a wall: a module is split by job, never to fit a count.

The test lists the packages' modules past ``REVIEW_MARK`` lines as a warning (pytest prints it
in its warnings summary), largest first, so a reviewer can ask whether each one still holds one
job. It never fails on size: splitting a module mid-job to get under a line count makes the
tree harder to read, not easier.
"""

import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agents_llm", "algos", "envs", "rag", "report_app", "report_protocol")
REVIEW_MARK = 400


class ModuleSizeNote(UserWarning):
    """Modules past the review mark: read them for more than one job."""


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def oversized(root: Path = ROOT, limit: int = REVIEW_MARK) -> dict[str, int]:
    """{path relative to ``root``: lines} of the packages' modules over ``limit`` lines, largest first."""
    counts = {
        p.relative_to(root).as_posix(): line_count(p) for package in PACKAGES for p in (root / package).rglob("*.py")
    }
    return dict(sorted(((name, n) for name, n in counts.items() if n > limit), key=lambda item: (-item[1], item[0])))


def size_report(root: Path = ROOT, limit: int = REVIEW_MARK) -> dict[str, int]:
    """Warn (``ModuleSizeNote``) with the modules past ``limit`` lines, one per line; return them."""
    over = oversized(root, limit)
    if over:
        listing = "\n".join(f"  {n:5d}  {name}" for name, n in over.items())
        warnings.warn(
            ModuleSizeNote(f"{len(over)} module(s) past {limit} lines; does each hold one job?\n{listing}"),
            stacklevel=2,
        )
    return over


def test_module_sizes_are_reported_for_review():
    size_report()  # a warning in pytest's summary, never a failure


def test_the_check_sees_a_module_over_the_mark_in_any_package_and_subpackage(tmp_path):
    for package in PACKAGES:
        (tmp_path / package / "sub").mkdir(parents=True)
        (tmp_path / package / "sub" / "ok.py").write_text("x = 1\n" * REVIEW_MARK)
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "script.py").write_text("x = 1\n" * (REVIEW_MARK + 1))  # not a package
    assert oversized(tmp_path) == {}
    (tmp_path / "report_protocol" / "sub" / "big.py").write_text("x = 1\n" * (REVIEW_MARK + 1))
    (tmp_path / "rag" / "bigger.py").write_text("x = 1\n" * (REVIEW_MARK + 5))
    assert oversized(tmp_path) == {"rag/bigger.py": REVIEW_MARK + 5, "report_protocol/sub/big.py": REVIEW_MARK + 1}


def test_the_report_warns_with_each_module_and_does_not_fail(tmp_path):
    (tmp_path / "algos").mkdir()
    (tmp_path / "algos" / "big.py").write_text("x = 1\n" * (REVIEW_MARK + 3))
    with pytest.warns(
        ModuleSizeNote, match=rf"1 module\(s\) past {REVIEW_MARK} lines[\s\S]*{REVIEW_MARK + 3}  algos/big.py"
    ):
        assert size_report(tmp_path) == {"algos/big.py": REVIEW_MARK + 3}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing past the mark: no warning at all
        (tmp_path / "algos" / "big.py").write_text("x = 1\n")
        assert size_report(tmp_path) == {}
