"""Ingest documents into the RAG store.

    python experiments/ingest.py docs=path/to/folder
    python experiments/ingest.py 'docs=[a.pdf,notes/]' rag.embedding.backend=hashing
    python experiments/ingest.py docs=[] 'delete=[old.pdf]'

Bad files (unreadable, a symbolic link loop, a name that is not UTF-8, ...) are skipped
with their reason, the rest of the batch goes on; the summary at the end lists them, names
escaped. A `docs` path that does not exist stops the run before the store is touched (exit
status 2); a run that ingested nothing (an empty folder, every file skipped) exits 1. Two
ingests into one store at once take turns (the store's write lock).
Each run gets its own folder, outputs/ingest/<date>/<time>_<id>.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path


import hydra  # noqa: E402
from hydra.utils import to_absolute_path  # noqa: E402
from omegaconf import DictConfig, ListConfig, OmegaConf  # noqa: E402

from rag import ingest_paths, open_store, register_configs  # noqa: E402


def as_path_list(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple, ListConfig)):
        return [to_absolute_path(str(item)) for item in value]
    return [to_absolute_path(str(value))]


register_configs()
# A short random id in the run folder (conf/ingest.yaml), as train runs have: two runs in
# one second get two folders.
OmegaConf.register_new_resolver("run_id", lambda: uuid.uuid4().hex[:6], use_cache=True, replace=True)


@hydra.main(version_base="1.3", config_path="../conf", config_name="ingest")
def main(cfg: DictConfig) -> int:
    docs = as_path_list(cfg.docs)
    missing = [path for path in docs if not Path(path).exists() and not Path(path).is_symlink()]
    if missing:
        print("ingest: nothing ingested, docs path(s) not found: " + ", ".join(missing), file=sys.stderr)
        sys.exit(2)
    cfg.rag.store.path = to_absolute_path(cfg.rag.store.path)
    store = open_store(cfg.rag)
    with store.writing():
        for source in cfg.delete:
            try:
                # A path (relative to where the command was run) or a file name.
                removed = store.delete_source(str(source))
                print(f"deleted {source}: {removed} chunk(s)")
            except KeyError as error:
                print(f"delete skipped: {error.args[0]}", file=sys.stderr)
    report = ingest_paths(store, docs)
    print(report.render())
    print(f"Store {store.path}: {len(store)} chunk(s) from {len(store.sources)} source(s)")
    if docs and not (report.ingested or report.unchanged):
        why = f"all {len(report.skipped)} file(s) skipped (above)" if report.skipped else "no file found"
        print(f"ingest: nothing ingested from {', '.join(docs)}: {why}", file=sys.stderr)
        sys.exit(1)
    return 0


if __name__ == "__main__":
    main()
