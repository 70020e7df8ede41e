"""`ol2purview replay`: send OpenLineage events from files through the real openlineage-python HTTP transport.

Paths may be event files (one JSON object, or a JSON array of them), JSON-lines files (`.jsonl`, `.ndjson`, or any
file holding one object per line) and folders (their `.json`/`.jsonl`/`.ndjson` files in natural name order, so
`2.json` comes before `10.json`; names starting with `_` or `.` are skipped). Events go out in that order, one request
each, exactly as `HttpTransport.emit` sends them (keys sorted, nulls dropped, optional gzip). Exit status 0 when every
event was accepted, 1 otherwise.

Without `--url`, events go to the `ol2purview serve` running on the data folder (found in `<data>/serve.json`), with
the function key it keeps in `<data>/host-keys.json`. A `--url` that carries a path (`http://host/api/v1/lineage`) is
split into the base URL and the endpoint.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

import requests
from openlineage.client.transport.http import HttpCompression, HttpConfig, HttpTransport
from tqdm import tqdm

from .catalog_options import add_target_arguments, function_endpoint

EVENT_SUFFIXES = (".json", ".jsonl", ".ndjson")
KEY_HEADER = "x-functions-key"
DEFAULT_ENDPOINT = "/api/v1/lineage"
MAX_LISTED_REFUSALS = 50


@dataclass(frozen=True)
class SourcedEvent:
    """One event read from disk (or the reason it could not be read), with where it came from."""

    source: str
    event: dict[str, Any] | None
    problem: str | None = None


@dataclass(frozen=True)
class Outcome:
    """What happened to one event: accepted, refused by the endpoint (status + its message), or not sent."""

    source: str
    accepted: bool
    status: int | None
    reason: str


def _natural_key(path: Path) -> list[object]:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", path.name)]


def event_files(paths: Iterable[Path]) -> list[Path]:
    """Files to read, in order: given files as given, folders expanded in natural name order."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = [
                p
                for p in path.iterdir()
                if p.is_file() and p.suffix.lower() in EVENT_SUFFIXES and not p.name.startswith(("_", "."))
            ]
            files.extend(sorted(found, key=_natural_key))
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return files


