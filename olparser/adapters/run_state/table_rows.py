"""Rows in Azure Table storage under optimistic concurrency: the one helper the run state and the run history share.

Every read-modify-write reads a row with its ETag, then creates it only if absent (409 otherwise), replaces or
deletes it only if unchanged (If-Match; 412 otherwise), or submits an entity-group transaction (one partition, at
most 100 operations, all or nothing); any of those failures is a `TableConflict` (each store has its own subclass),
and `retried` runs the whole attempt again, reading afresh. Also: values split over binary properties (a property
holds at most 64 KiB), and RowKeys from arbitrary text.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from typing import Any, Callable, Hashable, Mapping, TypeVar

from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableClient, TableEntity, UpdateMode
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

PROPERTY_BYTES = 64_000  # a binary property holds at most 64 KiB
_SAFE_ROW_KEY = re.compile(r"^[A-Za-z0-9._:@=+-]{1,512}$")
T = TypeVar("T")


class TableConflict(RuntimeError):
    """Another writer changed a row between our read and our write (the attempt is retried)."""


def retried(attempt: Callable[[], T], conflict: type[TableConflict], max_attempts: int) -> T:
    """Run `attempt` until it raises no `conflict`, at most `max_attempts` times (short random waits between)."""
    retrying = Retrying(
        retry=retry_if_exception_type(conflict),
        reraise=True,
        stop=stop_after_attempt(max_attempts),
        wait=wait_random_exponential(multiplier=0.005, max=0.25),
    )
    return retrying(attempt)


def unchanged(read: Mapping[str, Any]) -> dict[str, Any]:
    """The condition that a row is still as `read` (its ETag)."""
    etag = read.metadata["etag"]  # type: ignore[attr-defined]
    return {"etag": etag, "match_condition": MatchConditions.IfNotModified}


def put_op(row: TableEntity, read: TableEntity | None) -> tuple[Any, ...]:
    """The batch operation that creates `row` (nothing was read) or replaces what was read if unchanged."""
    if read is None:
        return ("create", row)
    return ("update", row, {"mode": UpdateMode.REPLACE, **unchanged(read)})


def read_row(table: TableClient, keys: Mapping[str, str], **options: Any) -> TableEntity | None:
    """The row, with its ETag; None when absent."""
    try:
        return table.get_entity(keys["PartitionKey"], keys["RowKey"], **options)
    except ResourceNotFoundError:
        return None


def write_row(
    table: TableClient,
    entity: TableEntity,
    etag: str | None,
    conflict: type[TableConflict],
    *,
    mode: UpdateMode = UpdateMode.REPLACE,
) -> str | None:
    """Create `entity` (no `etag`: nothing was read) or replace the row (`mode` MERGE: change the properties `entity`
    has) if it still has `etag`; its new ETag. `conflict` when the row was created, changed or deleted since."""
    try:
        if etag is None:
            answer = table.create_entity(entity)
        else:
            answer = table.update_entity(entity, mode=mode, etag=etag, match_condition=MatchConditions.IfNotModified)
    except (ResourceExistsError, ResourceNotFoundError) as error:  # 409: created since our read; 404: deleted
        raise conflict() from error
    except HttpResponseError as error:
        if error.status_code == 412:  # changed by another writer since our read
            raise conflict() from error
        raise
    return (answer or {}).get("etag")


def delete_row(table: TableClient, read: TableEntity, conflict: type[TableConflict]) -> None:
    """Delete the row if it is still as `read` (absent: nothing to do)."""
    try:
        table.delete_entity(read["PartitionKey"], read["RowKey"], **unchanged(read))
    except HttpResponseError as error:
        if error.status_code == 412:
            raise conflict() from error
        raise


def submit(table: TableClient, operations: list[Any], conflict: type[TableConflict]) -> list[Any]:
    """One entity-group transaction (one partition): all or nothing; the answers of its operations (their ETags).
    `conflict` when a condition failed (a row changed, created or deleted since it was read)."""
    try:
        return list(table.submit_transaction(operations) or [])
    except HttpResponseError as error:  # TableTransactionError included
        if error.status_code in (404, 409, 412):
            raise conflict() from error
        raise


def put_blob(entity: TableEntity, name: str, data: bytes) -> None:
    """Store `data` in binary properties `{name}_0`, `{name}_1`... (a property holds at most 64 KiB) and
    `{name}_parts`, replacing what `entity` held under that name."""
    for i in range(int(entity.get(f"{name}_parts", 0))):
        entity.pop(f"{name}_{i}", None)
    parts = [data[i : i + PROPERTY_BYTES] for i in range(0, len(data), PROPERTY_BYTES)]
    entity[f"{name}_parts"] = len(parts)
    entity.update({f"{name}_{i}": part for i, part in enumerate(parts)})


def get_blob(entity: TableEntity | Mapping[str, Any] | None, name: str) -> bytes | None:
    """What `put_blob` stored under `name`, or None."""
    parts = int(entity.get(f"{name}_parts", 0)) if entity is not None else 0
    if parts == 0:
        return None
    return b"".join(bytes(entity[f"{name}_{i}"]) for i in range(parts))  # type: ignore[index]


def safe_row_key(key: str) -> str:
    """`key` itself when Table storage allows it as a RowKey, else `sha256-<hex digest>`."""
    return key if _SAFE_ROW_KEY.match(key) else "sha256-" + hashlib.sha256(key.encode()).hexdigest()


def with_etag(row: Mapping[str, Any], etag: str | None) -> TableEntity:
    """A copy of `row` as written with `etag` (for a next conditional write without reading it again)."""
    written = TableEntity(row)
    written._metadata = {"etag": etag, "timestamp": None}
    return written


R = TypeVar("R", bound=Hashable)


def remember_row(rows: OrderedDict[R, TableEntity], key: R, row: TableEntity | None, limit: int) -> None:
    """Keep `row` as what `key`'s row now is, in the bounded memory `rows` (the least recently stored first, at most
    `limit`); None, or a row without an ETag (so no conditional write can start from it),
    forgets it. The caller holds the lock that guards `rows`."""
    rows.pop(key, None)
    if row is not None and row.metadata.get("etag"):
        rows[key] = row
        while len(rows) > limit:
            rows.popitem(last=False)
