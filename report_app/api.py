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
``algos`` when called, so ``import report_app`` stays cheap.

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
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from agents_llm.coverage import Coverage, no_section_note, probe_coverage
from agents_llm.export import export_report
from agents_llm.report_state import ReportState
from agents_llm.roles import DEFAULT_TEAM

from .inputs import ReportInputError, check_docs, plain_config, slugify
from .outline import check_outline
from .task_plan import PartPlan, plan_sections

REPORT_ENV = "report_writing_v0"  # the env a write_report checkpoint must have been trained on


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


def _policy_config(policy: str, algo: Optional[Mapping[str, Any]], team: Sequence[str]):
    """Validate the policy's config against the team (its role entries) before anything expensive runs."""
    import algos
    from agents_llm.roles import build_team

    members = build_team(list(team))
    parts = {m.name: str(m.role.pipeline_part) for m in members}  # as the env lists them (EnvSpec.from_env)
    spec = algos.EnvSpec(
        agents=list(parts), obs_dim=1, n_actions=len(team) + 5, state_dim=0, extras={"pipeline_parts": parts}
    )
    cfg = dict(algo or {})
    cfg.pop("name", None)
    return algos.build(policy, spec, cfg)  # raises PhaseConfigError naming phase, pattern and agent


def _team_names(team: Sequence[str]) -> list[str]:
    from agents_llm.roles import build_team

    return [m.name for m in build_team(list(team))]


