"""From file bytes to checked events: pure functions, the same on a Spark executor and in the single-process runner.

A file is one event (`.json`, the archive's `.json.gz`), a JSON array of events, or JSON lines (the OpenLineage
file transport, `.jsonl`, `.ndjson`; gzip or not, recognised by its magic bytes). Each event's bytes go through
the live path's own contract (`olparser.contract.read_event`): what it refuses is counted by reason and never stops
the backfill; what it accepts is keyed as the live path keys it (`olparser.runs.rules.run_key`: the runId, or a static
JobEvent or DatasetEvent by its declared job or dataset).
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator

from olparser.contract import IngestError, IntakeLimits, read_event
from olparser.runs.rules import run_key

GZIP_MAGIC = b"\x1f\x8b"
READ_CHUNK = 1 << 20
_HEX = re.compile(r"0x[0-9A-Fa-f]+")
_NUMBERS = re.compile(r"(?<!UTF-)\d+(?!x)")  # counts, sizes, offsets (the 8 of UTF-8 and the 0x kept)
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
REASON_CHARS = 160


@dataclass(frozen=True)
class AcceptedRecord:
    """An event the contract accepted: its run key, its (stripped) JSON and its eventTime as Unix seconds."""

    key: str
    event_json: bytes
    event_time: float | None


@dataclass(frozen=True)
class RefusedRecord:
    reason: str


Record = AcceptedRecord | RefusedRecord


def refusal_reason(error: IngestError) -> str:
    """A refusal grouped by kind: status and message with numbers and quoted text masked (no payload, short)."""
    message = _NUMBERS.sub("N", _HEX.sub("0xN", _QUOTED.sub("'…'", error.error)))
    return f"{error.status} {message}"[:REASON_CHARS]


def too_big(size: int, limit: int) -> IngestError:
    return IngestError(413, f"event of {size} bytes is larger than the limit of {limit} bytes", "body")


def event_instant(text: object) -> float | None:
    """An eventTime as Unix seconds (text without offset is UTC), or None when it cannot be read."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment).timestamp()


def read_record(body: bytes | IngestError, limits: IntakeLimits) -> Record:
    """One event's bytes through the contract."""
    if isinstance(body, IngestError):
        return RefusedRecord(refusal_reason(body))
    try:
        accepted = read_event(body, {}, limits)
    except IngestError as error:
        return RefusedRecord(refusal_reason(error))
    data = accepted.to_json_bytes()
    key = accepted.run_id or run_key(accepted.event)
    return AcceptedRecord(key, data, event_instant(accepted.event.get("eventTime")))


def in_time_range(record: AcceptedRecord, since: float | None, until: float | None) -> bool:
    """Whether the event's eventTime is in [since, until); an unreadable time is in any range that has no bounds."""
    if since is None and until is None:
        return True
    if record.event_time is None:
        return False
    return (since is None or record.event_time >= since) and (until is None or record.event_time < until)


def bodies_in_file(content: bytes, limit: int, share: tuple[int, int] = (0, 1)) -> Iterator[bytes | IngestError]:
    """The event bodies of one file: the whole file when it is one JSON document, else its non-empty lines.

    A file is read as JSON lines when its first non-empty line is a JSON document by itself and more follows;
    a JSON array becomes one body per element. A line or document over `limit` bytes becomes a 413 refusal, and a
    file that is not valid gzip one 400 refusal, without reading it further.

    `share` (j, k): the j-th of k readers of the file, which together give each body once: every reader decompresses
    and splits the whole file, and keeps lines j, j + k, j + 2k... (a single document and a refusal of the whole file:
    reader 0), so that the parsing after this read uses k cores on one unsplittable (gzip) file.
    """
    mine, readers = share
    stream = _opened(content)
    try:
        head = stream.read(limit + 1)
        first, _, rest = head.lstrip().partition(b"\n")
        if len(head) <= limit and not (rest.strip() and _is_json(first)):
            if mine == 0:
                yield from _document_bodies(head, limit)
            return
        if not _is_json(first) and len(head) > limit:
            if mine == 0:
                yield too_big(len(head), limit)
            return
        for number, body in enumerate(bodies_in_lines(_lines(io.BytesIO(head), stream), limit)):
            if number % readers == mine:
                yield body
    except (OSError, EOFError, zlib.error) as exc:
        if mine == 0:
            yield IngestError(400, f"file is not valid gzip data ({type(exc).__name__})", "body")


def bodies_in_path(path: Path, limit: int, share: tuple[int, int] = (0, 1)) -> Iterator[bytes | IngestError]:
    """The event bodies of the local file at `path` (see bodies_in_file)."""
    return bodies_in_file(path.read_bytes(), limit, share)


def bodies_in_lines(lines: Iterable[bytes | int], limit: int) -> Iterator[bytes | IngestError]:
    """Non-empty lines as bodies; an int stands for a line of that many bytes that was too long to keep."""
    for line in lines:
        if isinstance(line, int):
            yield too_big(line, limit)
        elif len(line) > limit:
            yield too_big(len(line), limit)
        elif line.strip():
            yield line


def _opened(content: bytes) -> io.BufferedIOBase:
    raw = io.BytesIO(content)
    return gzip.GzipFile(fileobj=raw, mode="rb") if content[:2] == GZIP_MAGIC else raw


def _is_json(text: bytes) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _document_bodies(document: bytes, limit: int) -> Iterator[bytes | IngestError]:
    """A JSON array of events is one body per element; anything else is one body (the contract judges it)."""
    if document.lstrip()[:1] == b"[":
        try:
            items = json.loads(document)
        except ValueError:
            items = None
        if isinstance(items, list):
            for item in items:
                body = json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
                yield body if len(body) <= limit else too_big(len(body), limit)
            return
    yield document


def _lines(*streams: io.BufferedIOBase, max_line: int = 64 << 20) -> Iterator[bytes | int]:
    """Lines of the streams read one after the other; a line longer than `max_line` is given as its length."""
    pending = b""
    overflow = 0
    for stream in streams:
        while chunk := stream.read(READ_CHUNK):
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for line in complete:
                if overflow:
                    yield overflow + len(line)
                    overflow = 0
                else:
                    yield line
            if len(pending) > max_line:
                overflow += len(pending)
                pending = b""
    if overflow:
        yield overflow + len(pending)
    elif pending:
        yield pending
