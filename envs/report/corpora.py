"""Named corpora of the report env: documents present on every machine, written once to the cache.

- `python_stdlib` (the default): the Python standard library's own documentation as
  `pydoc` sees it: for each module of `STDLIB_MODULES`, its docstring and the docstrings
  of the classes, methods and functions it defines (pydoc's `getdoc`, `visiblename` and
  `classify_class_attrs`), as one Markdown file with a heading per object. Inherited
  members are left out: pydoc's "Methods inherited from ..." listings repeat the same
  boilerplate in every class and would crowd retrieval. Needs nothing installed; its
  text follows the running Python's version (the file header names it).
- `python_docs_html`: the Python documentation from Debian's `python3-doc` package
  (HTML under /usr/share/doc/python3/html), the library reference pages of the same
  modules plus the tutorial and HOWTOs, read by rag's HTML loader. Richer prose, but
  only where the package is installed (`apt-get install python3-doc`; the Makefile's
  system-deps installs it for the slow tests); selecting it elsewhere is an error that
  says so. Not the default, so that results do not depend on a Debian package.
- `installed_packages`: the long descriptions that installed distributions carry in
  their metadata (the first default: READMEs with code, badges and changelogs).

`materialize_corpus(name)` writes a named corpus to `<cache>/corpora/<name>/` and
rewrites a file only when its content changed, so re-ingesting into the RAG store
(content hashes) finds nothing new. Any other string is a path to the user's documents.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import logging
import os
import platform
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from . import pydoc_corpus

logger = logging.getLogger(__name__)
RENDERER = Path(pydoc_corpus.__file__).resolve()  # run by path in a fresh interpreter

DEFAULT_CORPUS = "python_stdlib"

# Modules of the default corpus: those the task topics write about, and neighbours that
# share their vocabulary (so retrieval has to tell them apart). Left out: modules whose
# docstrings are mostly command lists or node catalogues (pdb, ast) and large ones no
# topic uses (ssl, io). About 0.75 MB of text, ~900 chunks of 256 tokens.
STDLIB_MODULES = (
    "asyncio",
    "concurrent.futures",
    "threading",
    "queue",
    "multiprocessing",
    "subprocess",
    "selectors",
    "socket",
    "socketserver",
    "http.client",
    "http.server",
    "urllib.request",
    "urllib.parse",
    "email.message",
    "smtplib",
    "argparse",
    "getopt",
    "logging",
    "logging.handlers",
    "logging.config",
    "warnings",
    "traceback",
    "json",
    "csv",
    "configparser",
    "pickle",
    "copy",
    "shelve",
    "sqlite3",
    "re",
    "string",
    "textwrap",
    "difflib",
    "collections",
    "heapq",
    "bisect",
    "itertools",
    "functools",
    "operator",
    "dataclasses",
    "typing",
    "abc",
    "enum",
    "contextlib",
    "inspect",
    "weakref",
    "gc",
    "pathlib",
    "shutil",
    "tempfile",
    "glob",
    "fnmatch",
    "zipfile",
    "tarfile",
    "gzip",
    "zlib",
    "os",
    "struct",
    "codecs",
    "base64",
    "hashlib",
    "hmac",
    "secrets",
    "uuid",
    "random",
    "statistics",
    "decimal",
    "fractions",
    "math",
    "datetime",
    "time",
    "calendar",
    "zoneinfo",
    "sched",
    "unittest",
    "unittest.mock",
    "doctest",
    "timeit",
    "cProfile",
    "pstats",
    "tracemalloc",
    "importlib.resources",
    "graphlib",
    "ipaddress",
    "xml.etree.ElementTree",
)

# Debian's python3-doc: where it puts the HTML, and which pages the HTML corpus takes.
PYTHON_DOCS_HTML_ROOTS = ("/usr/share/doc/python3/html", "/usr/share/doc/python3-doc/html")
PYTHON_DOCS_HTML_FOLDERS = ("tutorial", "howto")

# Distributions whose descriptions form the `installed_packages` corpus; missing ones are skipped.
CORPUS_PACKAGES = (
    "torch",
    "torch-geometric",
    "numpy",
    "pettingzoo",
    "gymnasium",
    "hydra-core",
    "omegaconf",
    "chromadb",
    "rank-bm25",
    "transformers",
    "sentence-transformers",
    "tokenizers",
    "huggingface_hub",
    "openai",
    "httpx",
    "ollama",
    "llama_cpp_python",
    "pydantic",
    "jsonschema",
    "tqdm",
    "rich",
    "wandb",
    "pypdf",
)
MIN_DESCRIPTION_CHARS = 1500  # shorter descriptions are mostly badges and links


def cache_root() -> Path:
    """`$QMIX_CACHE_DIR`, else `~/.cache/qmix-report-gym`."""
    return Path(os.environ.get("QMIX_CACHE_DIR", Path.home() / ".cache" / "qmix-report-gym")).expanduser()


# -- python_stdlib: pydoc (the renderer is envs/report/pydoc_corpus.py) ---------------------------
def stdlib_documents(modules: Sequence[str] | None = None) -> dict[str, str]:
    """{file name: Markdown text} for each importable module of `modules` (default STDLIB_MODULES)
    with documentation, rendered in this process (`envs.report.pydoc_corpus`)."""
    return pydoc_corpus.stdlib_documents(STDLIB_MODULES if modules is None else modules)


# -- python_docs_html: Debian's python3-doc ---------------------------------------------
def python_docs_html_root() -> Path | None:
    """The folder of Debian's Python HTML documentation, or None when python3-doc is not installed."""
    for root in PYTHON_DOCS_HTML_ROOTS:
        path = Path(root)
        if (path / "library").is_dir():
            return path.resolve()
    return None


