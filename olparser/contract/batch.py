"""The answer to POST /lineage/batch (OpenLineage.yml): 204 when every event was taken, else 200 with details."""

from __future__ import annotations

from typing import Any, Sequence

from olparser.contract.errors import IngestError
from olparser.contract.reader import AcceptedEvent

SERVER_ERROR_REASON = "Server error"


def batch_response(outcomes: Sequence[AcceptedEvent | BaseException]) -> tuple[int, dict[str, Any] | None]:
    """(HTTP status, JSON body or None) for the outcome of each event of a batch, in order.

    An AcceptedEvent counts as successful. An IngestError is a failure that is not retriable (the same event would be
    refused again); any other exception (e.g. the queue was unreachable) is retriable and reported only as
    "Server error", never with its text.
    """
    failed = []
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, AcceptedEvent):
            continue
        if isinstance(outcome, IngestError):
            failed.append({"index": index, "reason": outcome.error, "retriable": False})
        else:
            failed.append({"index": index, "reason": SERVER_ERROR_REASON, "retriable": True})
    if not failed:
        return 204, None
    retriable = sum(1 for item in failed if item["retriable"])
    return 200, {
        "status": "partial_success",
        "summary": {
            "received": len(outcomes),
            "successful": len(outcomes) - len(failed),
            "failed": len(failed),
            "retriable": retriable,
            "non_retriable": len(failed) - retriable,
        },
        "failed_events": failed,
    }