def _max_rounds(policy_obj: Any, default: int) -> int:
    phases = getattr(policy_obj, "phases", None)
    return sum(p.rounds for p in phases) + 1 if phases else default


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
) -> ReportResult:
    """Synchronous `write_report` (what the async API runs in a worker thread).

    ``progress``: auto | bar | plain | quiet, the per-round display (round, tokens, score,
    ETA) on stderr; quiet by default from Python, `write_report.py` shows it."""
    import algos
    from algos.training.progress import RunProgress
    from algos.training.rollout import run_episode
    from envs.report.resources import ReportResources
    from envs.report.writing import ReportWritingEnv
    from envs.report.tasks import DEFAULT_CORPUS, default_store_path

    started = time.perf_counter()
    given_rounds = max_rounds
    if not isinstance(task, str) or not task.strip():
        raise ReportInputError(f"task must be a non-empty topic, got {task!r}")
    task = " ".join(task.split())
    try:
        outline = check_outline(outline)
    except ValueError as e:
        raise ReportInputError(str(e)) from None
    rag_cfg = plain_config(rag) or {}
    llm_cfg, judge_cfg, engine_cfg = plain_config(llm), plain_config(judge), plain_config(engine)
    # The product's way of writing (agents_llm.engine.Route): no small model's junk prose in a user's
    # report, the writer writing from its section's evidence, a section using what any agent retrieved.
    engine_cfg = {"route": "product", **(engine_cfg or {})}
    messages: list[str] = []

    # 1. the policy: a trained checkpoint, or the handcrafted pipeline (validated now)
    if checkpoint is not None:
        from algos.training import checkpoint as ckpt

        path = ckpt.resolve_checkpoint(checkpoint)
        try:
            state = ckpt.load(path)
        except ckpt.CheckpointError as e:  # empty, truncated, corrupted or foreign: one line naming the file
            raise ReportInputError(str(e)) from None
        from algos.plugins import PluginError, check_checkpoint_plugins, load_plugins

        try:  # the plugins the caller names are imported; the checkpoint's are only compared with them
            load_plugins(plugins)
            check_checkpoint_plugins(state, plugins, source=f"checkpoint {path}")
        except PluginError as e:
            raise ReportInputError(str(e)) from None
        trained = state["config"]
        trained_env = (trained.get("env") or {}).get("name")
        if trained_env != REPORT_ENV:  # its networks are sized for another env's spaces
            raise ReportInputError(
                f"checkpoint {path} was trained on env {trained_env!r}; write_report plays {REPORT_ENV}: "
                "give a checkpoint of a report_writing run"
            )
        team = (trained.get("env") or {}).get("team") or team
        _team_names(team)  # the trained team's roles are checked now, before anything expensive
        policy_name, policy_cfg = trained["algo"]["name"], trained["algo"]
        max_rounds = max_rounds or int((trained.get("env") or {}).get("max_rounds") or 12)
        messages.append(f"policy: {policy_name} checkpoint {path}")
    else:
        policy_name, policy_cfg, state = "handcrafted", dict(algo or {}), None
        # A report of its own (no round budget given) runs the pipeline's own plan; a budget fits the phases to it.
        policy_cfg.setdefault("schedule", "classic" if max_rounds is None else "budget")
        probe = _policy_config("handcrafted", policy_cfg, team)
        max_rounds = max_rounds or _max_rounds(probe, 24)
        messages.append("policy: handcrafted pipeline")

    # 2. the documents: checked, then ingested (unchanged files are skipped)
    store_path, store = None, None
    if docs is None:
        corpus = DEFAULT_CORPUS
        messages.append(
            f"docs: none given, using the default corpus ({DEFAULT_CORPUS}: the Python standard "
            "library's documentation)"
        )
    else:
        from omegaconf import OmegaConf

        from rag import RagConfig

        extensions = list(OmegaConf.merge(OmegaConf.structured(RagConfig), rag_cfg).ingest.extensions)
        corpus = str(check_docs(docs, extensions))
    if data_root is not None:
        store_path = Path(data_root).expanduser() / "stores" / default_store_path(corpus, rag_cfg).name
    # The env runs on these: the store checked here is the one it retrieves from.
    resources = ReportResources(
        llm=llm_cfg,
        judge=judge_cfg,
        rag=rag_cfg,
        store_path=str(store_path) if store_path else None,
        backend=backend,
        retriever=retriever,
    )
    if retriever is None:
        store = resources.stores.store(corpus)
        if len(store) == 0:
            raise ReportInputError(
                f"no text could be read from the documents in {corpus}: every file was skipped "
                "(see the ingest warnings above); nothing to write a report from"
            )
        messages.append(f"store: {len(store)} chunk(s) from {len(store.sources)} document(s)")

    # 3. do the documents cover the topic? If not, no section is written from unrelated text.
    from agents_llm.coverage import PROBE_TOP_K

    def search_topic(queries: list[str]) -> Sequence[Any]:
        if retriever is not None or store is None:
            return retriever.retrieve(queries)
        from rag import query

        return query(store, queries, top_k=PROBE_TOP_K)

    coverage = probe_coverage(task, search_topic)
    out_dir = Path(output_root).expanduser() / f"{datetime.now():%Y-%m-%d_%H-%M-%S}_{slugify(task)}"
    if not coverage.covered:
        uncovered = f"The documents in {corpus} do not cover this topic; no section was written. {coverage.explain()}"
        messages.append(uncovered)
        empty = ReportState(topic=task)
        exported = export_report(
            empty, out_dir, pdf=pdf, subtitle="No report: the documents do not cover the topic", missing_note=uncovered
        )
        messages.extend(exported.messages)
        files_nc: dict[str, Optional[str]] = {
            "markdown": str(exported.markdown),
            "latex": str(exported.latex),
            "pdf": str(exported.pdf) if exported.pdf else None,
        }
        return ReportResult(
            report=empty,
            markdown=exported.markdown.read_text(encoding="utf-8"),
            tokens={"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "calls": 0},
            rounds=0,
            output_dir=out_dir,
            files=files_nc,
            messages=messages,
            seconds=time.perf_counter() - started,
            coverage=coverage,
        )

    # 4. the plan's outline: a section per part of the task, under the documents' heading closest
    # to it; for a task that asks one thing, the documents' headings closest to it
    parts: list[PartPlan] = []
    if state is None and not policy_cfg.get("outline"):
        parts, said, plan_rounds = plan_sections(
            task, outline, store, search_topic, policy_cfg, engine_cfg, _team_names(team), given_rounds
        )
        messages.extend(said)
        max_rounds = plan_rounds or max_rounds

    # 5. the run
    env = ReportWritingEnv(
        team=list(team),
        max_rounds=max_rounds,
        min_rounds_before_terminate=1,
        tasks=[{"id": "write_report", "topic": task, "split": "train", "corpus": corpus}],
        store_path=str(store_path) if store_path else None,
        llm=llm_cfg,
        judge=judge_cfg,
        rag=rag_cfg,
        engine=engine_cfg,
        resources=resources,
        output_dir=str(out_dir),
    )
    spec = algos.EnvSpec.from_env(env)
    policy_obj = algos.build(policy_name, spec, policy_cfg, seed=seed)
    if state is not None:
        policy_obj.load_state_dict(state["algo"])
    error: Optional[BaseException] = None
    stats = None
    # The console speaks of writing ("writing round 3/25"), not of training.
    bar = RunProgress(
        progress, total_episodes=1, desc="write_report", rounds_per_episode=max_rounds, main_kind="writing"
    )
    bar.begin_episode("writing")
    try:
        _, stats = run_episode(
            env, policy_obj, spec, explore=False, seed=seed, max_rounds=max_rounds, on_round=bar.on_round
        )
        bar.end_episode({"score": stats.infos.get("report_score", 0.0)})
    except BaseException as e:  # keep what was written, then re-raise below
        error = e
    finally:
        bar.close()
    report = env.report if env.report is not None else ReportState(topic=task)
    end = env.trace.end if env.trace is not None else {}
    llm_failure = end.get("detail") if end.get("reason") == "llm_error" else None
    rounds_llm = [r.get("llm") or {} for r in (env.trace.rounds if env.trace is not None else [])]
    llm_calls, llm_errors = sum(r.get("calls", 0) for r in rounds_llm), sum(r.get("errors", 0) for r in rounds_llm)
    if llm_errors:
        messages.append(f"{llm_errors} of {llm_calls} LLM call(s) failed (see calls[].error in the trace)")

    # 6. the last pass against the documents, and a line for each part of the task not covered
    from .finish import finish_report, judged, store_sources

    cleanup = finish_report(report, store_sources(store) if store is not None else None, parts)
    score = judged(resources, report) if error is None and not llm_failure else None

    # 7. the outputs: written whatever happened
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
        note = no_section_note(corpus, rounds_done, report.deficient_topics)
        messages.append(note)
    if error is not None:
        note = (note + " " if note else "") + f"The run stopped early: {type(error).__name__}: {error}"
    exported = export_report(report, out_dir, pdf=pdf, subtitle=subtitle, missing_note=note)
    messages.extend(exported.messages)
    files.update(
        {
            "markdown": str(exported.markdown),
            "latex": str(exported.latex),
            "pdf": str(exported.pdf) if exported.pdf else None,
        }
    )
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


async def write_report(task: str, docs: str | Path | None = None, **kwargs: Any) -> ReportResult:
    """Write a report on `task` from the documents in `docs` (see `run_report` for the options).

    Options: ``data_root`` (where the RAG store lives; default the user cache),
    ``output_root`` (default ``outputs``), ``checkpoint`` (a trained QMIX run instead
    of the handcrafted pipeline), ``plugins`` (the modules or .py files of the plugins the
    checkpoint was trained with: imported, and never taken from the checkpoint), ``algo`` (handcrafted config: rounds, patterns,
    skip_strategy), ``team``, ``llm``, ``rag``, ``judge``, ``engine`` (config dicts),
    ``pdf`` (False skips the PDF), ``backend``/``retriever`` (shared objects to reuse),
    ``outline`` ("documents": the documents' headings closest to the task, the default;
    "model": the LeadArchitect's; or a list of section titles).
    Runs in a worker thread, so the caller's event loop stays free.
    """
    return await asyncio.to_thread(run_report, task, docs, **kwargs)
