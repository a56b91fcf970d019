"""Every module of the packages is at most 400 lines (issue 29: one job per module).

A module that grows past the limit is split by job (e.g. rag.guard: the patterns in
rag.injection_patterns, the normalised view in rag.text_view), keeping its public names
importable where they were.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agents_llm", "algos", "envs", "rag", "report_app", "report_protocol")
MAX_LINES = 400


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def oversized(root: Path = ROOT, limit: int = MAX_LINES) -> dict[str, int]:
    """{path relative to ``root``: lines} of the packages' modules over ``limit`` lines."""
    counts = {
        p.relative_to(root).as_posix(): line_count(p) for package in PACKAGES for p in (root / package).rglob("*.py")
    }
    return {name: n for name, n in counts.items() if n > limit}


def test_every_package_module_is_at_most_400_lines():
    over = oversized()
    assert not over, f"modules over {MAX_LINES} lines (split each by job): {over}"


def test_the_check_sees_a_module_over_the_limit_in_any_package_and_subpackage(tmp_path):
    for package in PACKAGES:
        (tmp_path / package / "sub").mkdir(parents=True)
        (tmp_path / package / "sub" / "ok.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "script.py").write_text("x = 1\n" * (MAX_LINES + 1))  # not a package
    assert oversized(tmp_path) == {}
    (tmp_path / "report_protocol" / "sub" / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert oversized(tmp_path) == {"report_protocol/sub/big.py": MAX_LINES + 1}
