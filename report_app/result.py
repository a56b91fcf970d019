"""What a report run gives back: the result, or the error that says the LLM failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from agents_llm.coverage import Coverage
from agents_llm.report_state import ReportState

from .task_plan import PartPlan


class ReportLLMError(RuntimeError):
    """The LLM failed during the run: the report is not the team's work but the absence of
    it. The message names the cause; the report so far and the trace were written."""

    def __init__(self, message: str, files: Mapping[str, Optional[str]] | None = None):
        super().__init__(message)
        self.files = dict(files or {})


@dataclass
class ReportResult:
    report: ReportState
    markdown: str
    tokens: dict[str, Any]
    rounds: int
    output_dir: Path
    files: dict[str, Optional[str]]
    messages: list[str] = field(default_factory=list)
    seconds: float = 0.0
    coverage: Optional[Coverage] = None  # what the topic search before the run found
    parts: list[PartPlan] = field(default_factory=list)  # the task's parts, each covered or not
    score: Optional[float] = None  # the judge's score of the report the team wrote
    cleanup: dict[str, int] = field(default_factory=dict)  # what the last pass mended or dropped

    @property
    def not_covered(self) -> bool:
        """True when the documents do not cover the topic: no section was written from them."""
        return self.coverage is not None and not self.coverage.covered

    @property
    def short(self) -> bool:
        """True when no section could be written (the report says what is missing)."""
        return self.report.is_empty
