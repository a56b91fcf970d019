"""What a W&B run already holds: read back from its offline run files.

wandb 0.31 writes an offline run as ``wandb/offline-run-<time>-<id>/run-<id>.wandb`` from
its Go core and ships no Python reader (nor ``wandb sync --view``). The file is W&B's
transaction log: a 7-byte header (``:W&B``, magic 0xBEE1, version 0) and LevelDB-log
framed records (32 KiB blocks, each record a CRC32, a length and a type: full, or
first/middle/last pieces of a long one), each one a
``wandb.proto.wandb_internal_pb2.Record``, decoded here with wandb's own schema (what
``wandb sync`` uploads).

A resumed run needs this: the episodes between its checkpoint and the interruption were
logged to W&B already and are replayed, and W&B can neither delete nor rewind history
offline (``resume_from``/rewind is a server feature, in preview, and needs monotonic
``_step``s where this run plots against ``episode``), so `RunLoggers` skips, per kind,
the episodes W&B already has (`logged_episodes`).
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any, Iterator, Mapping

BLOCK = 32 * 1024
HEADER = 7  # the file header and each record header are both 7 bytes
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


class TruncatedLog(ValueError):
    """The transaction log ends in the middle of a record (its writer was killed)."""


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
        if len(body) < length:
            raise TruncatedLog(f"W&B record at byte {pos}: {len(body)} of {length} bytes")
        if zlib.crc32(bytes([kind]) + body) & 0xFFFFFFFF != crc:
            raise ValueError(f"W&B record at byte {pos}: checksum mismatch")
        yield kind, body
        pos += HEADER + length


def read_records(path: str | Path, *, tolerate_truncation: bool = False) -> list[Any]:
    """Every record of the run file, as ``wandb_internal_pb2.Record`` messages.
    ``tolerate_truncation``: a file cut in a record (a killed run) gives the records before."""
    from wandb.proto import wandb_internal_pb2 as pb

    out: list[Any] = []
    pieces = b""
    frames = _frames(Path(path).read_bytes())
    while True:
        try:
            kind, body = next(frames)
        except StopIteration:
            break
        except TruncatedLog:
            if tolerate_truncation:
                break
            raise
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
        record = pb.Record()  # type: ignore[attr-defined]  # protobuf classes are made at import
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


def row_kinds(row: Mapping[str, Any]) -> set[str]:
    """The kinds (``train``, ``eval``) of the ``<kind>/<name>`` metrics in a logged row."""
    return {key.split("/", 1)[0] for key in row if "/" in key and not key.startswith("_")}


def logged_episodes(
    run_dir: str | os.PathLike[str], run_id: str, *, exclude: str | os.PathLike[str] | None = None
) -> dict[str, int]:
    """{kind: last episode} that the offline files of W&B run ``run_id`` under
    ``run_dir/wandb`` hold (every earlier segment of a resumed run; ``exclude``: the
    current segment's folder). A file W&B never got to write, or that is not a
    transaction log, holds nothing; one cut by a kill holds the records before the cut."""
    last: dict[str, int] = {}
    skip = Path(exclude).resolve() if exclude is not None else None
    for file in sorted(Path(run_dir).glob(f"wandb/offline-run-*-{run_id}/run-{run_id}.wandb")):
        if skip is not None and file.parent.resolve() == skip:
            continue
        try:
            records = read_records(file, tolerate_truncation=True)
        except (OSError, ValueError):
            continue
        for row in history_rows(records):
            episode = row.get("episode")
            if not isinstance(episode, (int, float)):
                continue
            for kind in row_kinds(row):
                last[kind] = max(last.get(kind, int(episode)), int(episode))
    return last
