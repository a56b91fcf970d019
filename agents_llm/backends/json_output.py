"""Tolerant parsing of JSON answers and schema checks.

Small models wrap JSON in code fences or prose; we take the first JSON value that
parses and then hold it to the schema, so a judge gets either a valid object or a clear
LLMOutputError that the retry loop can act on.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

from .errors import LLMConfigError, LLMOutputError

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def check_schema(schema: Any, backend: str = "") -> None:
    """Refuse a schema that is not itself valid JSON Schema, naming the problem."""
    if not isinstance(schema, dict):
        raise LLMConfigError(f"JSON schema must be a dict, got {type(schema).__name__}", backend=backend)
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as e:
        path = "/".join(str(p) for p in e.absolute_path) or "<root>"
        raise LLMConfigError(f"invalid JSON schema at {path}: {e.message}", backend=backend) from None


def extract_json(text: str) -> Any:
    """The first JSON value in `text`: whole text, fenced block, or first {...}/[...]."""
    candidates = [text.strip()] + [m.strip() for m in _FENCE.findall(text)]
    # strict=False: llama.cpp's JSON grammar lets raw newlines into strings, which the
    # strict parser rejects although the intent is unambiguous.
    for c in candidates:
        try:
            return json.loads(c, strict=False)
        except (json.JSONDecodeError, ValueError):
            pass
    decoder = json.JSONDecoder(strict=False)
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
                return value
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON value found")


def parse_json_output(text: str, schema: dict, backend: str = "") -> Any:
    try:
        value = extract_json(text)
    except ValueError:
        snippet = text[:120].replace("\n", " ")
        raise LLMOutputError(f"model output is not JSON; it began {snippet!r}", backend=backend) from None
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as e:
        path = "/".join(str(p) for p in e.absolute_path) or "<root>"
        raise LLMOutputError(f"model JSON fails the schema at {path}: {e.message}", backend=backend) from None
    return value