def _library_page_stems(modules: Iterable[str]) -> set[str]:
    """Sphinx names library pages after the module (`urllib.parse.html`) or its top package (`asyncio-*.html`)."""
    return {m for m in modules} | {m.split(".")[0] for m in modules}


def html_documents(modules: Sequence[str] | None = None) -> dict[str, bytes]:
    """{relative file name: HTML bytes}: the library pages of `modules` (default STDLIB_MODULES), the tutorial
    and the HOWTOs."""
    modules = STDLIB_MODULES if modules is None else modules
    root = python_docs_html_root()
    if root is None:
        raise FileNotFoundError(
            "corpus 'python_docs_html' needs Debian's python3-doc package (HTML under "
            f"{' or '.join(PYTHON_DOCS_HTML_ROOTS)}): apt-get install python3-doc, "
            "or use the default corpus 'python_stdlib'"
        )
    stems = _library_page_stems(modules)
    docs: dict[str, bytes] = {}
    for page in sorted((root / "library").glob("*.html")):
        stem = page.stem
        if stem in stems or stem.split("-")[0] in stems:
            docs[f"library-{page.name}"] = page.read_bytes()
    for folder in PYTHON_DOCS_HTML_FOLDERS:
        for page in sorted((root / folder).glob("*.html")):
            if page.stem != "index":  # tables of contents, no prose
                docs[f"{folder}-{page.name}"] = page.read_bytes()
    return docs


# -- installed_packages: package metadata -----------------------------------------------
def _header(meta: metadata.PackageMetadata, name: str) -> str | None:
    """The first `name` field of `meta`, None without one (what email.message.Message.get returns;
    the PackageMetadata protocol that importlib.metadata promises has get_all, not get)."""
    values = meta.get_all(name)
    return values[0] if values else None


def _description(dist: metadata.Distribution) -> str:
    meta = dist.metadata
    return (meta.get_payload() if hasattr(meta, "get_payload") else "") or _header(meta, "Description") or ""


def package_documents(packages: Iterable[str] = CORPUS_PACKAGES) -> dict[str, str]:
    """{file name: markdown text} for every installed package with a long description."""
    docs = {}
    for name in packages:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        body = _description(dist).strip()
        if len(body) < MIN_DESCRIPTION_CHARS:
            continue
        meta = dist.metadata
        header = f"# {meta['Name']} {meta['Version']}\n\n{_header(meta, 'Summary') or ''}\n\n"
        docs[f"{meta['Name'].lower().replace('_', '-')}.md"] = header + body + "\n"
    return docs


