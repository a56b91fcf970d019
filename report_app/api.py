"""Write one report from a folder of documents: the Python API for host projects.

    from report_app import write_report
    result = await write_report("Sorting networks", docs="papers/", output_root="outputs")
    result.report          # ReportState: sections, sources, gaps
    result.tokens          # {"prompt_tokens", "completion_tokens", "total_tokens", "calls", "by_caller"}
    result.files           # {"markdown", "latex", "pdf" (None when skipped), "trace"}

It ingests the documents (idempotent: unchanged files are skipped), runs the handcrafted
pipeline (or a trained QMIX checkpoint) on the report env, and exports Markdown, LaTeX
and PDF with references under ``<output_root>/<timestamp>_<slug>/``.

An application, not LLM code: it drives the whole stack (rag, agents_llm, envs, algos),
so it sits above ``algos`` (``report_app``, below only ``experiments``) and the layering
rag <- agents_llm <- envs <- algos holds with no exception. It imports ``envs`` and
``algos`` when called, so ``import report_app`` stays cheap. `run_report` runs its steps in
order, each in its own module: the policy (`policy`), the documents (`documents`), the coverage
probe, the outline plan (`task_plan`), the episode (`episode`), the last pass and the files
(`finish`, `outputs`).

Bad input fails before any model call, with the path or key that was wrong: an empty
task, a docs path that does not exist, a folder with no readable document, a phase
config naming an unknown agent. A run that breaks midway still writes the report so far
and its trace before the error propagates; a run whose LLM failed (server down, every
call timing out: the episode ended with reason `llm_error`) raises `ReportLLMError`
naming the cause, after writing what it had.

Documents that do not cover the topic give no report: before the team runs, the topic is
searched for (`agents_llm.coverage`), and when no passage that comes back names the
topic's words, the run writes no section, only a note that says what was searched and
what came back (`result.coverage`, `result.not_covered`; `write_report.py` exits 4).
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from agents_llm.coverage import probe_coverage
from agents_llm.roles import DEFAULT_TEAM

from .documents import open_documents
from .episode import play_episode
from .inputs import ReportInputError, plain_config, slugify
from .outline import check_outline
from .outputs import finish_and_export, uncovered_result
from .policy import REPORT_ENV, choose_policy, team_names
from .result import ReportLLMError, ReportResult
from .task_plan import PartPlan, plan_sections

__all__ = ["REPORT_ENV", "ReportInputError", "ReportLLMError", "ReportResult", "run_report", "write_report"]


def _product_engine(engine_cfg: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """The engine settings of a user's report, under the caller's own: the product route
    (agents_llm.engine.Route): no small model's junk prose in a user's report, the writer writing
    from its section's evidence, a section using what any agent retrieved."""
    return {"route": "product", **(engine_cfg or {})}


def run_report(
    task: str,
    docs: str | Path | None = None,
    *,
    data_root: str | Path | None = None,
    output_root: str | Path = "outputs",
    checkpoint: str | Path | None = None,
    plugins: Sequence[str] = (),
    algo: Optional[Mapping[str, Any]] = None,
    team: Sequence[str] = DEFAULT_TEAM,
    llm: Any = None,
    rag: Any = None,
    judge: Any = None,
    engine: Any = None,
    pdf: bool = True,
    backend: Any = None,
    retriever: Any = None,
    max_rounds: Optional[int] = None,
    seed: int = 0,
    progress: str = "quiet",
    outline: Any = "documents",
    opening: Any = "auto",
) -> ReportResult:
    """Synchronous `write_report` (what the async API runs in a worker thread).

    ``progress``: auto | bar | plain | quiet, the per-round display (round, tokens, score,
    ETA) on stderr; quiet by default from Python, `write_report.py` shows it. ``opening``: auto |
    True | False, the opening paragraph (`agents_llm.opening`: one model call after the run; auto
    asks every model but those measured to write none a report keeps)."""
    started = time.perf_counter()
    if not isinstance(task, str) or not task.strip():
        raise ReportInputError(f"task must be a non-empty topic, got {task!r}")
    task = " ".join(task.split())
    from agents_llm.opening import wants_opening

    try:
        wants_opening(opening, "")
    except ValueError as e:
        raise ReportInputError(str(e)) from None
    try:
        outline = check_outline(outline)
    except ValueError as e:
        raise ReportInputError(str(e)) from None
    rag_cfg = plain_config(rag) or {}
    llm_cfg, judge_cfg = plain_config(llm), plain_config(judge)
    engine_cfg = _product_engine(plain_config(engine))

    # 1. the policy: a trained checkpoint, or the handcrafted pipeline (validated now)
    policy = choose_policy(checkpoint, plugins, algo, team, max_rounds)
    messages = [policy.message]
    # 2. the documents: checked, then ingested (unchanged files are skipped)
    documents = open_documents(
        docs, data_root, llm=llm_cfg, judge=judge_cfg, rag=rag_cfg, backend=backend, retriever=retriever
    )
    messages.extend(documents.messages)
    # 3. do the documents cover the topic? If not, no section is written from unrelated text.
    coverage = probe_coverage(task, documents.search_topic)
    out_dir = Path(output_root).expanduser() / f"{datetime.now():%Y-%m-%d_%H-%M-%S}_{slugify(task)}"
    if not coverage.covered:
        return uncovered_result(task, documents.corpus, coverage, out_dir, pdf, messages, started)
    # 4. the plan's outline: a section per part of the task, under the documents' heading closest
    # to it; for a task that asks one thing, the documents' headings closest to it
    parts: list[PartPlan] = []
    rounds = policy.max_rounds
    if policy.state is None and not policy.config.get("outline"):
        parts, said, plan_rounds = plan_sections(
            task,
            outline,
            documents.store,
            documents.search_topic,
            policy.config,
            engine_cfg,
            team_names(policy.team),
            max_rounds,
        )
        messages.extend(said)
        rounds = plan_rounds or rounds
    # 5. the run
    episode = play_episode(
        task,
        policy,
        documents,
        max_rounds=rounds,
        llm=llm_cfg,
        judge=judge_cfg,
        rag=rag_cfg,
        engine=engine_cfg,
        out_dir=out_dir,
        seed=seed,
        progress=progress,
    )
    messages.extend(episode.messages)
    # 6-7. the last pass against the documents, then the outputs: written whatever happened
    return finish_and_export(
        episode, policy.name, documents, parts, coverage, out_dir, pdf, messages, started, opening=opening
    )


async def write_report(task: str, docs: str | Path | None = None, **kwargs: Any) -> ReportResult:
    """Write a report on `task` from the documents in `docs` (see `run_report` for the options).

    Options: ``data_root`` (where the RAG store lives; default the user cache),
    ``output_root`` (default ``outputs``), ``checkpoint`` (a trained QMIX run instead
    of the handcrafted pipeline), ``plugins`` (the modules or .py files of the plugins the
    checkpoint was trained with: imported, and never taken from the checkpoint), ``algo`` (handcrafted config: rounds, patterns,
    skip_strategy), ``team``, ``llm``, ``rag``, ``judge``, ``engine`` (config dicts),
    ``pdf`` (False skips the PDF), ``backend``/``retriever`` (shared objects to reuse),
    ``outline`` ("documents": the documents' headings closest to the task, the default;
    "model": the LeadArchitect's; or a list of section titles), ``opening`` (auto, True or
    False: the opening paragraph).
    Runs in a worker thread, so the caller's event loop stays free.
    """
    return await asyncio.to_thread(run_report, task, docs, **kwargs)
