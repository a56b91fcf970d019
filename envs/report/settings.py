"""The report env's settings under the names callers and tests have always read
(`env.max_rounds`, `env.llm_cfg`, ...): read-only views of its `ReportEnvConfig`
(`envs/report/config.py`), the base the env class takes them from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .config import ReportEnvConfig


class ReportEnvSettings:
    """Read-only views of ``self.config`` under their historical names."""

    config: ReportEnvConfig

    @property
    def max_rounds(self) -> int:
        return self.config.max_rounds

    @property
    def min_rounds_before_terminate(self) -> int:
        return self.config.min_rounds_before_terminate

    @property
    def summary_dim(self) -> int:
        return self.config.summary_dim

    @property
    def token_scale(self) -> float:
        return self.config.token_scale

    @property
    def round_token_scale(self) -> float:
        return self.config.round_token_scale

    @property
    def render_mode(self) -> str | None:
        return self.config.render_mode

    @property
    def info_mode(self) -> str:
        return self.config.infos

    @property
    def observe_comm_adjacency(self) -> bool:
        return self.config.observe_comm_adjacency

    @property
    def output_dir(self) -> Path | None:
        return self.config.output_dir

    @property
    def save_episodes(self) -> bool:
        return self.config.save_episodes

    @property
    def split(self) -> str:
        return self.config.split

    @property
    def llm_cfg(self) -> dict[str, Any]:
        return self.config.llm

    @property
    def judge_cfg(self) -> dict[str, Any]:
        return self.config.judge

    @property
    def settings(self) -> Any:
        return self.config.engine

    @property
    def extractive(self) -> bool:
        return self.config.extractive_team
