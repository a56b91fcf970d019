"""What `write_report` does to a written report before it is exported: the last pass against
the documents (`agents_llm.report_cleanup`), and a plain line for each task part the report
does not cover (`report_app.task_plan`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional, Sequence

from agents_llm.report_checks import SourceText
from agents_llm.report_cleanup import Cleanup, clean_report
from agents_llm.report_state import ReportState

from .task_plan import PartPlan, mark_covered


def store_sources(store: Any) -> Optional[SourceText]:
    """The documents a store was built from, read again from their files (in reading order, with
    their heading lines); None when no file can be read (a store of files since moved)."""
    from rag.loaders import DocumentError, load_document
    from rag.store_records import decode_locations

    paths: list[str] = []
    for _, _, metadata in store.iter_chunks():
        for path in decode_locations(metadata):
            if path not in paths:
                paths.append(path)
    raw: List[str] = []
    loaded: List[str] = []
    for path in sorted(paths):
        try:
            text = load_document(path).text
        except (DocumentError, OSError):
            continue
        loaded.append(text)
        raw.append(text if Path(path).suffix.lower() in (".pdf", ".docx") else Path(path).read_text(errors="replace"))
    return SourceText.of(raw, loaded) if loaded else None


def finish_report(report: ReportState, sources: Optional[SourceText], parts: Sequence[PartPlan]) -> Optional[Cleanup]:
    """Clean ``report`` against ``sources`` (when there are any), then say which parts of the task
    it does not cover, first among its gaps."""
    cleanup = clean_report(report, sources) if sources is not None else None
    mark_covered(parts, [(s.title, s.content) for s in report.sections])
    lines = [p.line() for p in parts if not p.covered]
    report.deficient_topics[:0] = [line for line in lines if line not in report.deficient_topics]
    return cleanup


def judged(resources: Any, report: ReportState) -> Optional[float]:
    """The judge's score of the report as it is exported (after the last pass); None when the
    judge cannot run here (called from inside a running event loop)."""
    import asyncio

    try:
        asyncio.get_running_loop()
        return None
    except RuntimeError:
        pass
    return float(asyncio.run(resources.judge().score(report)).score)
