"""The report-writing application: one report from a folder of documents, written by the
team on the report env with a fixed policy or a trained checkpoint (``report_app.api``).

It drives every layer (rag, agents_llm, envs, algos), so it sits above them all and
below only ``experiments`` (``experiments/write_report.py`` is its command line).

    from report_app import write_report      # async; run_report is the synchronous form
"""

from .api import ReportInputError, ReportLLMError, ReportResult, run_report, write_report

__all__ = ["ReportInputError", "ReportLLMError", "ReportResult", "run_report", "write_report"]
