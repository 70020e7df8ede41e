"""Run state in Azure Table storage, shared by every instance of a scaled-out Function App.

One entity per run: PartitionKey = 2 hex digits of sha256(runId) (runIds are often UUIDv7, whose first digits are a
timestamp: hashing spreads the runs over 256 partitions), RowKey = runId. The state is the codec's zlib-compressed
JSON split into binary properties `state_0`, `state_1`, ... (a property holds at most 64 KiB, an entity 1 MiB), with
`state_parts`, `fingerprint` and `updated_at` (Unix seconds). Writers use optimistic concurrency: read with the ETag,
replace only if unchanged (412 otherwise), create only if absent (409 otherwise), and retry the whole read-merge-write.

Per process qualifiedName, one more entity (PartitionKey `process-` + 2 hex digits, RowKey = sha256 of the name) holds
`run_time`, the time of the newest run that wrote it; it has no `updated_at`, so purging runs never removes it.
"""
from __future__ import annotations

import hashlib
import re
import time
from typing import Any, Callable, Sequence

from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableClient, TableEntity, TableServiceClient, UpdateMode
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from olparser.runs.codec import from_compressed, to_compressed
from olparser.runs.merge import merge_event
from olparser.runs.model import JSON, RunSnapshot
from olparser.runs.store import event_run_id

PROPERTY_BYTES = 64_000  # a binary property holds at most 64 KiB
# An entity holds at most 1 MiB, and binary properties travel base64-encoded (4/3 larger; Azurite counts that size):
# 720,000 bytes are ~960 KB on the wire, leaving room for the keys and the other properties.
MAX_STATE_BYTES = 720_000
MAX_ATTEMPTS = 40
_SAFE_ROW_KEY = re.compile(r"^[A-Za-z0-9._:@=+-]{1,512}$")


class RunStateTooLarge(ValueError):
    """A run whose merged state does not fit in one Table storage entity."""


class RunStateConflict(RuntimeError):
    """Another writer changed the entity between our read and our write (retried up to max_attempts times)."""


