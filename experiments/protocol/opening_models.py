#!/usr/bin/env python
"""Which model writes a report's opening paragraph better? Each model, on written reports, measured.

    python experiments/protocol/opening_models.py \
        --report docs/benchmark/writers/heldout/after/compost.5f4d5b4.md docs/benchmark/writers/heldout/compost \
        --report <report.md> <its documents folder> ... \
        --models smollm2-135m qwen2.5-coder-0.5b --out opening.csv

For each (report, model) it asks the model for the opening as `write_report` does
(`agents_llm.opening`: the report's sentences that answer each part of the task as the facts,
the task as the question), keeps what passes the body's checks, and prints one row: the model's
sentences, those kept, why the others went, tokens and seconds, and the kept text, to read. The
task is the report's title line; the parts are `agents_llm.task_parts`'. No team is run: the
opening is written from the report as it is, so every model writes from the same sentences.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import sys
import time
from pathlib import Path
from typing import List, Sequence

from experiments.check_report import report_sections, source_text


def llm_config(model: str) -> dict:
    from experiments.run_config import compose_run_config
    from omegaconf import OmegaConf

    cfg = compose_run_config(["algo=random", "llm=llamacpp", f"llm.model={model}"])
    return dict(OmegaConf.to_container(cfg.llm, resolve=True))  # type: ignore[arg-type]


def task_of(markdown: str) -> str:
    first = markdown.splitlines()[0] if markdown else ""
    if not first.startswith("# "):
        raise ValueError("the report's first line is not its '# <task>' title")
    return first[2:].strip()


def run(reports: Sequence[tuple[Path, Path]], models: Sequence[str]) -> List[dict]:
    from agents_llm.backends import make_backend
    from agents_llm.opening import answer_sentences, write_opening
    from agents_llm.report_state import OPENING_TITLE
    from report_app.task_plan import own_words
    from agents_llm.task_parts import task_parts

    rows = []
    for model in models:
        load_started = time.perf_counter()
        backend = make_backend(llm_config(model))
        load_s = time.perf_counter() - load_started
        for report, docs in reports:
            markdown = report.read_text(encoding="utf-8")
            task = task_of(markdown)
            sections = [(t, " ".join(s)) for t, s in report_sections(markdown) if t != OPENING_TITLE]
            parts = task_parts(task)
            asks = own_words(parts) if len(parts) >= 2 else []
            evidence = answer_sentences(asks, sections, task)
            body = [s for _, ss in report_sections(markdown) for s in ss]
            opening = asyncio.run(write_opening(backend, task, evidence, source_text([docs]), body))
            rows.append(
                {
                    "model": model,
                    "report": str(report),
                    "evidence": len(evidence),
                    "written": len(opening.written),
                    "kept": len(opening.kept),
                    "dropped": " | ".join(why.split(":")[0] for _, why in opening.dropped),
                    "tokens": opening.tokens,
                    "seconds": round(opening.seconds, 1),
                    "load_seconds": round(load_s, 1),
                    "opening": opening.text,
                    "model_text": " ".join(opening.written),
                }
            )
            print(
                f"{model:20s} {report.name:28s} kept {len(opening.kept)}/{len(opening.written)} "
                f"{opening.tokens} tok {opening.seconds:.1f} s\n  wrote: {' '.join(opening.written)[:600]}\n"
                f"  kept:  {opening.text[:600]}",
                flush=True,
            )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--report",
        nargs=2,
        action="append",
        metavar=("REPORT_MD", "DOCS"),
        required=True,
        type=Path,
        help="a written report.md and its documents folder (repeatable)",
    )
    parser.add_argument("--models", nargs="+", default=["smollm2-135m"], help="embedded models to compare")
    parser.add_argument("--out", type=Path, help="write the rows here as CSV")
    args = parser.parse_args(argv)
    for report, docs in args.report:
        if not report.is_file() or not docs.exists():
            print(f"opening_models: --report {report} {docs}: no such report or documents", file=sys.stderr)
            return 2
    rows = run([(r, d) for r, d in args.report], args.models)
    if args.out:
        with args.out.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    for model in args.models:
        mine = [r for r in rows if r["model"] == model]
        kept = sum(r["kept"] for r in mine)
        written = sum(r["written"] for r in mine)
        seconds = sum(r["seconds"] for r in mine)
        with_opening = sum(r["kept"] > 0 for r in mine)
        print(
            f"{model}: {with_opening}/{len(mine)} reports get an opening; {kept}/{written} sentences kept; "
            f"{seconds:.0f} s in all ({seconds / max(len(mine), 1):.1f} s per report, load {mine[0]['load_seconds']} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
