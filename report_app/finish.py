"""What `write_report` does to a written report before it is exported: the last pass against
the documents (`agents_llm.report_cleanup`), a plain line for each task part the report
does not cover (`report_app.task_plan`), and the opening paragraph (`agents_llm.opening`).
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


def add_opening(
    report: ReportState,
    sources: Optional[SourceText],
    parts: Sequence[PartPlan],
    backend: Any,
    ledger: Any,
    choice: Any = "auto",
) -> Optional[str]:
    """Write the report's opening paragraph from its sentences that answer the task's covered
    parts (every part's, when the task asks one thing or none is covered), and keep the sentences
    that pass the body's checks. Returns the console line, None when no opening was tried (no
    documents to check it against, no model, an empty report). ``choice``: auto, True or False
    (`agents_llm.opening.wants_opening`)."""
    from agents_llm.backends.errors import LLMError
    from agents_llm.opening import answer_sentences, wants_opening, write_opening
    from agents_llm.sync import run_sync
    from agents_llm.text.split import sentences

    if sources is None or backend is None or report.is_empty:
        return None
    if not wants_opening(choice, getattr(backend, "model", "")):
        return f"opening: not asked of {backend.model} (opening=auto: it wrote none a report keeps when measured)"
    asks = [p.asks for p in parts if p.covered]
    bodies = [(s.title, s.content) for s in report.sections]
    evidence = answer_sentences(asks, bodies, report.topic)
    body = [x for _, text in bodies for x in sentences(text)]
    try:
        opening = run_sync(write_opening(backend, report.topic, evidence, sources, body, ledger=ledger))
    except LLMError as e:  # the budget spent or the model failing: the report stands without one
        return f"opening: not written ({type(e).__name__}: {e})"
    report.opening = opening.text
    return opening.summary()


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