class TableRunStateStore:
    """RunStateStore over an Azure Table (see the module docstring)."""

    def __init__(self, table: TableClient, *, ttl_seconds: int, max_state_bytes: int = MAX_STATE_BYTES,
                 max_attempts: int = MAX_ATTEMPTS) -> None:
        self.table = table
        self.ttl_seconds = ttl_seconds
        self.max_state_bytes = max_state_bytes
        self._max_attempts = max_attempts

    @classmethod
    def from_connection_string(cls, connection: str, table_name: str, *, ttl_seconds: int,
                               **options: Any) -> "TableRunStateStore":
        """Connect and create the table if it does not exist yet."""
        service = TableServiceClient.from_connection_string(connection)
        return cls(service.create_table_if_not_exists(table_name), ttl_seconds=ttl_seconds, **options)

    def merge(self, event: JSON, *, now: float | None = None) -> RunSnapshot:
        run_id = event_run_id(event)
        now = time.time() if now is None else now

        def attempt() -> RunSnapshot:
            entity = self._read(run_id)
            live = entity is not None and not self._expired(entity, now)
            snapshot = merge_event(self._decode(entity) if live else None, event)
            fingerprint = entity.get("fingerprint") if live else None
            self._write(self._entity(run_id, snapshot, fingerprint, now), entity)
            return snapshot

        return self._with_retries(attempt)

    def get(self, run_id: str, *, now: float | None = None) -> RunSnapshot | None:
        entity = self._live(run_id, now)
        return self._decode(entity) if entity is not None else None

    def written_fingerprint(self, run_id: str, *, now: float | None = None) -> str | None:
        entity = self._live(run_id, now)
        return entity.get("fingerprint") if entity is not None else None

    def record_written(self, run_id: str, fingerprint: str, *, now: float | None = None) -> None:
        now = time.time() if now is None else now

        def attempt() -> None:
            entity = self._read(run_id)
            live = entity is not None and not self._expired(entity, now)
            new = TableEntity(entity) if live else TableEntity(self._keys(run_id), state_parts=0)
            new.update(fingerprint=fingerprint, updated_at=float(now))
            self._write(new, entity)

        self._with_retries(attempt)

    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        cutoff = float(now - self.ttl_seconds)
        expired = self.table.query_entities("updated_at le @cutoff", parameters={"cutoff": cutoff},
                                            select=["PartitionKey", "RowKey", "updated_at"])
        deleted = 0
        for entity in expired:
            try:
                self.table.delete_entity(entity["PartitionKey"], entity["RowKey"], etag=entity.metadata["etag"],
                                         match_condition=MatchConditions.IfNotModified)
            except (ResourceNotFoundError, ResourceExistsError):
                continue
            except HttpResponseError as error:
                if error.status_code == 412:  # updated since the query: no longer expired
                    continue
                raise
            deleted += 1
        return deleted

    def process_run_times(self, qualified_names: Sequence[str]) -> dict[str, float]:
        found: dict[str, float] = {}
        for name in dict.fromkeys(qualified_names):
            entity = self._read_keys(self._process_keys(name))
            if entity is not None:
                found[name] = float(entity["run_time"])
        return found

    def record_process_runs(self, qualified_names: Sequence[str], run_time: float) -> None:
        for name in dict.fromkeys(qualified_names):
            keys = self._process_keys(name)

            def attempt() -> None:
                entity = self._read_keys(keys)
                if entity is None or float(entity["run_time"]) < run_time:
                    self._write(TableEntity(keys, run_time=float(run_time)), entity)

            self._with_retries(attempt)

    def close(self) -> None:
        self.table.close()

    def __enter__(self) -> "TableRunStateStore":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _with_retries(self, attempt: Callable[[], Any]) -> Any:
        retrying = Retrying(retry=retry_if_exception_type(RunStateConflict), reraise=True,
                            stop=stop_after_attempt(self._max_attempts),
                            wait=wait_random_exponential(multiplier=0.005, max=0.25))
        return retrying(attempt)

    def _keys(self, run_id: str) -> dict[str, str]:
        row_key = run_id if _SAFE_ROW_KEY.match(run_id) else "sha256-" + hashlib.sha256(run_id.encode()).hexdigest()
        return {"PartitionKey": hashlib.sha256(run_id.encode()).hexdigest()[:2], "RowKey": row_key}

    @staticmethod
    def _process_keys(qualified_name: str) -> dict[str, str]:
        digest = hashlib.sha256(qualified_name.encode("utf-8")).hexdigest()
        return {"PartitionKey": "process-" + digest[:2], "RowKey": digest}

    def _read(self, run_id: str) -> TableEntity | None:
        return self._read_keys(self._keys(run_id))

    def _read_keys(self, keys: dict[str, str]) -> TableEntity | None:
        try:
            return self.table.get_entity(keys["PartitionKey"], keys["RowKey"])
        except ResourceNotFoundError:
            return None

    def _live(self, run_id: str, now: float | None) -> TableEntity | None:
        entity = self._read(run_id)
        now = time.time() if now is None else now
        return None if entity is None or self._expired(entity, now) else entity

    def _expired(self, entity: TableEntity, now: float) -> bool:
        return float(entity.get("updated_at", 0.0)) <= now - self.ttl_seconds

    def _entity(self, run_id: str, snapshot: RunSnapshot, fingerprint: str | None, now: float) -> TableEntity:
        data = to_compressed(snapshot)
        if len(data) > self.max_state_bytes:
            raise RunStateTooLarge(
                f"run {run_id}: merged state is {len(data)} bytes compressed, over the {self.max_state_bytes}-byte "
                "limit of one Table storage entity; use RUN_STATE_STORE=sqlite or strip large facets (STRIP_FACETS)")
        parts = [data[i:i + PROPERTY_BYTES] for i in range(0, len(data), PROPERTY_BYTES)]
        entity = TableEntity(self._keys(run_id), state_parts=len(parts), updated_at=float(now))
        entity.update({f"state_{i}": part for i, part in enumerate(parts)})
        if fingerprint is not None:
            entity["fingerprint"] = fingerprint
        return entity

    def _decode(self, entity: TableEntity) -> RunSnapshot | None:
        parts = int(entity.get("state_parts", 0))
        if parts == 0:
            return None
        return from_compressed(b"".join(bytes(entity[f"state_{i}"]) for i in range(parts)))

    def _write(self, entity: TableEntity, read: TableEntity | None) -> None:
        """Create `entity` if nothing was read, else replace what was read if nobody changed it since."""
        try:
            if read is None:
                self.table.create_entity(entity)
            else:
                self.table.update_entity(entity, mode=UpdateMode.REPLACE, etag=read.metadata["etag"],
                                         match_condition=MatchConditions.IfNotModified)
        except ResourceExistsError as error:  # 409: created by another writer since our read
            raise RunStateConflict() from error
        except ResourceNotFoundError as error:  # purged since our read
            raise RunStateConflict() from error
        except HttpResponseError as error:
            if error.status_code == 412:  # changed by another writer since our read
                raise RunStateConflict() from error
            raise
