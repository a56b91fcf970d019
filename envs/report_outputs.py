"""What the report env writes of an episode: its report (Markdown) and its trace (JSON), in a
folder of its own (`episode_<id>` under the env's output folder, or the temp folder)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from agents_llm.report_state import ReportState
from agents_llm.trace import ExecutionTrace


def save_episode(folder: Path, report: ReportState, trace: ExecutionTrace, *, ended: bool) -> dict[str, str]:
    """Write report.md and trace.json into ``folder``; {"report": path, "trace": path}. Mid-episode
    (not ``ended``) the trace says so and carries the report so far."""
    folder.mkdir(parents=True, exist_ok=True)
    if not ended:
        trace.report_markdown = report.to_markdown()
    report_path = folder / "report.md"
    tmp = report_path.with_suffix(".md.tmp")
    tmp.write_text(report.to_markdown(), encoding="utf-8")
    tmp.replace(report_path)
    trace_path = trace.save(folder / "trace.json")
    return {"report": str(report_path), "trace": str(trace_path)}


def episode_folder(output_dir: Path | None, episode_id: str) -> Path:
    """Where an episode's files go when asked for: the env's output folder, else the temp folder."""
    base = output_dir or Path(tempfile.gettempdir()) / "qmix-report-gym"
    return base / f"episode_{episode_id}"
