"""Ingest documents into the RAG store.

    python experiments/ingest.py docs=path/to/folder
    python experiments/ingest.py 'docs=[a.pdf,notes/]' rag.embedding.backend=hashing
    python experiments/ingest.py docs=[] 'delete=[old.pdf]'

Bad files are skipped with their reason; the summary at the end lists them.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hydra  # noqa: E402
from hydra.utils import to_absolute_path  # noqa: E402
from omegaconf import DictConfig, ListConfig  # noqa: E402

from rag import ingest_paths, open_store, register_configs  # noqa: E402


def as_path_list(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple, ListConfig)):
        return [to_absolute_path(str(item)) for item in value]
    return [to_absolute_path(str(value))]


register_configs()


@hydra.main(version_base="1.3", config_path="../conf", config_name="ingest")
def main(cfg: DictConfig) -> int:
    cfg.rag.store.path = to_absolute_path(cfg.rag.store.path)
    store = open_store(cfg.rag)
    for source in cfg.delete:
        try:
            # A path (relative to where the command was run) or a file name.
            removed = store.delete_source(str(source))
            print(f"deleted {source}: {removed} chunk(s)")
        except KeyError as error:
            print(f"delete skipped: {error.args[0]}", file=sys.stderr)
    report = ingest_paths(store, as_path_list(cfg.docs))
    print(report.render())
    print(f"Store {store.path}: {len(store)} chunk(s) from {len(store.sources)} source(s)")
    return 0


if __name__ == "__main__":
    main()
