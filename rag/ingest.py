"""Ingestion: files and folders in, chunks in the store, a summary out.

Each file is handled on its own: one that cannot be read is skipped with its reason and
the rest of the batch goes on. Chunks of several files are embedded and written
together (thousands of small files would otherwise cost a store write each). A file
yields at most `rag.ingest.max_chunks_per_file` chunks; the summary names a file cut
there and how much of it was left out. Text repeated within a file or across files is
embedded and stored once.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

import numpy as np
from tqdm.auto import tqdm

from rag.chunking import embedding_input, iter_chunks
from rag.guard import find_injections
from rag.loaders import DocumentError, load_document
from rag.store import CommitCounts, FilePlan, RagStore, chunk_ids, file_sha256, source_key

# HTML comments are invisible in rendered markdown and HTML: nothing in one is text a
# reader of the document saw, and they are a favourite place for injected instructions.
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)

# The chunks a file gives depend on the loaders, the sentence splitter, the chunker and the guard
# as much as on the file's bytes: a store keeps a file's chunks only while both are unchanged, so a
# store built by older code is re-chunked on its next ingestion instead of serving old chunks. Bump
# this when a change there changes the chunks of a document: tests/rag/test_ingest_version.py pins
# the chunks of a sample document to it and fails, naming this constant, when they change.
# 3: the HTML loader drops Texinfo navigation panels; 4: it fences <pre>, chunks re-fence a cut code block;
# 5: an HTML API entry's signature (Sphinx's <dt class="sig">) is a heading; 6: plain text joins words
# broken at a line end and keeps a man page's section and indented subsection lines as headings; 7: plain
# text marks a man page's indented subsection '##', ends a FAQ's question at its '?', reads ~~~ as an underline;
# 8: a chunk's location records whether it begins a paragraph there (the texts are those of 7); 9: plain
# text joins a word in capitals groff broke at a line end ("EA\u2010" / "GAIN"); 10: it keeps the hyphen of a man
# page name broken there ("git-" / "config(1)")
INGEST_VERSION = 10


def ingest_stamp(sha256: str) -> str:
    """What a store records to know a file's chunks are current: its bytes' digest and the
    ingestion version that chunked them (a store written before versioning has the digest alone)."""
    return f"{sha256}+ingest{INGEST_VERSION}"


logger = logging.getLogger(__name__)


@dataclass
class SkippedFile:
    path: str
    reason: str


@dataclass
class IngestReport:
    ingested: List[str] = field(default_factory=list)  # new or changed files written
    unchanged: List[str] = field(default_factory=list)
    skipped: List[SkippedFile] = field(default_factory=list)
    # Files whose text contains prompt-injection patterns: ingested, neutralised at query time.
    flagged: List[Tuple[str, List[str]]] = field(default_factory=list)
    # Files cut at rag.ingest.max_chunks_per_file: (path, what was kept and what was left out).
    capped: List[Tuple[str, str]] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    chunks_added: int = 0
    chunks_replaced: int = 0  # old chunks of changed files removed
    chunks_unchanged: int = 0
    seconds: float = 0.0

    def skip_reason(self, path: str | Path) -> Optional[str]:
        wanted = str(path)
        for skipped in self.skipped:
            if skipped.path == wanted or skipped.path == source_key(wanted):
                return skipped.reason
        return None

    def render(self) -> str:
        lines = [
            f"Ingestion finished in {self.seconds:.1f}s: {len(self.ingested)} file(s) ingested, "
            f"{len(self.unchanged)} unchanged, {len(self.skipped)} skipped",
            f"Chunks: {self.chunks_added} added, {self.chunks_replaced} replaced (removed), "
            f"{self.chunks_unchanged} unchanged",
        ]
        for skipped in self.skipped:
            lines.append(f"  skipped {skipped.path}: {skipped.reason}")
        for path, detail in self.capped:
            lines.append(f"  capped {path}: {detail}")
        for path, kinds in self.flagged:
            lines.append(
                f"  flagged {path}: prompt-injection patterns ({', '.join(sorted(set(kinds)))}); "
                "neutralised whenever retrieved"
            )
        for warning in self.warnings:
            lines.append(f"  warning {warning}")
        return "\n".join(lines)


def display_path(path: str | Path) -> str:
    """A path as printed and reported: bytes that are not UTF-8 as ``\\xff``, control and
    other unprintable characters (a newline in a file name) escaped as ``repr`` does."""
    text = os.fsencode(str(path)).decode("utf-8", "backslashreplace")
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _name_problem(path: Path) -> Optional[str]:
    """Why a file's name cannot be stored (Chroma's metadata and the citations are UTF-8)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return "file name is not valid UTF-8 (rename the file to ingest it)"
    return None


