"""Read an execution trace for display, failing with a message a user can act on.

`agents_llm.trace.load_trace` is the engine's reader; the viewer needs more: the file
name in every error, truncated JSON told apart from other bad JSON, and JSON Schema
violations reported with the path of the offending field.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from agents_llm.trace import SCHEMA_NAME, SCHEMA_VERSION, TRACE_SCHEMA

MAX_SCHEMA_ERRORS = 5  # enough to see a pattern without burying the first problem


class TraceError(ValueError):
    """A trace file that cannot be shown; the message names the file and the problem."""


def _json_path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _unclosed(text: str) -> tuple[int, bool]:
    """Brackets still open at the end of `text`, and whether it ends inside a string."""
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
    return max(depth, 0), in_string


def parse_trace_text(text: str, source: str) -> dict:
    """Parse and validate trace JSON; `source` names the file in error messages."""
    if not text.strip():
        raise TraceError(f"{source}: the file is empty (0 bytes of JSON); expected a {SCHEMA_NAME} document")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        open_brackets, in_string = _unclosed(text)
        if open_brackets or in_string:  # the writer stopped early: crash, full disk, copy cut short
            end_line = text.count("\n", 0, len(text.rstrip())) + 1
            raise TraceError(
                f"{source}: truncated JSON: the file ends at line {end_line} with {open_brackets} unclosed "
                f"bracket(s){' inside a string' if in_string else ''} (parser: {e.msg} at line {e.lineno}, "
                f"column {e.colno})"
            ) from None
        raise TraceError(f"{source}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    if not isinstance(doc, dict):
        raise TraceError(f"{source}: expected a JSON object ({SCHEMA_NAME}), found {type(doc).__name__}")
    if doc.get("schema") != SCHEMA_NAME:
        raise TraceError(f"{source}: not a {SCHEMA_NAME} document (schema={doc.get('schema')!r})")
    if doc.get("version") != SCHEMA_VERSION:
        raise TraceError(
            f"{source}: trace version {doc.get('version')!r} is not supported "
            f"(this viewer reads version {SCHEMA_VERSION})"
        )
    validator = jsonschema.Draft202012Validator(TRACE_SCHEMA)
    errors = sorted(validator.iter_errors(doc), key=lambda err: list(err.absolute_path))
    if errors:
        lines = [f"  {_json_path(err.absolute_path)}: {err.message[:200]}" for err in errors[:MAX_SCHEMA_ERRORS]]
        more = f"\n  ... and {len(errors) - MAX_SCHEMA_ERRORS} more" if len(errors) > MAX_SCHEMA_ERRORS else ""
        raise TraceError(
            f"{source}: does not match the {SCHEMA_NAME} v{SCHEMA_VERSION} schema "
            f"({len(errors)} problem(s)):\n" + "\n".join(lines) + more
        )
    return doc


def read_trace(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: no such trace file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not UTF-8 text (byte {e.start}): is this a trace JSON file?") from None
    return parse_trace_text(text, str(path))
