"""Ctrl-C during training: deferred while the learner's state is being changed.

An interrupt arriving inside an episode stops it at once (the episode is replayed on
resume); one arriving during the bookkeeping after an episode (observe, update, logs,
evaluation, checkpoint) waits until that bookkeeping is done, so a checkpoint never
holds a half-updated learner.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Any, Iterator


class InterruptGuard:
    """Ctrl-C raises KeyboardInterrupt at once, except inside ``critical()`` or between
    ``enter()`` and ``leave()`` (observe, update, logs, evaluation, checkpoint), where it
    is deferred to the end so the learner's state stays consistent for the checkpoint."""

    def __init__(self) -> None:
        self.in_critical = False
        self.pending = False

    def install(self) -> None:
        try:
            signal.signal(signal.SIGINT, self._handler)
        except ValueError:  # not in the main thread (e.g. some launchers): keep the default
            pass

    def _handler(self, signum: int, frame: Any) -> None:
        if self.in_critical:
            self.pending = True
        else:
            raise KeyboardInterrupt

    def enter(self) -> None:
        self.in_critical = True

    def leave(self) -> None:
        self.in_critical = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt

    @contextmanager
    def critical(self) -> Iterator[None]:
        self.enter()
        try:
            yield
        finally:
            self.in_critical = False
        self.leave()