def _link_problem(path: Path, roots: Sequence[Path]) -> Optional[str]:
    """Why a symbolic link must not be ingested, or None when it may be."""
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        return f"broken symbolic link (points to {display_path(os.readlink(path))}, which does not exist)"
    except (RuntimeError, OSError) as error:  # RuntimeError: Python < 3.13's "Symlink loop"; OSError: ELOOP
        if isinstance(error, RuntimeError) or error.errno == errno.ELOOP:
            return f"symbolic link loop (points to {display_path(os.readlink(path))})"
        return f"cannot follow the symbolic link ({error.strerror or error})"
    if roots and not any(target == root or target.is_relative_to(root) for root in roots):
        return f"symbolic link to {target}, outside the folder being ingested"
    return None


def collect_files(
    paths: Iterable[str | Path], extensions: Sequence[str], skip_hidden: bool = True
) -> Tuple[List[Path], List[SkippedFile]]:
    """Expand files and folders (recursively, sorted) into supported files; everything
    else is reported with a reason. Duplicates are dropped. A symbolic link inside a
    folder is followed only to a file inside that folder: a link to anywhere else, or
    to nothing, is skipped naming the link."""
    wanted = {extension.lower() for extension in extensions}
    files: List[Path] = []
    skipped: List[SkippedFile] = []
    seen = set()

    def consider(path: Path, roots: Sequence[Path] = ()) -> None:
        try:
            problem = _name_problem(path) or (_link_problem(path, roots) if path.is_symlink() else None)
        except OSError as error:  # one file's trouble skips that file, never the batch
            problem = f"cannot read the file ({error.strerror or error})"
        if problem:
            skipped.append(SkippedFile(display_path(path), problem))
            return
        key = source_key(path)
        if key in seen:
            return
        seen.add(key)
        if path.suffix.lower() not in wanted:
            skipped.append(
                SkippedFile(
                    display_path(path),
                    f"unsupported extension {path.suffix or '(none)'!r} (supported: {', '.join(sorted(wanted))})",
                )
            )
            return
        files.append(path)

    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_symlink() and not path.exists():
            skipped.append(SkippedFile(display_path(path), _link_problem(path, ()) or "broken symbolic link"))
        elif not path.exists():
            skipped.append(SkippedFile(display_path(path), "path does not exist"))
        elif path.is_dir():
            root = path.resolve()
            # os.walk does not follow directory symlinks, so a link loop cannot hang us.
            for folder, subfolders, names in os.walk(path):
                if skip_hidden:
                    subfolders[:] = [name for name in subfolders if not name.startswith(".")]
                subfolders.sort()
                for name in sorted(names):
                    if skip_hidden and name.startswith("."):
                        continue
                    consider(Path(folder) / name, (root,))
        elif path.is_file():
            consider(path)  # a file named directly is taken as given, link or not
        else:
            skipped.append(SkippedFile(display_path(path), "not a regular file or folder"))
    return files, skipped


