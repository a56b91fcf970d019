"""Which version of the extractive team's rules an env runs (``env.extractive.version``).

Version 1 is the proxy as first published (its rules: ``docs/extractive_team.md``, "v1");
it stays runnable for replicating results measured on it (``env=report_writing_extractive_v1``).
Version 2 (the default) is the proxy whose roles do what the LLM roles are asked to do
from what they have ("v2" in the same document).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

VERSIONS = (1, 2)
LATEST = 2


@dataclass(frozen=True)
class ExtractiveSettings:
    version: int = LATEST  # 1 | 2: the rules the extractive team follows (docs/extractive_team.md)

    def __post_init__(self) -> None:
        if isinstance(self.version, bool) or self.version not in VERSIONS:
            raise ValueError(f"env.extractive.version: expected one of {list(VERSIONS)}, got {self.version!r}")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> "ExtractiveSettings":
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"env.extractive: unknown keys {unknown} (allowed: {sorted(known)})")
        return cls(**data)
