#!/usr/bin/env python
"""Which model writes the better report? `write_report.py` on your documents, per model, measured.

    python experiments/protocol/compare_writers.py --out outputs/writers \\
        --set mime /usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf "How ..." \\
        --set libffi /usr/share/doc/libffi8/html "Calling C functions with libffi" \\
        --models smollm2-135m qwen2.5-coder-0.5b --workers 2 -- algo.rounds.drafting=5

For each (document set, model) it runs `write_report.py` (one model thread per run, `--workers`
runs at a time, the same overrides after `--` for every model, so every model gets the same
plan and budget) into `<out>/<set>/<model>/`. A pair whose report is already there is not run
again: a comparison that was stopped resumes where it was.

Then, per report, it prints and writes to `<out>/writers.csv`:

* exit code, wall seconds, tokens, sections, characters, the judge's final score (the trace's
  `report_score`, the same reference judge for every model);
* **own**: the share of the report's sentences that are the model's own words, i.e. not a
  sentence of any of the documents (word for word, case and spacing aside). A report whose
  every sentence is quoted has own = 0: the writer did not write;
* **kept / replaced / dropped**: what the grounding check did with the writer's sentences,
  summed over the sections (`sentence_reuse.ground_in_sources` notes in the trace), and how
  many sections gave way whole to quoted sentences (`reused`).

With `--llm-judge MODEL` (e.g. qwen2.5-coder-1.5b) every report is also scored by the LLM judge
on that embedded model (`llm_score`, stored in the run's folder, so it is not asked twice).

Reading the reports themselves is part of the comparison: every `report.md` is kept.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parents[2]

from agents_llm.text.split import words  # noqa: E402
from rag.loaders import load_document  # noqa: E402
from rag.sentences import split_sentences  # noqa: E402

DOC_SUFFIXES = (".pdf", ".docx", ".md", ".txt", ".html", ".htm")
_GROUNDING = re.compile(
    r"(\d+) of (\d+) sentences replaced by the source sentence they paraphrase, (\d+) unsupported dropped"
)


@dataclass
class WriterRow:
    doc_set: str
    model: str
    exit_code: int
    seconds: float
    tokens: int
    sections: int
    chars: int
    score: float
    sentences: int
    own: float  # share of the report's sentences that are not a sentence of the documents
    kept: int  # writer sentences the grounding check kept in the writer's words
    replaced: int  # ... replaced by the source sentence they paraphrase
    dropped: int  # ... dropped as unsupported
    reused_sections: int  # sections whose prose gave way whole to quoted source sentences
    report: str
    llm_score: Optional[float] = None  # the LLM judge's score (--llm-judge), None when not asked


def document_texts(docs: Path) -> list[str]:
    """The text of every document under `docs` as the loaders read it, wrapped lines joined."""
    files = [docs] if docs.is_file() else sorted(p for p in docs.rglob("*") if p.suffix.lower() in DOC_SUFFIXES)
    return [load_document(p).text for p in files]


def _norm(text: str) -> str:
    return " ".join(words(text))


def report_sentences(sections: Sequence[str]) -> list[str]:
    """The sentences of the sections' texts (a paragraph's wrapped lines joined; headings inside a
    section and sentences under three words left out)."""
    out = []
    for content in sections:
        for paragraph in re.split(r"\n\s*\n", content):
            if paragraph.strip() and not paragraph.lstrip().startswith("#"):
                out.extend(s for s in split_sentences(" ".join(paragraph.split())) if len(words(s)) >= 3)
    return out


def section_texts(trace: dict, markdown: str) -> list[str]:
    """The sections' texts: from the trace's final report state, else the Markdown between its
    `## ` headings (the References left out)."""
    state = trace.get("report_state") or {}
    if state.get("sections") is not None:
        return [str(sec.get("content", "")) for sec in state["sections"]]
    body = markdown.split("\n## References", 1)[0]
    return [part.split("\n", 1)[1] if "\n" in part else "" for part in body.split("\n## ")[1:]]


def own_share(report: Sequence[str], documents: Sequence[str]) -> float:
    """Share of `report`'s sentences that are no sentence of the documents, word for word."""
    if not report:
        return 0.0
    corpus = " " + " ".join(_norm(d) for d in documents) + " "
    return sum(f" {_norm(s)} " not in corpus for s in report) / len(report)


def grounding_counts(trace: dict) -> tuple[int, int, int, int]:
    """(kept, replaced, dropped, reused sections) over the trace's appended sections."""
    kept = replaced = dropped = reused = 0
    for rnd in trace.get("rounds", []):
        col = rnd.get("collector") or {}
        if col.get("status") not in ("appended", "revised"):
            continue
        if col.get("reused_sources"):
            reused += 1
            continue
        m = _GROUNDING.search(col.get("grounding") or "")
        if m:
            r, total, d = (int(x) for x in m.groups())
            replaced, dropped, kept = replaced + r, dropped + d, kept + total - r - d
        elif col.get("content"):
            kept += len(split_sentences(col["content"]))
    return kept, replaced, dropped, reused


def read_run(
    run_dir: Path, documents: Sequence[str], doc_set: str, model: str, exit_code: int, seconds: float
) -> Optional[WriterRow]:
    """The row of one finished run (its newest report under `run_dir`), or None when it wrote none."""
    reports = sorted(run_dir.glob("*/report.md"))
    if not reports:
        return None
    out = reports[-1].parent
    markdown = reports[-1].read_text(encoding="utf-8")
    trace = json.loads((out / "trace.json").read_text()) if (out / "trace.json").exists() else {"rounds": []}
    rounds = trace.get("rounds", [])
    last = rounds[-1] if rounds else {}
    said = report_sentences(section_texts(trace, markdown))
    kept, replaced, dropped, reused = grounding_counts(trace)
    return WriterRow(
        doc_set=doc_set,
        model=model,
        exit_code=exit_code,
        seconds=round(seconds, 1),
        tokens=int((last.get("tokens") or {}).get("episode", 0)) if last else 0,
        sections=len((last.get("report") or {}).get("sections", [])) if last else 0,
        chars=int((last.get("report") or {}).get("chars", 0)) if last else 0,
        score=round(float(last.get("report_score", 0.0)), 3) if last else 0.0,
        sentences=len(said),
        own=round(own_share(said, documents), 3),
        kept=kept,
        replaced=replaced,
        dropped=dropped,
        reused_sections=reused,
        report=str(reports[-1]),
    )