class _PendingWrites:
    """File plans waiting to be embedded and written together."""

    def __init__(self, store: RagStore, report: IngestReport, batch_chunks: int):
        self.store = store
        self.report = report
        self.batch_chunks = batch_chunks
        self.plans: List[FilePlan] = []
        self.paths: List[str] = []
        self.missing: List[List[int]] = []
        self.pending_ids: set = set()  # texts already waiting for a vector in this batch
        self.pending_chunks = 0

    def add(self, plan: FilePlan, path: str) -> None:
        self.plans.append(plan)
        self.paths.append(path)
        missing = [index for index in self.store.missing_ids(plan) if plan.ids[index] not in self.pending_ids]
        self.pending_ids.update(plan.ids[index] for index in missing)
        self.missing.append(missing)
        self.pending_chunks += len(self.missing[-1])
        if self.pending_chunks >= self.batch_chunks:
            self.flush()

    def _embed(self, plan: FilePlan, indices: List[int]) -> np.ndarray:
        return self.store.embedding.embed_documents([plan.embedding_inputs[i] for i in indices])

    def flush(self) -> None:
        if not self.plans:
            return
        plans, paths, missing = self.plans, self.paths, self.missing
        self.plans, self.paths, self.missing, self.pending_chunks = [], [], [], 0
        self.pending_ids = set()
        inputs = [plan.embedding_inputs[i] for plan, indices in zip(plans, missing) for i in indices]
        owners = [path for path, indices in zip(paths, missing) for _ in indices]
        vectors: List[Optional[np.ndarray]] = []
        truncations = getattr(getattr(self.store.embedding, "stats", None), "truncations", None)
        truncations_before = len(truncations) if truncations is not None else 0
        try:
            matrix = self.store.embedding.embed_documents(inputs)
            # A server that accepted a chunk only once shortened (Ollama) says so here.
            for record in (truncations or [])[truncations_before:]:
                self.report.warnings.append(
                    f"{owners[record.index]}: a chunk was truncated from {record.original_chars} to "
                    f"{record.kept_chars} characters to fit the embedding server"
                )
            offset = 0
            for indices in missing:
                vectors.append(matrix[offset : offset + len(indices)])
                offset += len(indices)
        except Exception as batch_error:
            # Find the file that fails, so only it is skipped.
            logger.warning(
                "embedding a batch of %d chunks failed (%s); retrying file by file", len(inputs), batch_error
            )
            vectors = []
            for plan, path, indices in zip(plans, paths, missing):
                try:
                    vectors.append(self._embed(plan, indices))
                except Exception as error:
                    self.report.skipped.append(SkippedFile(path, f"embedding failed: {error}"))
                    vectors.append(None)
        ready = [
            (plan, path, vector, indices)
            for plan, path, vector, indices in zip(plans, paths, vectors, missing)
            if vector is not None
        ]
        if not ready:
            return
        try:
            counts = self.store.commit(
                [item[0] for item in ready], [item[2] for item in ready], [item[3] for item in ready]
            )
        except Exception as batch_error:
            self.store.reload()  # BM25 and bookkeeping follow whatever Chroma kept
            if len(ready) == 1:
                self.report.skipped.append(SkippedFile(ready[0][1], f"store write failed: {batch_error}"))
                return
            logger.warning("writing a batch of %d files failed (%s); retrying file by file", len(ready), batch_error)
            for item in ready:  # only the file the store refuses is skipped
                try:
                    [count] = self.store.commit([item[0]], [item[2]], [item[3]])
                except Exception as error:
                    self.report.skipped.append(SkippedFile(item[1], f"store write failed: {error}"))
                    self.store.reload()
                    continue
                self._count(item[1], count)
            return
        for (_, path, _, _), count in zip(ready, counts):
            self._count(path, count)

    def _count(self, path: str, count: CommitCounts) -> None:
        self.report.ingested.append(path)
        self.report.chunks_added += count.added
        self.report.chunks_replaced += count.removed
        self.report.chunks_unchanged += count.unchanged