# -- the registry ---------------------------------------------------------------------
def stdlib_documents_isolated(modules: Sequence[str] | None = None) -> dict[str, str]:
    """`stdlib_documents`, rendered in a fresh isolated interpreter of this Python.

    pydoc renders what a process holds, not what the installation ships: measured, a
    process that had imported transformers documented `Logger.warning_once` (which
    transformers attaches to logging.Logger), and `logging.shutdown`'s default listed every
    handler made so far (40 in a benchmark worker, 1 under pytest). The corpus (so the
    store, what is retrieved and what a prompt costs) then depended on which process
    rendered it first. A fresh interpreter has imported only the standard library; it runs
    the renderer by path as a script (-I: no site-packages, no PYTHONPATH, no user site, and
    not through `envs`, whose imports would patch the very modules rendered).
    """
    import json
    import subprocess
    import sys

    modules = list(STDLIB_MODULES if modules is None else modules)
    done = subprocess.run(
        [sys.executable, "-I", str(RENDERER), json.dumps(modules)],
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"rendering the python_stdlib corpus in a fresh interpreter ({sys.executable} -I) "
            f"failed with exit {done.returncode}: {done.stderr.strip()[-2000:]}"
        )
    return json.loads(done.stdout)


NAMED_CORPORA: dict[str, Callable[[], Mapping[str, str | bytes]]] = {
    "python_stdlib": stdlib_documents_isolated,
    "python_docs_html": html_documents,
    "installed_packages": package_documents,
}


def is_named_corpus(corpus: str) -> bool:
    return corpus in NAMED_CORPORA


def _write_if_changed(target: Path, data: bytes) -> None:
    # Rewrite only on change, so the store sees the same file hash and skips it.
    if target.exists() and hashlib.sha256(target.read_bytes()).digest() == hashlib.sha256(data).digest():
        return
    # A hidden name of this process's own: two processes rendering one corpus at once (two
    # test workers, two benchmark workers) never write into, replace or clean up each other's
    # temporary file (the stale-file sweep below skips hidden names).
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)


def materialize_corpus(corpus: str = DEFAULT_CORPUS, root: Path | None = None) -> Path:
    """The folder (or file) holding a corpus' documents; writes a named corpus once.

    Files of an earlier version of a named corpus that it no longer produces are removed,
    so the folder holds exactly the corpus.
    """
    if corpus not in NAMED_CORPORA:
        path = Path(corpus).expanduser()
        if not path.exists():
            raise FileNotFoundError(
                f"corpus {corpus!r} is neither a named corpus ({', '.join(NAMED_CORPORA)}) nor an existing path"
            )
        return path.resolve()
    folder = (root or cache_root()) / "corpora" / corpus
    stamp = folder / ".rendered"  # hidden: ingestion skips it
    key = _render_key(corpus)
    if key is not None and stamp.is_file() and stamp.read_text(encoding="utf-8") == key:
        return folder  # rendered by this Python from these inputs already (rendering costs seconds)
    docs = NAMED_CORPORA[corpus]()
    if not docs:
        raise RuntimeError(f"corpus {corpus!r} produced no documents on this machine; pass a corpus path instead")
    folder.mkdir(parents=True, exist_ok=True)
    for fname, text in docs.items():
        _write_if_changed(folder / fname, text.encode("utf-8") if isinstance(text, str) else text)
    for stale in folder.iterdir():
        if stale.is_file() and not stale.name.startswith(".") and stale.name not in docs:
            stale.unlink()
    if key is not None:
        _write_if_changed(stamp, key.encode("utf-8"))
    return folder


def _render_key(corpus: str) -> str | None:
    """What a named corpus' text depends on, or None when only rendering can tell (package metadata)."""
    if corpus == "python_stdlib":
        source = RENDERER.read_bytes()  # the renderer itself
        return hashlib.sha256(
            repr((platform.python_version(), os.path.realpath(os.__file__), STDLIB_MODULES)).encode() + source
        ).hexdigest()
    if corpus == "python_docs_html":
        root = python_docs_html_root()
        return (
            None
            if root is None
            else hashlib.sha256(
                repr((str(root), (root / "library").stat().st_mtime_ns, STDLIB_MODULES)).encode()
                + Path(__file__).read_bytes()
            ).hexdigest()
        )
    return None
