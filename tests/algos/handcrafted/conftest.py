"""The handcrafted pipeline tests' stores go to a temporary cache (their doubles: tests/handcrafted_team.py)."""

from tests.report_doubles import isolated_cache  # noqa: F401 (fixture)
