"""The intake: request bytes in, accepted events (validated, stripped, with warnings) or an IngestError out."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping

import orjson

from olparser.contract.body import decode_body, indented_within
from olparser.contract.counts import check_counts
from olparser.contract.errors import IngestError, json_path
from olparser.contract.facets import drop_malformed_facets
from olparser.contract.limits import IntakeLimits
from olparser.contract.schema import ContractValidators, contract_validators
from olparser.contract.strip import facet_maps, strip_facets
from olparser.contract.times import clamp_event_time


@dataclass(frozen=True)
class AcceptedEvent:
    """One event that passed the contract, heavy facets stripped and malformed read facets dropped."""

    event: dict[str, Any]
    kind: str  # "RunEvent" | "DatasetEvent" | "JobEvent"
    run_id: str | None
    event_type: str | None
    warnings: tuple[str, ...] = ()
    size_bytes: int = -1  # size of to_json_bytes(); computed when not given
    _json: bytes | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        encoded = self._json
        if encoded is None:
            encoded = encode_event(self.event)
            object.__setattr__(self, "_json", encoded)
        if self.size_bytes < 0:
            object.__setattr__(self, "size_bytes", len(encoded))

    def to_json_bytes(self) -> bytes:
        """Compact UTF-8 JSON of `event` (encoded once)."""
        # Why the type error is ignored: encoded in __post_init__ (never None after it)
        return self._json  # type: ignore[return-value]


def read_event(
    body: bytes, headers: Mapping[str, str], limits: IntakeLimits, *, received_at: datetime | None = None
) -> AcceptedEvent:
    """Read the body of a single-event request (POST /lineage). Raises IngestError (400/413/415).

    `received_at` (default: now) is the moment the request arrived; later eventTimes are clamped to it plus
    `limits.max_event_time_skew_seconds`.
    """
    decoded = decode_body(body, headers, limits)
    if isinstance(decoded.value, list):
        message = "expected one event as a JSON object, got an array: send arrays to the batch endpoint"
        raise IngestError(400, message, "$")
    return accept_event(
        decoded.value,
        limits,
        decoded.warnings,
        received_at=received_at,
        by_orjson=decoded.by_orjson,
        control_free=decoded.control_free,
        within_depth=decoded.within_depth,
    )


def read_batch(
    body: bytes, headers: Mapping[str, str], limits: IntakeLimits, *, received_at: datetime | None = None
) -> list[AcceptedEvent | IngestError]:
    """Read the body of a batch request: a JSON array of events or {"events": [...]}.

    Problems with the body as a whole raise IngestError; each event gets its own result, in order: an AcceptedEvent,
    or the IngestError that refused it (its path rooted at the event, e.g. "$[3].run.runId").
    """
    decoded = decode_body(body, headers, limits)
    value = decoded.value
    if isinstance(value, dict) and "events" in value:
        items, prefix = value["events"], "$.events"
        if not isinstance(items, list):
            raise IngestError(400, "$.events must be an array of events", "$.events")
    elif isinstance(value, list):
        items, prefix = value, "$"
    else:
        raise IngestError(400, 'expected a JSON array of events or an object {"events": [...]}', "$")
    if not items:
        raise IngestError(400, "batch is empty: send at least one event", prefix)
    results: list[AcceptedEvent | IngestError] = []
    received_at = received_at or datetime.now(timezone.utc)
    for index, item in enumerate(items):
        try:
            results.append(
                accept_event(
                    item,
                    limits,
                    decoded.warnings,
                    f"{prefix}[{index}]",
                    received_at=received_at,
                    by_orjson=decoded.by_orjson,
                    control_free=decoded.control_free,
                    within_depth=decoded.within_depth,
                )
            )  # an item nests less than the body
        except IngestError as exc:
            results.append(exc)
    return results


def accept_event(
    value: Any,
    limits: IntakeLimits,
    warnings: tuple[str, ...] = (),
    prefix: str = "$",
    *,
    received_at: datetime | None = None,
    by_orjson: bool = False,
    control_free: bool = False,
    within_depth: bool = False,
) -> AcceptedEvent:
    """Strip, check depth and counts, validate, clean and date one parsed event; `prefix` is its JSON path in the
    body. Each step is linear in the event's size; counts over a limit are refused before validation reads them.
    `by_orjson`: orjson parsed it, so orjson encodes it (as `encode_event` would, floats written in their shortest
    form either way: 1e-05 there, 1e-5 here). `control_free`: no string in it holds a control character.
    `within_depth`: known to nest no deeper than the limit (stripping only removes)."""
    if type(value) is not dict:
        raise IngestError(400, f"{prefix} must be an OpenLineage event object", prefix)
    maps = list(facet_maps(value))  # the same maps all along: stripping and dropping delete facets, not maps
    strip_facets(value, limits.stripped_facets, maps)
    if not within_depth and not depth_within(value, limits.max_depth):
        check_depth(value, limits.max_depth, prefix)
    kind = event_kind(value, prefix)
    check_counts(value, limits, prefix, maps)
    validators = validators_for(limits)
    problem = validators.events[kind].problem(value, (), prefix, control_free)
    if problem is not None:
        raise IngestError(400, *problem)
    notes = list(warnings)
    notes += drop_malformed_facets(value, validators, prefix, control_free, maps)
    clamped = clamp_event_time(
        value, received_at or datetime.now(timezone.utc), limits.max_event_time_skew_seconds, prefix
    )
    if clamped is not None:
        notes.append(clamped)
    is_run = kind == "RunEvent"
    if not is_run and "eventType" in value:
        notes.append(f"{prefix} has eventType but no run: read as a static {kind}, eventType ignored")
    return AcceptedEvent(
        event=value,
        kind=kind,
        run_id=value["run"]["runId"] if is_run else None,
        event_type=value.get("eventType") if is_run else None,
        warnings=tuple(notes),
        _json=orjson.dumps(value) if by_orjson else None,
    )


def validators_for(limits: IntakeLimits) -> ContractValidators:
    """The contract compiled for these limits (once per set of limits: the first call takes about a second)."""
    return contract_validators(
        limits.max_string_chars,
        datasets=limits.max_datasets_per_event,
        columns=limits.max_schema_columns,
        mounts=limits.max_mount_points,
        input_fields=limits.max_column_lineage_input_fields,
    )


def event_kind(event: dict[str, Any], prefix: str = "$") -> str:
    """RunEvent when it has a run (or only an eventType), DatasetEvent when it has a dataset, JobEvent when it has a
    job and no run; so that validation can report errors against one definition instead of the spec's oneOf."""
    if "run" in event:
        return "RunEvent"
    if "dataset" in event:
        return "DatasetEvent"
    if "job" in event:
        return "JobEvent"
    if "eventType" in event:
        return "RunEvent"
    expected = "expected run and job (RunEvent), job (JobEvent) or dataset (DatasetEvent)"
    raise IngestError(400, f"{prefix} is not an OpenLineage event: {expected}", prefix)


