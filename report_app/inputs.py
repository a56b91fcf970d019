"""What a report run is given, checked before anything runs: the documents' path, and the
names its outputs take."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence


class ReportInputError(ValueError):
    """The task, documents or configuration cannot produce a report; says which and why."""


def slugify(text: str, limit: int = 48) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].rstrip("-") or "report"


def plain_config(cfg: Any) -> Any:
    from omegaconf import OmegaConf

    if cfg is None:
        return None
    if OmegaConf.is_config(cfg):
        return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    return cfg


def check_docs(docs: str | Path, extensions: Sequence[str]) -> Path:
    """The documents path, resolved; raises naming the path when it cannot give a report."""
    from rag.ingest import collect_files

    path = Path(docs).expanduser()
    if not path.exists():
        raise ReportInputError(
            f"docs path does not exist: {path} (resolved from {str(docs)!r}); "
            "give a folder or file of .pdf/.docx/.md/.txt documents"
        )
    files, skipped = collect_files([path], extensions)
    if not files:
        why = "; ".join(f"{s.path}: {s.reason}" for s in skipped[:5])
        raise ReportInputError(
            f"no document to read in {path}: it has no {'/'.join(extensions)} file"
            + (f" ({why})" if why else " (the folder is empty)")
        )
    return path.resolve()
