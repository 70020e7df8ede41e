"""The history endpoints' answers, from query parameters to (status, JSON body): pure over a `HistoryReader`.

    GET /api/ol2purview/lineage?qualifiedName=QN[&since=T][&until=T][&direction=D][&depth=N][&column=C]
    GET /api/ol2purview/runs/{runId}

Times are ISO 8601 (a date, or a date-time; UTC when it has no offset), `now`, or a duration before now (`-24h`,
`-7d`, `-30m`); `since` may also be `last-run`: the window of the newest run that read or wrote the dataset.
Defaults: `until` now, `since` 24 hours before `until`, direction `both`, depth 3. A bad parameter is a 400 whose
`path` names it; a run the history does not hold is a 404.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Mapping

from olparser.jsontypes import JSON

from .window import DIRECTIONS, HistoryReader, WalkLimits, Window, lineage_in_window, run_detail

DEFAULT_DEPTH = 3
DEFAULT_WINDOW_SECONDS = 24 * 3600
LAST_RUN = "last-run"
MAX_TEXT = 4096  # qualifiedName, column (as MAX_NAME_CHARS at intake)
MAX_RUN_ID = 256
_RELATIVE = re.compile(r"^-(\d{1,6})([mhd])$")
_UNITS = {"m": 60, "h": 3600, "d": 86400}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class QueryError(ValueError):
    """A parameter that cannot be used; `parameter` names it (the answer's `path`)."""

    def __init__(self, parameter: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.status = status

    def to_json(self) -> JSON:
        return {"error": str(self), "path": self.parameter}


@dataclass(frozen=True)
class LineageQuery:
    qualified_name: str
    window: Window | None  # None: the window of the newest run (since=last-run)
    until_given: float | None
    direction: str
    depth: int
    column: str | None


def parse_time(text: str, now: float, parameter: str) -> float:
    """A time parameter as Unix seconds (see the module docstring)."""
    value = text.strip()
    if value == "now":
        return now
    relative = _RELATIVE.match(value)
    if relative:
        return now - int(relative.group(1)) * _UNITS[relative.group(2)]
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise QueryError(
            parameter,
            f"{parameter} must be an ISO 8601 date or date-time, now, or a duration such as "
            f"-24h or -7d; got {value[:40]!r}",
        ) from None
    return (moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment).timestamp()


def _text(params: Mapping[str, str], name: str, required: bool = False) -> str | None:
    value = params.get(name)
    if value is None or value == "":
        if required:
            raise QueryError(name, f"give ?{name}=... (the dataset's qualifiedName)")
        return None
    if len(value) > MAX_TEXT:
        raise QueryError(name, f"{name} is {len(value)} characters long, more than the limit of {MAX_TEXT}")
    if _CONTROL.search(value):
        raise QueryError(name, f"{name} contains a control character")
    return value


def parse_lineage_query(params: Mapping[str, str], now: float, limits: WalkLimits = WalkLimits()) -> LineageQuery:
    qualified_name = _text(params, "qualifiedName", required=True)
    assert qualified_name is not None
    direction = params.get("direction") or "both"
    if direction not in DIRECTIONS:
        raise QueryError("direction", f"direction must be one of {', '.join(DIRECTIONS)}, got {direction[:40]!r}")
    raw_depth = params.get("depth") or str(DEFAULT_DEPTH)
    if not raw_depth.isdigit() or not 1 <= int(raw_depth) <= limits.max_depth:
        raise QueryError("depth", f"depth must be a whole number from 1 to {limits.max_depth}, got {raw_depth[:40]!r}")
    until = parse_time(params["until"], now, "until") if params.get("until") else None
    since_text = params.get("since") or ""
    window = None
    if since_text != LAST_RUN:
        end = until if until is not None else now
        since = parse_time(since_text, now, "since") if since_text else end - DEFAULT_WINDOW_SECONDS
        if since >= end:
            raise QueryError("since", "since must be before until")
        window = Window(since, end)
    return LineageQuery(qualified_name, window, until, direction, int(raw_depth), _text(params, "column"))


def last_run_window(reader: HistoryReader, qualified_name: str, now: float) -> Window:
    """The window of the newest run that read or wrote the dataset: from its start to its end (or now, while it has
    not ended)."""
    newest = reader.newest_access(qualified_name)
    if newest is None:
        raise QueryError("qualifiedName", _never_seen(qualified_name), status=404)
    start, end = newest.run.start, newest.run.end if newest.run.end is not None else max(now, newest.run.start)
    return Window(start, max(end, start + 0.001))


def lineage_answer(
    reader: HistoryReader, params: Mapping[str, str], now: float, limits: WalkLimits = WalkLimits()
) -> tuple[int, JSON]:
    """GET /api/ol2purview/lineage: (200, the graph) or (400/404, {"error", "path"})."""
    try:
        query = parse_lineage_query(params, now, limits)
        window = query.window or last_run_window(reader, query.qualified_name, now)
    except QueryError as error:
        return error.status, error.to_json()
    answer = lineage_in_window(
        reader, query.qualified_name, window, query.direction, query.depth, column=query.column, limits=limits
    )
    if (
        not answer.get("processes") and reader.newest_access(query.qualified_name) is None
    ):  # a name the history never saw
        return 404, QueryError("qualifiedName", _never_seen(query.qualified_name), status=404).to_json()
    return 200, answer


def _never_seen(qualified_name: str) -> str:
    return f"no run in the history read or wrote {qualified_name}"


def run_answer(reader: HistoryReader, run_id: str) -> tuple[int, JSON]:
    """GET /api/ol2purview/runs/{runId}: (200, the run with its accesses and metadata) or (400/404, error)."""
    if not run_id or len(run_id) > MAX_RUN_ID or _CONTROL.search(run_id):
        return 400, {"error": f"runId must be 1 to {MAX_RUN_ID} characters without control characters", "path": "runId"}
    record = reader.run(run_id)
    if record is None:
        return 404, {
            "error": f"the run history holds no run {run_id} (runs are kept RUN_HISTORY_DAYS days)",
            "path": "runId",
        }
    return 200, run_detail(record)