def read_events(path: Path) -> list[SourcedEvent]:
    """The events in one file: a JSON object, a JSON array of objects, or JSON lines."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as whole_error:
        lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(lines) < 2 or not _is_object(lines[0][1]):  # one document (an object or array over several lines)
            return [SourcedEvent(str(path), None, _not_json(text, whole_error))]
        return [_line_event(f"{path}:{number}", line) for number, line in lines]
    if isinstance(document, list):
        return [_checked(f"{path}[{index}]", item) for index, item in enumerate(document)]
    return [_checked(str(path), document)]


def _is_object(line: str) -> bool:
    """Whether one line is a whole JSON object: what every line of a JSON-lines file is (the first line of an
    indented event, `{` or `{"eventType": ...,`, is not)."""
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def _not_json(text: str, error: json.JSONDecodeError) -> str:
    """Why a file is not one JSON document: truncated when the JSON would go on past the end of the text (a copy cut
    short: the error is at its very end, or a string runs to it)."""
    if error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string"):
        return f"not JSON: truncated (the text ends at line {text.rstrip().count(chr(10)) + 1} before the JSON does)"
    return f"not JSON: {error.msg} at line {error.lineno}, column {error.colno}"


def _line_event(source: str, line: str) -> SourcedEvent:
    try:
        return _checked(source, json.loads(line))
    except json.JSONDecodeError as error:
        return SourcedEvent(source, None, f"not JSON: {error.msg}")


def _checked(source: str, document: Any) -> SourcedEvent:
    if not isinstance(document, dict):
        return SourcedEvent(source, None, f"not a JSON object but {type(document).__name__}")
    return SourcedEvent(source, document)


def make_transport(url: str, endpoint: str, key: str | None, gzip: bool, timeout: float, retries: int) -> HttpTransport:
    """The openlineage-python HTTP transport, configured as a producer would configure it for this endpoint."""
    config = HttpConfig.from_dict(
        {
            "type": "http",
            "url": url,
            "endpoint": endpoint,
            "timeout": timeout,
            "retry": {"total": retries, "connect": retries, "read": retries},
            "custom_headers": {KEY_HEADER: key} if key else {},
            **({"compression": HttpCompression.GZIP.value} if gzip else {}),
        }
    )
    return HttpTransport(config)


def _refusal_reason(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason
    if isinstance(body, dict) and "error" in body:
        path = body.get("path")
        return f"{body['error']} (at {path})" if path else str(body["error"])
    return json.dumps(body)[:300]


def send(events: list[SourcedEvent], transport: HttpTransport, progress: tqdm[Any]) -> list[Outcome]:
    """Send each event in order. Stops early if the endpoint cannot be reached; unsent events count as refused."""
    outcomes: list[Outcome] = []
    for index, item in enumerate(events):
        if item.event is None:
            outcomes.append(Outcome(item.source, False, None, f"not sent: {item.problem}"))
            progress.update()
            continue
        try:
            # emit serialises a plain dict as it does an event object (its annotation names only the event classes).
            response = transport.emit(item.event)  # type: ignore[arg-type]
            outcomes.append(Outcome(item.source, True, response.status_code, "accepted"))
        except requests.HTTPError as error:
            response = error.response
            outcomes.append(Outcome(item.source, False, response.status_code, _refusal_reason(response)))
            if response.status_code == 401:  # the key: every other event would be refused the same way
                reason = "not sent: the endpoint refused the key (401 above)"
                outcomes.extend(Outcome(rest.source, False, None, reason) for rest in events[index + 1 :])
                progress.update(len(events) - index)
                break
        except requests.exceptions.RetryError:
            outcomes.append(Outcome(item.source, False, None, "refused: server errors (5xx) until retries ran out"))
        except requests.RequestException as error:
            reason = f"not sent: cannot reach the endpoint ({type(error).__name__})"
            outcomes.extend(Outcome(rest.source, False, None, reason) for rest in events[index:])
            progress.update(len(events) - index)
            break
        progress.update()
    return outcomes


def summary(outcomes: list[Outcome], target: str) -> str:
    """The report printed at the end: totals, then each refused event with its status and reason."""
    refused = [o for o in outcomes if not o.accepted]
    lines = [f"{len(outcomes)} events to {target}: {len(outcomes) - len(refused)} accepted, {len(refused)} refused"]
    groups: list[list[Outcome]] = []  # consecutive refusals for the same reason are one line
    for outcome in refused:
        if groups and (groups[-1][0].status, groups[-1][0].reason) == (outcome.status, outcome.reason):
            groups[-1].append(outcome)
        else:
            groups.append([outcome])
    for group in groups[:MAX_LISTED_REFUSALS]:
        first = group[0]
        status = first.status if first.status is not None else "---"
        more = f" (and {len(group) - 1} more after it)" if len(group) > 1 else ""
        lines.append(f"  {status} {first.source}{more}: {first.reason}")
    if len(groups) > MAX_LISTED_REFUSALS:
        lines.append(f"  ... and {sum(len(g) for g in groups[MAX_LISTED_REFUSALS:])} more")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, help="event files, JSON-lines files or folders")
    parser.add_argument("--gzip", action="store_true", help="gzip each request body, as compression=gzip does")
    parser.add_argument("--endpoint", help=f"path of the endpoint (default: the --url's path, else {DEFAULT_ENDPOINT})")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per request (default 5, as Spark)")
    parser.add_argument(
        "--retries",
        type=int,
        default=5,
        help="retries on connection errors and 500/502/503/504 (default 5, the client's default)",
    )
    add_target_arguments(parser, endpoint=True)  # --url (may be the whole endpoint), --key (sent in x-functions-key)


@dataclass(frozen=True)
class Target:
    """Where events go: base URL, endpoint path and key."""

    url: str
    endpoint: str
    key: str | None

    @property
    def address(self) -> str:
        return self.url.rstrip("/") + "/" + self.endpoint.lstrip("/")


def split_url(url: str, endpoint: str | None) -> tuple[str, str]:
    """(base URL, endpoint): a path in `url` is the endpoint unless `--endpoint` names one (the transport joins them
    as an absolute path, so the base is scheme and host)."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if not path:
        return url.rstrip("/"), endpoint or DEFAULT_ENDPOINT
    return urlunsplit((parts.scheme, parts.netloc, "", "", "")), endpoint or path


def resolve_target(args: argparse.Namespace, env: Mapping[str, str]) -> Target:
    """--url/--key, else the running local host's URL and kept key. Raises ValueError saying what to pass."""
    url, key = function_endpoint(args, env)
    base, endpoint = split_url(url, args.endpoint)
    return Target(base, endpoint, key)


def run(args: argparse.Namespace) -> int:
    try:
        files = event_files(args.paths)
        target = resolve_target(args, os.environ)
    except (FileNotFoundError, ValueError) as error:
        print(f"ol2purview replay: {error}", file=sys.stderr)
        return 2
    events = [event for path in files for event in read_events(path)]
    transport = make_transport(target.url, target.endpoint, target.key, args.gzip, args.timeout, args.retries)
    try:
        with tqdm(total=len(events), unit="event", file=sys.stderr, mininterval=0.2) as progress:
            outcomes = send(events, transport, progress)
    finally:
        transport.close()
    print(summary(outcomes, target.address), flush=True)
    return 0 if outcomes and all(o.accepted for o in outcomes) else 1
