"""What the report env writes of an episode: its report (Markdown) and its trace (JSON), in a
folder of its own (`episode_<id>` under the env's output folder, or the temp folder)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from agents_llm.report_state import ReportState
from agents_llm.trace import ExecutionTrace

from .config import ReportEnvConfig


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


class EpisodeOutputs:
    """The env's methods that write and show an episode: `save`, `artifacts`, `render`
    (a base of `ReportWritingEnv`, which sets these attributes)."""

    config: ReportEnvConfig
    render_mode: str | None
    trace: ExecutionTrace | None
    report: ReportState | None
    _ended: str | None
    _artifacts: dict[str, str]
    episode_id: str

    def save(self, folder: str | Path) -> dict[str, str]:
        """Write the report (markdown) and the trace (JSON) of the current/last episode."""
        if self.trace is None or self.report is None:
            raise RuntimeError("nothing to save: no episode has started")
        self._artifacts = save_episode(Path(folder), self.report, self.trace, ended=self._ended is not None)
        return dict(self._artifacts)

    def artifacts(self) -> dict[str, str]:
        """{name: path} of the last episode's report and trace (written now if needed)."""
        if self.trace is None:
            return {}
        if not self._artifacts or self._ended is None:
            self.save(episode_folder(self.config.output_dir, self.episode_id))
        return dict(self._artifacts)

    def render(self) -> str | None:
        if self.report is None:
            return None
        text = self.report.to_markdown()
        if self.render_mode == "human":
            print(text)
            return None
        return text
