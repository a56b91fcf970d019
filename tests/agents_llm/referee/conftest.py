from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)
