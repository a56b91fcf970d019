"""Progress a person can watch: episodes, and the rounds of the episode under way.

A report-env episode takes minutes on a CPU, so an episode bar alone sits at ``0/1``;
``RunProgress`` also shows the rounds of the current episode (round, tokens so far,
report score, ETA) while training, evaluating or writing one report.

Modes (``logger.progress``):

* ``bar``   -- tqdm bars on stderr: episodes, and under them the current episode's rounds;
* ``plain`` -- one line at most every ``plain_interval_s`` seconds (and one per finished
  episode when episodes are slow), for log files;
* ``quiet`` -- nothing (CI logs); the entry points still print their summary at the end;
* ``auto``  -- ``bar`` on a terminal, ``plain`` otherwise.

Anything else a run prints while a bar is up goes through :meth:`RunProgress.write`, so
no line is glued to a bar.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Mapping, Optional, TextIO

MODES = ("auto", "bar", "plain", "quiet")


def resolve_mode(mode: str, stream: Optional[TextIO] = None, key: str = "logger.progress") -> str:
    mode = str(getattr(mode, "value", mode))
    if mode not in MODES:
        raise ValueError(f"{key} must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "auto":
        stream = stream or sys.stderr
        return "bar" if getattr(stream, "isatty", lambda: False)() else "plain"
    return mode


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class RunProgress:
    """Episode and round progress of one run.

    ``total_episodes`` (from ``initial``) sizes the episode bar, which counts episodes of
    ``main_kind``; ``rounds_per_episode``
    (the env's round budget, e.g. ``env.max_rounds``) turns on the round display; None
    (the matrix games: thousands of rounds a second) leaves it off."""

    def __init__(
        self,
        mode: str = "auto",
        *,
        total_episodes: int,
        initial: int = 0,
        desc: str = "",
        rounds_per_episode: Optional[int] = None,
        stream: Optional[TextIO] = None,
        plain_interval_s: float = 15.0,
        main_kind: str = "train",
    ):
        self.stream = stream or sys.stderr
        self.mode = resolve_mode(mode, self.stream)
        self.total, self.done, self.desc = int(total_episodes), int(initial), desc
        self.rounds_per_episode = rounds_per_episode
        self.plain_interval_s = float(plain_interval_s)
        self.main_kind = main_kind  # the kind of episode the episode bar counts (evaluate.py: eval)
        self._started = time.monotonic()
        self._first_done = self.done
        self._last_line = 0.0
        self._episode = self._tokens = 0
        self._kind = "train"
        self._score: Optional[float] = None
        self._episode_bar = self._round_bar = None
        if self.mode == "bar":
            from tqdm import tqdm

            self._episode_bar = tqdm(
                total=self.total,
                initial=self.done,
                desc=desc,
                unit="ep",
                file=self.stream,
                dynamic_ncols=True,
                position=0,
            )
            if rounds_per_episode:
                self._round_bar = tqdm(
                    total=rounds_per_episode,
                    desc="  rounds",
                    unit="round",
                    file=self.stream,
                    dynamic_ncols=True,
                    position=1,
                    leave=False,
                )

    # -- episodes --------------------------------------------------------------------
    def begin_episode(self, kind: str = "train", index: Optional[int] = None, total: Optional[int] = None) -> None:
        """A new episode starts: ``kind`` train/eval; ``index``/``total`` for eval episodes."""
        self._kind, self._tokens, self._score, self._round = kind, 0, None, 0
        self._episode_t0 = time.monotonic()
        self._label = f"{kind} {index + 1}/{total}" if index is not None and total else kind
        if self._round_bar is not None:
            self._round_bar.reset(total=self.rounds_per_episode)
            self._round_bar.set_description(f"  {self._label} rounds")

    def on_round(self, round_index: int, info: Mapping[str, Any]) -> None:
        """After each round: ``info`` is the round's infos (``tokens`` spent this round,
        ``report_score``), the first acting agent's."""
        self._round = round_index + 1
        tokens = info.get("tokens")
        if isinstance(tokens, (int, float)):
            self._tokens += int(tokens)
        score = info.get("report_score")
        if isinstance(score, (int, float)):
            self._score = float(score)
        if self.mode == "bar" and self._round_bar is not None:
            self._round_bar.update(1)
            self._round_bar.set_postfix(self._round_fields(), refresh=False)
        elif self.mode == "plain" and self.rounds_per_episode and self._due():
            self._line(
                f"{self._label} round {self._round}/{self.rounds_per_episode}, "
                + ", ".join(f"{k} {v}" for k, v in self._round_fields().items())
            )

    def _round_fields(self) -> dict[str, str]:
        fields = {"tokens": str(self._tokens)}
        if self._score is not None:
            fields["score"] = f"{self._score:.3f}"
        return fields

    def end_episode(self, summary: Optional[Mapping[str, float]] = None) -> None:
        """An episode of ``main_kind`` finished (others, e.g. eval episodes during training,
        only reset the round display)."""
        if self._kind != self.main_kind:
            return
        self.done += 1
        shown = {k: f"{v:.3g}" for k, v in (summary or {}).items() if isinstance(v, (int, float))}
        if self._episode_bar is not None:
            self._episode_bar.update(1)
            if shown:
                self._episode_bar.set_postfix(shown, refresh=False)
        elif self.mode == "plain":
            slow = self.rounds_per_episode is not None  # report env: every episode is worth a line
            if slow or self._due() or self.done == self.total:
                text = ", ".join(f"{k} {v}" for k, v in shown.items())
                self._line(
                    f"{self.desc} episode {self.done}/{self.total}"
                    + (f": {text}" if text else "")
                    + f" (elapsed {_clock(time.monotonic() - self._started)}, eta {self.eta()})"
                )

    def eta(self) -> str:
        finished = self.done - self._first_done
        if finished <= 0:
            return "?"
        rate = (time.monotonic() - self._started) / finished
        return _clock(rate * (self.total - self.done))

    # -- output ----------------------------------------------------------------------
    def _due(self) -> bool:
        return time.monotonic() - self._last_line >= self.plain_interval_s

    def _line(self, text: str) -> None:
        self._last_line = time.monotonic()
        print(text, file=self.stream, flush=True)

    def write(self, text: str) -> None:
        """Print a line without breaking the bars (quiet mode prints it too: it is a message)."""
        if self._episode_bar is not None:
            from tqdm import tqdm

            tqdm.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        for bar in (self._round_bar, self._episode_bar):
            if bar is not None:
                bar.close()
        self._round_bar = self._episode_bar = None


def rounds_budget(env: Any) -> Optional[int]:
    """The env's round budget when it has one worth showing (the report env's ``max_rounds``)."""
    value = getattr(getattr(env, "unwrapped", env), "max_rounds", None)
    return int(value) if isinstance(value, int) and value > 0 else None
