"""The `python_stdlib` corpus renderer: the Python standard library's documentation as
`pydoc` sees it, one Markdown file per module, with a heading per object.

For each module, its docstring and the docstrings of the classes, methods and functions
it defines (pydoc's `getdoc`, `visiblename` and `classify_class_attrs`). Inherited members
are left out: pydoc's "Methods inherited from ..." listings repeat the same boilerplate in
every class and would crowd retrieval. Prose paragraphs are reflowed so that a sentence is
one line; code, doctests and tables are kept as they are.

pydoc renders what a process holds, so `envs.report.corpora` runs this module as a script in a
fresh isolated interpreter (``python -I pydoc_corpus.py '<modules as JSON>'``: the
documents as JSON on stdout). It therefore imports the standard library only, never
`envs` (whose imports would patch the very modules rendered).
"""

from __future__ import annotations

import importlib
import inspect
import json
import logging
import pydoc
import re
import sys
import warnings
from typing import Sequence

logger = logging.getLogger("envs.report.corpora")


# -- pydoc -------------------------------------------------------------
def _defined_in(obj: object, module: str) -> bool:
    """True when `obj` belongs to `module` (or to its C accelerator `_module`, or a submodule)."""
    owner = getattr(obj, "__module__", None) or ""
    root = module.split(".")[-1]
    return owner == module or owner.startswith(module + ".") or owner.lstrip("_") == root


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class _RunTimeState:
    """Stands in for a default value that is a process's run-time state, not documentation."""

    def __repr__(self) -> str:
        return "..."


def _stable_default(value: object) -> object:
    # A non-empty mutable container default is a module's live registry (logging.shutdown's
    # handlerList lists every handler the process has made): its repr depends on what ran
    # before, so the corpus, the store, retrieval and token counts would too.
    if isinstance(value, (list, dict, set, bytearray)) and len(value):
        return _RunTimeState()
    return value


def _signature(obj: object) -> str:
    if not callable(obj):  # what inspect.signature raises TypeError for
        return "(...)"
    try:
        sig = inspect.signature(obj)
        sig = sig.replace(parameters=[p.replace(default=_stable_default(p.default)) for p in sig.parameters.values()])
        text = str(sig)
    except (TypeError, ValueError):
        return "(...)"
    # Default values print their memory address, which changes every run (and so would the file hash).
    return _ADDRESS.sub("", text)


_LIST_MARK = re.compile(r"^([-*+]|\d+[.)])\s+")
# An assignment, an aligned comment or column, a call on its own line, or a reST rule:
# an unindented code example or table, not prose.
_CODE_LINE = re.compile(r"^[\w\[\].]+\s*=\s|\S\s{2,}#|^\w+\(.*\)\s*(#.*)?$|\S {3,}\S|^[-=~^*+#]{3,}\s*$")


def _reflow(doc: str) -> str:
    """Join the hard-wrapped lines of prose paragraphs, so that a sentence is one line.

    Docstrings wrap at ~72 columns; sentence splitters (the judges', the chunker's
    snapping) treat a line break as an end. Paragraphs with indented lines or prompts
    (code, doctest, tables) are kept as they are; list items are joined item by item.
    """
    out = []
    for para in re.split(r"\n\s*\n", doc.strip()):
        lines = para.split("\n")
        is_list = bool(_LIST_MARK.match(lines[0]))
        indented = any(line.startswith((" ", "\t")) for line in lines[1:]) and not is_list
        if (
            indented
            or lines[0].startswith((" ", "\t", ">>>"))
            or any(line.lstrip().startswith((">>>", "...", "|")) or _CODE_LINE.search(line) for line in lines)
        ):
            out.append(para)
            continue
        items: list[str] = []
        for line in lines:
            if _LIST_MARK.match(line) or not items:
                items.append(line.strip())
            else:
                items[-1] += " " + line.strip()
        out.append("\n".join(items))
    return "\n\n".join(out)


def _doc_block(heading: str, doc: str) -> str:
    return f"{heading}\n\n{_reflow(doc)}\n\n"


def _render_class(qualified: str, cls: type) -> str:
    parts = [
        _doc_block(f"## class {qualified}{_signature(cls)}", _ADDRESS.sub("", pydoc.getdoc(cls)) or "(no description)")
    ]
    for name, kind, home, value in pydoc.classify_class_attrs(cls):
        # Own, public, documented members only; pydoc's inherited listings are boilerplate.
        if home is not cls or not pydoc.visiblename(name, obj=value) or name.startswith("_"):
            continue
        if kind not in ("method", "class method", "static method", "property"):
            continue
        target = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
        doc = pydoc.getdoc(target) if target is not None else ""
        if not doc.strip():
            continue
        suffix = "" if kind == "property" else _signature(target)
        parts.append(_doc_block(f"### {qualified.rsplit('.', 1)[-1]}.{name}{suffix}", _ADDRESS.sub("", doc)))
    return "".join(parts)


def pydoc_markdown(module_name: str, seen: set[int] | None = None) -> str:
    """One module's documentation as pydoc sees it, in Markdown; '' when there is none.

    `seen` (object ids) keeps an object that several modules export (asyncio re-exports
    its submodules' names) in the first module that renders it.
    """
    seen = set() if seen is None else seen
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated modules warn on import
        module = importlib.import_module(module_name)
    public = getattr(module, "__all__", None)
    parts = []
    doc = pydoc.getdoc(module).strip()
    synopsis, rest = pydoc.splitdoc(doc)  # a one-line summary, when the docstring has one
    if synopsis and len(synopsis) <= 100:
        parts.append(f"# {module_name}: {synopsis}\n\n")
    else:
        parts.append(f"# {module_name}\n\n")
        rest = doc
    if rest.strip():
        parts.append(_reflow(_ADDRESS.sub("", rest)) + "\n\n")
    members = []
    for name, value in inspect.getmembers(module):
        if not (inspect.isclass(value) or inspect.isroutine(value)) or id(value) in seen:
            continue
        if not pydoc.visiblename(name, public, value) or not _defined_in(value, module_name):
            continue
        members.append((name, value))
    body = 0
    for name, value in members:
        seen.add(id(value))
        qualified = f"{module_name}.{name}"
        if inspect.isclass(value):
            text = _render_class(qualified, value)
        else:
            member_doc = pydoc.getdoc(value)
            if not member_doc.strip():
                continue
            text = _doc_block(f"## {qualified}{_signature(value)}", _ADDRESS.sub("", member_doc))
        body += len(text)
        parts.append(text)
    if not doc and not body:
        return ""
    return "".join(parts)


def stdlib_documents(modules: Sequence[str]) -> dict[str, str]:
    """{file name: Markdown text} for each importable module of `modules` with documentation."""
    docs: dict[str, str] = {}
    seen: set[int] = set()
    for name in modules:
        try:
            text = pydoc_markdown(name, seen)
        except ImportError as error:  # an optional module (ssl without OpenSSL, sqlite3 without libsqlite)
            logger.info("corpus python_stdlib: skipping %s (%s)", name, error)
            continue
        if text:
            docs[f"{name}.md"] = text
    return docs


def main(argv: Sequence[str]) -> None:
    """``python -I pydoc_corpus.py '<modules as JSON>'``: the documents as JSON on stdout."""
    json.dump(stdlib_documents(json.loads(argv[0])), sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
