#!/usr/bin/env python
"""Write one report from your documents with the handcrafted pipeline (or a QMIX checkpoint).

    python experiments/write_report.py task="Sorting networks" docs=papers/
    python experiments/write_report.py task="..." docs=papers/ export.pdf=false algo.rounds.drafting=4
    python experiments/write_report.py task="..." docs=papers/ checkpoint=outputs/<run dir>
    python experiments/write_report.py task="A file's size, in bytes: why it matters" docs=papers/
    python experiments/write_report.py --task-file topic.txt docs=papers/

Exit codes: 0 a report was written; 2 bad input (task, docs, config); 3 the language
model failed (the report so far was written); 4 the documents do not cover the topic
(no section written; the note says what was searched and what came back).

The task is any sentence: it is taken off the command line before Hydra parses the rest
(`task=...`, `--task ...`, `--task=...` or `--task-file PATH`), so quotes, commas,
apostrophes, colons and `${...}` reach the report as typed.

Ingests the documents if needed (unchanged files are skipped), runs the pipeline on the
embedded model by default, and writes report.md, report.tex, report.pdf (pdflatex; skipped
with a message when no TeX engine is installed) and trace.json under
<output_root>/<timestamp>_<slug>/. The same from Python: `from report_app import write_report`.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]

import hydra  # noqa: E402
from hydra.core.config_store import ConfigStore  # noqa: E402
from hydra.utils import to_absolute_path  # noqa: E402
from omegaconf import MISSING, DictConfig, OmegaConf  # noqa: E402

from agents_llm.engine import EngineSettings  # noqa: E402
from agents_llm.export import numbered_sources  # noqa: E402


@dataclass
class ExportConfig:
    pdf: bool = True  # false: Markdown and LaTeX only


@dataclass
class WriteReportConfig:
    task: str = MISSING
    docs: Optional[str] = None
    checkpoint: Optional[str] = None
    plugins: List[str] = field(default_factory=list)  # a checkpoint's plugins, named here: it imports none
    data_root: Optional[str] = None
    output_root: str = "outputs"
    team: List[str] = field(default_factory=lambda: ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"])
    seed: int = 0
    max_rounds: Optional[int] = None
    # Per-round progress on stderr (round, tokens, score, ETA): auto (a bar on a terminal,
    # plain lines otherwise) | bar | plain | quiet (CI logs).
    progress: str = "auto"
    # documents: the documents' headings closest to the task | model: the LeadArchitect's | [titles]
    outline: Any = "documents"
    # An opening paragraph answering the task in a few checked sentences (agents_llm.opening), one model
    # call: auto (every model but those measured to write none a report keeps) | true | false.
    opening: Any = "auto"
    algo: Any = field(default_factory=dict)  # validated by algos (HandcraftedConfig) before any model call
    engine: EngineSettings = field(default_factory=EngineSettings)  # per-call token budgets
    export: ExportConfig = field(default_factory=ExportConfig)
    llm: Any = None
    rag: Any = None
    judge: Any = None


def register_configs() -> None:
    from agents_llm.backends.config import register_configs as register_llm
    from agents_llm.judges import register_configs as register_judge
    from rag.config import register_configs as register_rag

    register_llm()
    register_judge()
    register_rag()
    ConfigStore.instance().store(name="write_report_schema", node=WriteReportConfig)


class TaskArgumentError(ValueError):
    """A task argument that names no task (empty, or --task with nothing after it)."""


_TASK_ARG = re.compile(r"^(?:\+{0,2}task|--task)=(.*)$", re.DOTALL)


def take_task(argv: Sequence[str]) -> Tuple[Optional[str], List[str]]:
    """(the task, the other arguments) of a command line, before Hydra parses it.

    Hydra's override grammar rejects ordinary sentences (an apostrophe is a lexer error,
    a comma makes a sweep, `${...}` an interpolation), so the task never goes through
    it: `task=TEXT`, `--task=TEXT`, `--task TEXT` and `--task-file PATH` (the file's text,
    stripped) are taken out here, the last one winning, and the rest is Hydra's."""
    task: Optional[str] = None
    rest: List[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        match = _TASK_ARG.match(arg)
        if match:
            task = match.group(1)
        elif arg in ("--task", "--task-file"):
            if i + 1 >= len(args):
                raise TaskArgumentError(f"{arg} needs a value after it")
            i += 1
            task = _read_task_file(args[i]) if arg == "--task-file" else args[i]
        elif arg.startswith("--task-file="):
            task = _read_task_file(arg[len("--task-file=") :])
        else:
            rest.append(arg)
        i += 1
    if task is not None and not task.strip():
        raise TaskArgumentError('the task is empty: give the report\'s topic, e.g. task="Sorting networks"')
    return (task.strip() if task is not None else None), rest


def _read_task_file(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError as e:
        raise TaskArgumentError(f"--task-file {path}: cannot read it ({e.strerror or e})") from None


_TASK: Optional[str] = None  # set by the command line (take_task) before Hydra runs


def _abs(path: Optional[str]) -> Optional[str]:
    return to_absolute_path(path) if path else None


def run(cfg: DictConfig, task: Optional[str] = None) -> int:
    from report_app.api import ReportInputError, ReportLLMError, run_report
    from agents_llm.backends import LLMConfigError
    from agents_llm.redaction import redact_text
    from algos.handcrafted_phases import PhaseConfigError
    from algos.training.progress import resolve_mode

    task = task if task is not None else _TASK
    if task is None and not OmegaConf.is_missing(cfg, "task"):
        task = str(cfg.task)  # a config that sets it (compose API, a config file)
    if not task:
        print('write_report: no task: give the report\'s topic, e.g. task="Sorting networks"', file=sys.stderr)
        return 2
    try:  # range checks before anything runs, each naming its key
        if cfg.seed < 0:
            raise ValueError(f"seed must be >= 0, got {cfg.seed}")
        if cfg.max_rounds is not None and cfg.max_rounds < 1:
            raise ValueError(f"max_rounds must be null or >= 1, got {cfg.max_rounds}")
        EngineSettings(**OmegaConf.to_container(cfg.engine, resolve=True))
        resolve_mode(cfg.progress, key="progress")
    except ValueError as e:
        print(f"write_report: {e}", file=sys.stderr)
        return 2
    try:
        result = run_report(
            task,
            _abs(cfg.docs),
            data_root=_abs(cfg.data_root),
            output_root=to_absolute_path(cfg.output_root),
            checkpoint=_abs(cfg.checkpoint),
            plugins=[to_absolute_path(p) if p.endswith(".py") else str(p) for p in cfg.plugins],
            algo=OmegaConf.to_container(cfg.algo, resolve=True),
            team=list(cfg.team),
            llm=cfg.llm,
            rag=cfg.rag,
            judge=cfg.judge,
            engine=OmegaConf.to_container(cfg.engine, resolve=True),
            pdf=cfg.export.pdf,
            max_rounds=cfg.max_rounds,
            seed=cfg.seed,
            progress=cfg.progress,
            outline=OmegaConf.to_container(cfg.outline) if OmegaConf.is_config(cfg.outline) else cfg.outline,
            opening=cfg.opening,
        )
    except ReportLLMError as e:  # the report so far and the trace were written; the message says where
        print(f"write_report: {redact_text(str(e))}", file=sys.stderr)
        return 3
    except (ReportInputError, PhaseConfigError, FileNotFoundError, LLMConfigError) as e:
        # LLMConfigError: a configuration the backend refused before any call (model, URL, key).
        print(f"write_report: {redact_text(str(e))}", file=sys.stderr)
        return 2
    rep = result.report
    if result.not_covered:  # no section from unrelated text: say so plainly, exit NOT_COVERED_EXIT_CODE
        from agents_llm.coverage import NOT_COVERED_EXIT_CODE

        print(f"\nNo report: the documents do not cover the topic {rep.topic!r}.")
        print(f"  {result.coverage.explain() if result.coverage else ''}")
        for name in ("markdown", "latex", "pdf"):
            if result.files.get(name):
                print(f"  {name + ':':<11} {result.files[name]}")
        return NOT_COVERED_EXIT_CODE
    for m in result.messages:
        print(f"  note: {m}")
    print(f"\n{'Short report' if result.short else 'Report'}: {rep.topic}")
    print(
        f"  sections:   {len(rep.sections)} ({rep.chars} chars), references: {len(numbered_sources(rep))}, "
        f"gaps: {len(rep.deficient_topics)}"
    )
    if result.parts:
        covered = [p for p in result.parts if p.covered]
        print(f"  task parts: {len(covered)} of {len(result.parts)} covered")
        for p in result.parts:
            if p.covered:
                print(f"    covered:      {p.part} -> {p.title!r}")
            elif p.written:  # a section under its heading, about something else
                print(
                    f"    not answered: {p.part} -> {p.title!r}: its closest sentence lacks {', '.join(p.missing_words)}"
                )
            else:
                print(f"    not covered:  {p.part}")
    if result.cleanup:
        print("  last pass:  " + ", ".join(f"{what}: {n}" for what, n in sorted(result.cleanup.items())))
    if result.score is not None:
        print(f"  judge:      score {result.score:.3f} (the report as written to the files)")
    print(
        f"  time:       {result.seconds:.0f} s, {result.rounds} rounds; tokens {result.tokens.get('total_tokens', 0)} "
        f"(prompt {result.tokens.get('prompt_tokens', 0)}, completion {result.tokens.get('completion_tokens', 0)})"
    )
    print("  files:")
    for name in ("markdown", "latex", "pdf", "trace"):
        if result.files.get(name):
            print(f"    {name + ':':<11} {result.files[name]}")
    return 0


register_configs()


@hydra.main(version_base="1.3", config_path="../conf", config_name="write_report")
def main(cfg: DictConfig) -> None:
    code = run(cfg)
    if code:
        sys.exit(code)


if __name__ == "__main__":
    from experiments.run_config import refuse_secret_arguments

    refuse_secret_arguments(sys.argv)  # before Hydra writes or echoes the line
    try:
        _TASK, sys.argv[1:] = take_task(sys.argv[1:])
    except TaskArgumentError as e:
        print(f"write_report: {e}", file=sys.stderr)
        sys.exit(2)
    from experiments.preflight import preload_or_refuse, refuse_bad_settings

    preload_or_refuse(sys.argv, "write_report.py")
    refuse_bad_settings(sys.argv, "write_report.py")  # one line, exit 2, nothing written
    main()
