"""Read a W&B offline run file (``offline-run-*/run-<id>.wandb``) back into records.

wandb 0.31 writes the file from its Go core and no longer ships a Python reader (nor
``wandb sync --view``); the file is W&B's transaction log: a 7-byte header (``:W&B``,
magic 0xBEE1, version 0) and LevelDB-log framed records (32 KiB blocks, each record a
CRC32, a length and a type: full, or first/middle/last pieces of a long one), each one a
``wandb.proto.wandb_internal_pb2.Record``. Decoding with wandb's own protobuf schema is
what ``wandb sync`` uploads, so a test that reads these records sees what W&B will see.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any, Iterator

BLOCK = 32 * 1024
HEADER = 7  # the file header and each record header are both 7 bytes
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def _frames(data: bytes) -> Iterator[tuple[int, bytes]]:
    if data[:4] != b":W&B" or struct.unpack("<H", data[4:6])[0] != 0xBEE1:
        raise ValueError("not a W&B transaction log (bad header)")
    pos = HEADER
    while pos + HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # a block's tail too short for a header is padding
            pos += left
            continue
        crc, length, kind = struct.unpack("<IHB", data[pos : pos + HEADER])
        body = data[pos + HEADER : pos + HEADER + length]
        if kind == 0 and length == 0:  # zero padding
            pos += left
            continue
        if zlib.crc32(bytes([kind]) + body) & 0xFFFFFFFF != crc:
            raise ValueError(f"W&B record at byte {pos}: checksum mismatch")
        yield kind, body
        pos += HEADER + length


def read_records(path: str | Path) -> list[Any]:
    """Every record of the run file, as ``wandb_internal_pb2.Record`` messages."""
    from wandb.proto import wandb_internal_pb2 as pb

    out, pieces = [], b""
    for kind, body in _frames(Path(path).read_bytes()):
        if kind == FULL:
            payload = body
        elif kind == FIRST:
            pieces = body
            continue
        elif kind == MIDDLE:
            pieces += body
            continue
        elif kind == LAST:
            payload, pieces = pieces + body, b""
        else:
            raise ValueError(f"unknown W&B record type {kind}")
        record = pb.Record()
        record.ParseFromString(payload)
        out.append(record)
    return out


def history_rows(records: list[Any]) -> list[dict[str, Any]]:
    """``run.log`` rows as {key: decoded value}; W&B flattens a media value's fields into
    keys of their own (``eval/actions/path``, ``eval/actions/_type``, ...)."""
    rows = []
    for r in records:
        if r.WhichOneof("record_type") == "history":
            rows.append(
                {(item.key or "/".join(item.nested_key)): json.loads(item.value_json) for item in r.history.item}
            )
    return rows


def offline_run_file(folder: Path) -> Path:
    """The one offline run file W&B wrote under ``folder`` (``wandb/offline-run-*/run-*.wandb``)."""
    files = list(Path(folder).glob("wandb/offline-run-*/run-*.wandb"))
    assert len(files) == 1, files
    return files[0]


def records_of(records: list[Any], kind: str) -> list[Any]:
    """The payloads of the records of one type (``run``, ``metric``, ``history``, ...)."""
    return [getattr(r, kind) for r in records if r.WhichOneof("record_type") == kind]