def check_depth(event: dict[str, Any], max_depth: int, prefix: str = "$") -> None:
    """400 when objects/arrays nest deeper than `max_depth` (the event itself is depth 1). Iterative: no recursion."""
    stack: list[tuple[Any, int]] = [(event, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            path = json_path(_path_to_depth(event, max_depth + 1), prefix)
            raise IngestError(400, f"{path} is nested deeper than the limit of {max_depth} levels", path)
        for child in node.values() if type(node) is dict else node:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))


def depth_within(event: dict[str, Any], max_depth: int) -> bool:
    """True when nothing in `event` nests deeper than `max_depth` (see body.indented_within); False when unsure or
    when orjson cannot write the event; then `check_depth` decides (and names the place)."""
    try:
        text = orjson.dumps(event, option=orjson.OPT_INDENT_2)
    except (orjson.JSONEncodeError, TypeError):  # an integer orjson does not write, or deeper than it writes
        return False
    return indented_within(text, max_depth)


def _path_to_depth(event: dict[str, Any], depth: int) -> tuple[str | int, ...]:
    """The path of the first container found at `depth` (only called once a violation is known)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(event, ())]
    while stack:
        node, path = stack.pop()
        if len(path) + 1 >= depth:
            return path
        children = node.items() if type(node) is dict else enumerate(node)
        stack.extend((child, (*path, key)) for key, child in children if type(child) in (dict, list))
    return ()


def encode_event(event: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON. Unpaired surrogate escapes (`\\ud800`: valid JSON, not Unicode) become U+FFFD, so that
    every later stage (queue, run state, catalog) receives valid Unicode."""
    text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")
