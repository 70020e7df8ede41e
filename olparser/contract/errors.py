"""The one error type of the contract: a client problem with an HTTP status, a message and the JSON path it is about."""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

PREVIEW_CHARS = 80
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


class IngestError(Exception):
    """The request or one event in it is refused: 400 (bad event), 413 (too large) or 415 (not JSON / unknown encoding).

    `error` is a short human message that names the problem, `path` the JSON path it is about ("$.run.runId"),
    "body" for problems with the bytes themselves, or "" when it is about the request as a whole.
    """

    def __init__(self, status: int, error: str, path: str = "") -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.path = path

    def to_json(self) -> dict[str, str]:
        return {"error": self.error, "path": self.path}

    def __repr__(self) -> str:
        return f"IngestError({self.status}, {self.error!r}, {self.path!r})"


def json_path(parts: Iterable[Any], root: str = "$") -> str:
    """JSONPath of keys and indexes under `root`: ("run", "runId") -> "$.run.runId", ("inputs", 0) -> "$.inputs[0]".

    Keys that are not plain identifiers are quoted (["spark.logicalPlan"]); keys over 80 characters are shortened.
    """
    out = [root]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.match(part) and len(part) <= PREVIEW_CHARS:
            out.append(f".{part}")
        else:
            out.append(f"[{preview(part)}]")
    return "".join(out)


def preview(value: Any) -> str:
    """A short rendering of a value for an error message: strings truncated, containers named, never echoed whole."""
    if isinstance(value, str):
        if len(value) > PREVIEW_CHARS:
            return json.dumps(value[:PREVIEW_CHARS], ensure_ascii=True)[:-1] + '..." ' + f"({len(value)} chars)"
        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        text = repr(value)
        return f"number {text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + '...'}"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__
