"""The files a report run leaves, whatever happened: the note when the documents do not cover the
topic; else the report after its last pass, its trace, Markdown, LaTeX and PDF, and then the
error that stopped the run, if any, raised once they are written."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

from agents_llm.coverage import Coverage, no_section_note
from agents_llm.export import export_report
from agents_llm.report_state import ReportState

from .documents import Documents
from .episode import Episode
from .result import ReportLLMError, ReportResult
from .task_plan import PartPlan


def _files(exported: Any) -> dict[str, Optional[str]]:
    return {
        "markdown": str(exported.markdown),
        "latex": str(exported.latex),
        "pdf": str(exported.pdf) if exported.pdf else None,
    }


def uncovered_result(
    task: str, corpus: str, coverage: Coverage, out_dir: Path, pdf: bool, messages: list[str], started: float
) -> ReportResult:
    """No section written from unrelated text: an empty report whose note says what was searched
    and what came back."""
    uncovered = f"The documents in {corpus} do not cover this topic; no section was written. {coverage.explain()}"
    messages.append(uncovered)
    empty = ReportState(topic=task)
    exported = export_report(
        empty, out_dir, pdf=pdf, subtitle="No report: the documents do not cover the topic", missing_note=uncovered
    )
    messages.extend(exported.messages)
    return ReportResult(
        report=empty,
        markdown=exported.markdown.read_text(encoding="utf-8"),
        tokens={"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "calls": 0},
        rounds=0,
        output_dir=out_dir,
        files=_files(exported),
        messages=messages,
        seconds=time.perf_counter() - started,
        coverage=coverage,
    )


def finish_and_export(
    episode: Episode,
    policy_name: str,
    documents: Documents,
    parts: list[PartPlan],
    coverage: Coverage,
    out_dir: Path,
    pdf: bool,
    messages: list[str],
    started: float,
    opening: Any = "auto",
) -> ReportResult:
    """The last pass against the documents and a line per part of the task not covered, the
    opening paragraph (``opening``), the judge's score, then every file; re-raises the episode's error (or ReportLLMError) after."""
    from .finish import add_opening, finish_report, judged, store_sources

    env, report, error, llm_failure, stats = (
        episode.env,
        episode.report,
        episode.error,
        episode.llm_failure,
        episode.stats,
    )
    store = documents.store
    sources = store_sources(store) if store is not None else None
    cleanup = finish_report(report, sources, parts)
    if opening is not False and error is None and not llm_failure:
        ledger = getattr(env, "ledger", None)
        said = add_opening(report, sources, parts, documents.resources.backend, ledger, opening)
        if said:
            messages.append(said)
    score = judged(documents.resources, report) if error is None and not llm_failure else None

    out_dir.mkdir(parents=True, exist_ok=True)
    files: dict[str, Optional[str]] = {}
    if env.trace is not None:
        files["trace"] = str(env.trace.save(out_dir / "trace.json"))
    tokens_usage = env.ledger.total if getattr(env, "ledger", None) is not None else None
    subtitle = f"Written by the {policy_name} policy, {datetime.now():%Y-%m-%d}"
    note = None
    if llm_failure:
        note = f"The run stopped because the language model failed: {llm_failure}"
    elif report.is_empty:
        # Said as the trace shows it: what was searched and what came back, not "no evidence".
        rounds_done = env.trace.rounds if env.trace is not None else []
        note = no_section_note(documents.corpus, rounds_done, report.deficient_topics)
        messages.append(note)
    if error is not None:
        note = (note + " " if note else "") + f"The run stopped early: {type(error).__name__}: {error}"
    exported = export_report(report, out_dir, pdf=pdf, subtitle=subtitle, missing_note=note)
    messages.extend(exported.messages)
    files.update(_files(exported))
    if error is not None:
        raise error
    if llm_failure:
        raise ReportLLMError(
            f"the LLM failed after {stats.length if stats else 0} round(s): {llm_failure}; "
            f"the report so far and the trace are in {out_dir}",
            files,
        )
    tokens: dict[str, Any] = tokens_usage.as_dict() if tokens_usage is not None else {}
    if tokens_usage is not None:
        tokens["by_caller"] = {k: v.as_dict() for k, v in env.ledger.by_caller.items()}
    return ReportResult(
        report=report,
        markdown=exported.markdown.read_text(encoding="utf-8"),
        tokens=tokens,
        rounds=stats.length if stats else 0,
        output_dir=out_dir,
        files=files,
        messages=messages,
        seconds=time.perf_counter() - started,
        coverage=coverage,
        parts=parts,
        score=score,
        cleanup=cleanup.counts() if cleanup is not None else {},
    )