def plan_file(store: RagStore, path: Path, sha256: str) -> Tuple[FilePlan, List[str], List[str], Optional[str]]:
    """Load and chunk one file; returns the plan, the injection kinds found in its
    chunks, the loader's warnings (e.g. a page whose text could not be extracted) and,
    when the file hit the chunk cap, what was kept and what was left out."""
    cfg = store.cfg
    document = load_document(path, max_bytes=int(cfg.ingest.max_file_mb * 2**20))
    warnings = list(document.warnings)
    text, comments = _HTML_COMMENT.subn("", document.text)
    if comments:
        warnings.append(f"{comments} HTML comment(s) left out (hidden from a reader of the document)")
    tokenizer = store.embedding.tokenizer
    max_tokens = min(cfg.chunking.max_tokens, store.embedding.max_tokens)
    cap = cfg.ingest.max_chunks_per_file
    stream = iter_chunks(text, path.name, tokenizer, max_tokens, cfg.chunking.overlap_tokens)
    chunks = list(itertools.islice(stream, cap + 1))
    capped = None
    if len(chunks) > cap:
        chunks = chunks[:cap]
        kept_to = chunks[-1].end_offset
        where = f" (page {chunks[-1].page})" if chunks[-1].page is not None else ""
        capped = (
            f"kept the first {cap} chunks, up to character {kept_to:,}{where} of {len(text):,}; "
            f"the remaining {len(text) - kept_to:,} characters were not ingested "
            "(raise rag.ingest.max_chunks_per_file to ingest them)"
        )
    if not chunks:
        raise DocumentError(path, "no text content after cleaning")
    key = source_key(path)
    ids = chunk_ids(chunks)
    repeated = len(ids) - len(set(ids))
    if repeated:
        warnings.append(
            f"{repeated} of {len(ids)} chunks repeat text found earlier in the file; each text is stored once"
        )
    plan = FilePlan(
        key=key,
        name=path.name,
        file_sha256=sha256,
        kind=document.kind,
        chunks=chunks,
        ids=ids,
        embedding_inputs=[embedding_input(path.name, chunk.page, chunk.text) for chunk in chunks],
    )
    kinds = [
        finding.kind
        for chunk_text in dict.fromkeys(chunk.text for chunk in chunks)
        for finding in find_injections(chunk_text)
    ]
    kinds += [finding.kind for finding in find_injections(path.name)]
    return plan, kinds, warnings, capped


def ingest_paths(
    store: RagStore, paths: Iterable[str | Path] | str | Path, progress: Optional[bool] = None
) -> IngestReport:
    """Ingest files and folders into the store; never raises for a bad file."""
    started = time.perf_counter()
    if isinstance(paths, (str, Path)):
        paths = [paths]
    cfg = store.cfg.ingest
    report = IngestReport()
    files, skipped = collect_files(paths, cfg.extensions, cfg.skip_hidden)
    report.skipped.extend(skipped)
    show_progress = cfg.progress if progress is None else progress
    with store.writing():  # one writer per store at a time, across processes
        _ingest_files(store, files, report, show_progress)
    report.seconds = time.perf_counter() - started
    return report


def _ingest_files(store: RagStore, files: Sequence[Path], report: IngestReport, show_progress: bool) -> None:
    cfg = store.cfg.ingest
    pending = _PendingWrites(store, report, cfg.write_batch_chunks)
    max_bytes = int(cfg.max_file_mb * 2**20)
    for path in tqdm(files, desc="ingest", unit="file", disable=not show_progress, dynamic_ncols=True):
        display = display_path(path)
        try:
            size = path.stat().st_size
            if size == 0:
                raise DocumentError(path, "empty file (0 bytes)")
            if size > max_bytes:
                raise DocumentError(
                    path,
                    f"file is {size / 2**20:.1f} MiB, over the {cfg.max_file_mb:g} MiB "
                    "limit (raise rag.ingest.max_file_mb to ingest it)",
                )
            sha256 = ingest_stamp(file_sha256(path))
            record = store.source_state(source_key(path))
            if record is not None and record.file_sha256 == sha256:
                report.unchanged.append(display)
                report.chunks_unchanged += len(record.chunk_ids)
                continue
            plan, injection_kinds, warnings, capped = plan_file(store, path, sha256)
        except DocumentError as error:
            report.skipped.append(SkippedFile(display, error.reason))
            continue
        except OSError as error:  # vanished, unreadable or a dangling link: one line, no traceback
            report.skipped.append(SkippedFile(display, f"cannot read the file ({error.strerror or error})"))
            continue
        except Exception as error:  # an unexpected parser failure must not stop the batch
            logger.exception("unexpected error loading %s", path)
            report.skipped.append(SkippedFile(display, f"unexpected {type(error).__name__}: {error}"))
            continue
        report.warnings.extend(f"{display}: {warning}" for warning in warnings)
        if capped:
            report.capped.append((display, capped))
        if injection_kinds:
            report.flagged.append((display, injection_kinds))
        pending.add(plan, display)
    pending.flush()
