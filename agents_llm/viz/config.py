"""The structured config of experiments/visualize.py (stored in Hydra's ConfigStore as `base_visualize`).

Typed, so `python experiments/visualize.py trcae=x.json` fails at start naming `trcae`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from hydra.core.config_store import ConfigStore

from .trace_panels import DEFAULT_MAX_TEXT_CHARS

DEFAULT_PLAY_INTERVAL_MS = 800


@dataclass
class VisualizeConfig:
    trace: Optional[str] = None  # an episode trace JSON -> an interactive HTML viewer
    logs: Optional[str] = None  # a training run dir (train.csv, eval.csv) -> PNG training plots
    eval: Any = None  # evaluate.py outputs: a dir, a metrics JSON, or a list of them -> Markdown report + PNGs
    out: Optional[str] = None  # HTML file (trace) or folder (logs, eval); default: next to the input
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS  # per prompt message / response in the viewer; 0 = no limit
    play_interval_ms: int = DEFAULT_PLAY_INTERVAL_MS  # viewer: time per step when playing


def register_visualize_config() -> None:
    ConfigStore.instance().store(name="base_visualize", node=VisualizeConfig)
