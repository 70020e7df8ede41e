"""Helpers for the contract tests: a valid minimal event to break field by field, and readers that return errors."""

from __future__ import annotations

import copy
import json
from typing import Any, Callable

import pytest

from olparser.contract import IngestError, IntakeLimits, read_event

RUN_ID = "019127df-0850-72bc-b214-b255290588a6"
JSON_HEADERS = {"Content-Type": "application/json"}


def minimal_event(**changes: Any) -> dict[str, Any]:
    """A valid RunEvent with one input and one output; keyword arguments replace top-level fields."""
    event: dict[str, Any] = {
        "eventTime": "2024-08-06T13:26:54.34Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "eventType": "COMPLETE",
        "run": {"runId": RUN_ID, "facets": {}},
        "job": {"namespace": "default", "name": "etl.insert_into.orders"},
        "inputs": [{"namespace": "dbfs", "name": "/mnt/raw/orders", "facets": {}}],
        "outputs": [{"namespace": "dbfs", "name": "/mnt/curated/orders", "facets": {}}],
    }
    event.update(copy.deepcopy(changes))
    return event


def body_of(event: Any) -> bytes:
    return json.dumps(event).encode("utf-8")


def refusal(
    body: bytes,
    headers: dict[str, str] | None = None,
    limits: IntakeLimits | None = None,
    reader: Callable[..., Any] = read_event,
) -> IngestError:
    """The IngestError a reader raises for `body` (fails the test when it accepts)."""
    with pytest.raises(IngestError) as caught:
        reader(body, JSON_HEADERS if headers is None else headers, limits or IntakeLimits())
    return caught.value
