"""The run-state table and its row primitives (Azure Table storage): what the store (`table_store.py`) and its parts
(`table_owned.py`, `table_due.py`, `table_side.py`) are given and share. The run rows' keys (PartitionKey = 2 hex
digits of sha256 of the run's key, RowKey = the key or its hash), conditional reads, writes, deletes and
transactions, the retry of a whole read-modify-write, the ownership part of a run's row (claimed keys, pending
intentions), and the memory of run rows that a `folding` scope (a `RunSession`) reads and writes."""

from __future__ import annotations

import hashlib
import json
import threading
import zlib
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, TypeVar

from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableClient, TableEntity

from olparser.adapters.run_state.table_rows import (
    TableConflict,
    delete_row,
    get_blob,
    put_blob,
    read_row,
    remember_row,
    retried,
    safe_row_key,
    submit,
    with_etag,
    write_row,
)
from olparser.runs import ledger
from olparser.runs.ledger import Key, sorted_keys

T = TypeVar("T")
RECENT_ROWS = 64  # run rows remembered after their scope, for the next merge of the run (its write is conditional)


class RunStateConflict(TableConflict):
    """Another writer changed the entity between our read and our write (retried up to max_attempts times)."""


class RunRows:
    """The run-state table (`table`, `ttl_seconds`, `temporary_seconds`) and its conditional row operations."""

    def __init__(self, table: TableClient, *, ttl_seconds: float, temporary_seconds: float, max_attempts: int) -> None:
        self.table = table
        self.ttl_seconds = ttl_seconds
        self.temporary_seconds = temporary_seconds
        self.max_attempts = max_attempts
        self._folding: dict[tuple[str, str], int] = {}  # run rows in a `folding` scope (how many scopes deep)
        self._folded: dict[tuple[str, str], TableEntity | None] = {}  # ... as the scope last read or wrote them
        self._recent: OrderedDict[tuple[str, str], TableEntity] = OrderedDict()  # ... as scopes left them
        self._lock = threading.Lock()

    # --- the retry, conditional writes and transactions ---------------------------------------------------------
    def retried(self, attempt: Callable[[], T]) -> T:
        """Run the read-modify-write `attempt` again on a conflict (at most `max_attempts` times)."""
        return retried(attempt, RunStateConflict, self.max_attempts)

    def read_keys(self, keys: dict[str, str]) -> TableEntity | None:
        return read_row(self.table, keys)

    def write(self, entity: TableEntity, read: TableEntity | None) -> TableEntity:
        """Create `entity` if nothing was read, else replace what was read if nobody changed it since. Returns
        `entity` as written (with its new ETag, for a next compare-and-swap without reading it again)."""
        row = (entity["PartitionKey"], entity["RowKey"])
        try:
            etag = write_row(self.table, entity, read.metadata["etag"] if read is not None else None, RunStateConflict)
        except (RunStateConflict, HttpResponseError):  # what the row now is is unknown
            self._fold(row, None, forget=True)
            raise
        written = with_etag(entity, etag)
        self._fold(row, written, forget=etag is None)
        return written

    def delete(self, read: TableEntity) -> None:
        delete_row(self.table, read, RunStateConflict)

    def transact(self, operations: list[Any]) -> list[Any]:
        """One batch in one partition: all or nothing (any conflict: retry the whole read-modify-write). The answers
        of its operations (their ETags)."""
        return submit(self.table, operations, RunStateConflict)

    # --- the run's row ------------------------------------------------------------------------------------------
    @staticmethod
    def keys(run_id: str) -> dict[str, str]:
        return {"PartitionKey": hashlib.sha256(run_id.encode()).hexdigest()[:2], "RowKey": safe_row_key(run_id)}

    def read(self, run_id: str, *, fresh: bool = False) -> TableEntity | None:
        """The run's row; in a `folding` scope, as the scope last read or wrote it (unless `fresh`)."""
        keys = self.keys(run_id)
        row = (keys["PartitionKey"], keys["RowKey"])
        with self._lock:
            if row not in self._folding:
                row = None  # type: ignore[assignment]
            elif not fresh and row in self._folded:
                return self._folded[row]
        entity = self.read_keys(keys)
        if row is not None:
            self._fold(row, entity)
        return entity

    def copied_row(self, run_key: str, entity: TableEntity | None) -> TableEntity:
        """A new entity for the run with everything `entity` had (the caller changes what it owns)."""
        new = TableEntity(self.keys(run_key))
        if entity is not None:
            new.update({k: v for k, v in entity.items() if k not in ("PartitionKey", "RowKey")})
        return new

    def expired(self, entity: TableEntity, now: float) -> bool:
        return float(entity.get("updated_at", 0.0)) <= now - self.ttl_seconds

    def record(self, entity: TableEntity | None) -> ledger.OwnershipRecord:
        """The ownership part of the run's row, for the ledger."""
        if entity is None:
            return ledger.OwnershipRecord()
        pending = get_blob(entity, "pending")
        return ledger.OwnershipRecord(
            version=int(entity.get("version", 0)),
            epoch=int(entity.get("epoch", 0)),
            claimed=frozenset(get_keys(entity, "claimed")),
            fingerprint=entity.get("fingerprint"),
            pending=ledger.Intentions.from_json(json.loads(zlib.decompress(pending))) if pending else None,
        )

    # --- the run rows a scope reads and writes, remembered ------------------------------------------------------
    @contextmanager
    def folding(self, run_key: str) -> Iterator[None]:
        """A scope whose reads of the run's row answer as the scope last read or wrote it; the row as the scope left
        it (if it ended without an error) is what `remembered` answers afterwards."""
        keys = self.keys(run_key)
        row = (keys["PartitionKey"], keys["RowKey"])
        with self._lock:
            self._folding[row] = self._folding.get(row, 0) + 1
        done = False
        try:
            yield
            done = True
        finally:
            with self._lock:
                self._folding[row] -= 1
                if not self._folding[row]:
                    del self._folding[row]
                    last = self._folded.pop(row, None)
                    remember_row(self._recent, row, last if done else None, RECENT_ROWS)

    def remembered(self, run_id: str) -> TableEntity | None:
        """The run's row as the last scope of the run left it (None: not known here, or read in this scope)."""
        keys = self.keys(run_id)
        row = (keys["PartitionKey"], keys["RowKey"])
        with self._lock:
            return None if row in self._folded else self._recent.get(row)

    def _fold(self, row: tuple[str, str], entity: TableEntity | None, *, forget: bool = False) -> None:
        """Remember `entity` as the run row `row` now is, if a scope folds its reads (`forget`: it is unknown)."""
        with self._lock:
            if forget:
                self._recent.pop(row, None)
            if row in self._folding:
                if forget:
                    self._folded.pop(row, None)
                else:
                    self._folded[row] = entity


def put_keys(entity: TableEntity, name: str, keys: Iterable[Key]) -> None:
    """Dataset keys in the binary properties `name` of a run's row (sorted, JSON, compressed)."""
    text = json.dumps(sorted_keys(keys), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    put_blob(entity, name, zlib.compress(text, 6))


def get_keys(entity: TableEntity | None, name: str) -> set[Key]:
    data = get_blob(entity, name)
    return {(t, q) for t, q in json.loads(zlib.decompress(data))} if data else set()


def put_pending(entity: TableEntity, intentions: ledger.Intentions | None) -> None:
    text = b"" if intentions is None else zlib.compress(json.dumps(intentions.to_json()).encode("utf-8"), 6)
    put_blob(entity, "pending", text)