def llm_judge_score(report_md: Path, score_fn) -> Optional[float]:
    """The LLM judge's score of the report written next to `report_md` (its trace's final state),
    kept in `llm_judge.json` beside it; None when the trace holds no report state."""
    from agents_llm.report_state import ReportState

    stored = report_md.parent / "llm_judge.json"
    if stored.exists():
        return float(json.loads(stored.read_text())["score"])
    trace = json.loads((report_md.parent / "trace.json").read_text())
    if not trace.get("report_state"):
        return None
    score = float(score_fn(ReportState.from_dict(trace["report_state"])))
    stored.write_text(json.dumps({"score": score, "judge": getattr(score_fn, "model", "")}))
    return score


def run_one(out: Path, doc_set: str, docs: Path, task: str, model: str, overrides: Sequence[str]) -> tuple[int, float]:
    """Run write_report.py for one pair (skipped when its report exists); (exit code, seconds)."""
    run_dir = out / doc_set / model
    done = run_dir / "run.json"
    if done.exists():
        meta = json.loads(done.read_text())
        return int(meta["exit_code"]), float(meta["seconds"])
    run_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        str(ROOT / "experiments" / "write_report.py"),
        f"--task={task}",
        f"docs={docs}",
        f"output_root={run_dir}",
        f"llm.model={model}",
        "llm.n_threads=1",
        "progress=plain",
        *overrides,
    ]
    started = time.perf_counter()
    with open(run_dir / "console.log", "w") as log:
        code = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT).returncode
    seconds = time.perf_counter() - started
    done.write_text(json.dumps({"exit_code": code, "seconds": seconds, "command": cmd}, indent=1))
    return code, seconds


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    overrides = args[args.index("--") + 1 :] if "--" in args else []
    args = args[: args.index("--")] if "--" in args else args
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", nargs=3, action="append", required=True, metavar=("NAME", "DOCS", "TASK"))
    parser.add_argument("--models", nargs="+", default=["smollm2-135m"])
    parser.add_argument("--out", type=Path, default=Path("outputs/writers"))
    parser.add_argument("--workers", type=int, default=2, help="write_report runs at a time (one model thread each)")
    parser.add_argument("--llm-judge", metavar="MODEL", help="also score every report with the LLM judge on MODEL")
    opts = parser.parse_args(args)
    sets = [(name, Path(docs).resolve(), task) for name, docs, task in opts.set]
    for name, docs, _ in sets:
        if not docs.exists():
            parser.error(f"--set {name}: {docs} does not exist")
    pairs = [(s, m) for s in sets for m in opts.models]
    with ThreadPoolExecutor(max_workers=max(1, opts.workers)) as pool:
        results = list(pool.map(lambda p: run_one(opts.out, p[0][0], p[0][1], p[0][2], p[1], overrides), pairs))
    score_fn = None
    if opts.llm_judge:
        from experiments.protocol.bench_judge import llm_judge

        score_fn = llm_judge(opts.llm_judge)
        score_fn.model = opts.llm_judge  # type: ignore[attr-defined]
    rows = []
    texts = {name: document_texts(docs) for name, docs, _ in sets}
    for ((name, _, _), model), (code, seconds) in zip(pairs, results):
        row = read_run(opts.out / name / model, texts[name], name, model, code, seconds)
        if row is None:
            print(f"{name:<10} {model:<22} exit {code}: no report (see {opts.out / name / model / 'console.log'})")
            continue
        if score_fn is not None:
            row.llm_score = llm_judge_score(Path(row.report), score_fn)
        rows.append(row)
        print(
            f"{name:<10} {model:<22} exit {code}  {seconds:6.0f} s  {row.tokens:6d} tok  {row.sections} sec  "
            f"{row.chars:5d} chars  score {row.score:.3f}  own {row.own:.2f} of {row.sentences}  "
            f"kept/replaced/dropped {row.kept}/{row.replaced}/{row.dropped}  reused sections {row.reused_sections}"
            + (f"  LLM judge {row.llm_score:.3f}" if row.llm_score is not None else "")
        )
    for model in opts.models:
        mine = [r for r in rows if r.model == model]
        if not mine:
            continue
        llm = [r.llm_score for r in mine if r.llm_score is not None]
        print(
            f"{'mean':<10} {model:<22} {len(mine)} report(s)  {sum(r.seconds for r in mine) / len(mine):6.0f} s  "
            f"{sum(r.tokens for r in mine) / len(mine):6.0f} tok  score {sum(r.score for r in mine) / len(mine):.3f}  "
            f"own {sum(r.own for r in mine) / len(mine):.2f}"
            + (f"  LLM judge {sum(llm) / len(llm):.3f}" if llm else "")
        )
    if rows:
        opts.out.mkdir(parents=True, exist_ok=True)
        with open(opts.out / "writers.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0])))
            writer.writeheader()
            writer.writerows(asdict(r) for r in rows)
        print(f"rows: {opts.out / 'writers.csv'}")
    return 0 if len(rows) == len(pairs) else 1


if __name__ == "__main__":
    sys.exit(main())
