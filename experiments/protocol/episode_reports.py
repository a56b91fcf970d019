"""Reports the LLM team wrote, loaded from their episode traces so that any judge can score them.

A trace (`agents_llm.trace`) that records the final report's state (`report_state`: sections with
the source chunks they cite) gives the report exactly as the env's judge read it. An older trace
has only the final Markdown and an outline (each section's title and the file names it cites);
its report is rebuilt from those, each cited file standing in whole (split into paragraph-sized
chunks) for the chunks the section was written from. Both judges under comparison then read the
same rebuilt report, so their agreement is measured on one object; the env's own score, recorded
in the trace, is kept beside it (`recorded_score`) to show how far the rebuilding moved it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from agents_llm.report_state import ReportState
from envs.report.corpora import materialize_corpus
from rag.sources import SourceRef

CHUNK_CHARS = 1200  # about the store's chunk size: a stand-in chunk is a few paragraphs of the cited file


@dataclass(frozen=True)
class EpisodeReport:
    task_id: str
    label: str  # where it came from, e.g. "handcrafted/profiling"
    state: ReportState
    recorded_score: float | None  # the env's judge score at the episode's last round
    exact: bool  # True: the trace's own report state; False: rebuilt from Markdown and cited files


def _file_chunks(path: Path, name: str) -> list[SourceRef]:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", path.read_text(encoding="utf-8", errors="replace"))]
    chunks, current = [], ""
    for para in filter(None, paragraphs):
        if current and len(current) + len(para) > CHUNK_CHARS:
            chunks.append(current)
            current = ""
        current = f"{current}\n\n{para}" if current else para
    if current:
        chunks.append(current)
    return [SourceRef(source=name, chunk_id=f"{name}#{i}", text=text) for i, text in enumerate(chunks)]


def _markdown_sections(markdown: str) -> list[tuple[str, str]]:
    """(title, content) of every `## ` section but the references."""
    out: list[tuple[str, str]] = []
    for block in re.split(r"^## ", markdown, flags=re.M)[1:]:
        title, _, body = block.partition("\n")
        if title.strip() != "References":
            out.append((title.strip(), body.strip()))
    return out


def load_episode_report(trace_path: str | Path) -> EpisodeReport:
    """The final report of the episode traced at `trace_path`; a trace this cannot read is refused naming it."""
    path = Path(trace_path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        task = doc["episode"]["task"]
        last = doc["rounds"][-1] if doc["rounds"] else {}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a readable episode trace ({type(error).__name__}: {error})") from error
    label = "/".join(path.parts[-4:-2]) if len(path.parts) >= 4 else path.parent.name
    recorded = last.get("report_score")
    if doc.get("report_state"):
        state = ReportState.from_dict(doc["report_state"])
        return EpisodeReport(task["id"], label, state, recorded, exact=True)
    outline = last.get("report", {}).get("sections", [])
    sections = _markdown_sections(doc.get("report_markdown", ""))
    if len(sections) != len(outline) or any(t != o["title"] for (t, _), o in zip(sections, outline)):
        raise ValueError(
            f"{path}: the final Markdown's sections {[t for t, _ in sections]} do not match the last round's "
            f"outline {[o['title'] for o in outline]}"
        )
    corpus = materialize_corpus(task["corpus"])
    folder = corpus if corpus.is_dir() else corpus.parent
    state = ReportState(topic=task["topic"], key_terms=list(task.get("key_terms", [])))
    for (title, content), entry in zip(sections, outline):
        sources: list[SourceRef] = []
        for name in entry.get("sources", []):
            cited = folder / name
            if not cited.is_file():
                raise ValueError(f"{path}: section {title!r} cites {name!r}, which corpus {task['corpus']!r} lacks")
            sources += _file_chunks(cited, name)
        state.append(title, content, sources)
    return EpisodeReport(task["id"], label, state, recorded, exact=False)


def load_episode_reports(roots: list[str | Path]) -> list[EpisodeReport]:
    """Every episode's report under `roots` (folders searched for trace.json, or trace files), in path order."""
    traces: list[Path] = []
    for root in map(Path, roots):
        if root.is_file():
            traces.append(root)
        elif root.is_dir():
            traces += sorted(root.rglob("trace.json"))
        else:
            raise FileNotFoundError(f"episode reports: {root} is neither a trace file nor a folder")
    return [load_episode_report(t) for t in traces]
