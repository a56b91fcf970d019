"""The round engine tests' stores go to a temporary cache."""

from tests.report_doubles import isolated_cache  # noqa: F401 (fixture)
