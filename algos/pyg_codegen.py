"""Keep torch-geometric's generated `propagate` modules out of the temp folder.

torch-geometric renders each MessagePassing class's `propagate` from a jinja template
(`torch_geometric.template.module_from_template`) into
`NamedTemporaryFile(prefix="<module>_", suffix=".py", delete=False)` and imports it, and
never removes the file: every process that builds a layer class leaves a
`torch_geometric...propagate_*.py` behind in the temp folder. Building layers inside
`generated_code_in_memory()` keeps each generated source in `linecache` (so tracebacks
and `inspect.getsource` still show it) and deletes the file once it is imported.
"""

from __future__ import annotations

import linecache
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def generated_code_in_memory() -> Iterator[None]:
    before = set(sys.modules)
    try:
        yield
    finally:
        tmp = Path(tempfile.gettempdir()).resolve()
        for name in set(sys.modules) - before:
            path = getattr(sys.modules.get(name), "__file__", None)
            if not (path and name.startswith("torch_geometric")):
                continue
            file = Path(path)
            if file.suffix != ".py" or not file.name.startswith(f"{name}_") or file.parent.resolve() != tmp:
                continue
            try:
                source = file.read_text()
            except OSError:
                continue
            # mtime None: linecache never re-checks the (deleted) file and keeps these lines.
            linecache.cache[path] = (len(source), None, source.splitlines(keepends=True), path)
            file.unlink(missing_ok=True)
