"""Run state in Azure Table storage, shared by every instance of a scaled-out Function App.

Entities (every writer uses optimistic concurrency: read with the ETag, replace only if unchanged — 412 otherwise —,
create only if absent — 409 otherwise —, and retry the whole read-modify-write):

- one per run or static declaration: PartitionKey = 2 hex digits of sha256(key) (runIds are often UUIDv7, whose first
  digits are a timestamp: hashing spreads the runs over 256 partitions), RowKey = the key. The merged state is the
  codec's zlib-compressed JSON split into binary properties `state_0`, `state_1`, ... (a property holds at most
  64 KiB, an entity 1 MiB), with `state_parts`; the written and claimed keys likewise (`written_*`, `claimed_*`);
  `version`, `fingerprint`, `updated_at` (Unix seconds), `due_at`, `due_attempts`;
- one per run that the timer should write (PartitionKey `due`, RowKey = the run's RowKey, `run_key`, `due_at`): the
  timer reads this one partition instead of scanning every run;
- one per connector-owned entity that some run wrote (PartitionKey `ref-` + 2 hex digits, RowKey = sha256 of type and
  qualifiedName): `users`, `deleting_since`;
- one per process qualifiedName (PartitionKey `process-` + 2 hex digits, RowKey = sha256 of the name): `run_time`,
  the time of the newest run that wrote it. These and the references have no `updated_at`: purging runs keeps them;
- one per interim dataset, a dataset the connector created for want of a scanned asset (PartitionKey `interim`,
  RowKey = sha256 of type and qualifiedName): `type_name`, `qualified_name`, `candidates` (JSON), `registered_at`,
  `checked_at`. The re-link timer reads this one partition, oldest `checked_at` first; purging keeps them too.

Operations that touch several entities are ordered so that a crash between two writes can only leave a reference
counted too often (an entity kept), never too rarely (an entity deleted while in use).
"""
from __future__ import annotations

import hashlib
import json
import re
import time
import zlib
from typing import Any, Callable, Iterable, Mapping, Sequence

from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableClient, TableEntity, TableServiceClient, UpdateMode
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from olparser.runs.codec import from_compressed, to_compressed
from olparser.runs.merge import merge_event
from olparser.runs.model import JSON, RunSnapshot
from olparser.runs.store import (TOMBSTONE_SECONDS, CommitResult, InterimDataset, Key, StoreStats, Writer, add_writer,
                                 drop_writer, event_run_id, sorted_keys)

PROPERTY_BYTES = 64_000  # a binary property holds at most 64 KiB
# An entity holds at most 1 MiB, and binary properties travel base64-encoded (4/3 larger; Azurite counts that size):
# 720,000 bytes are ~960 KB on the wire, leaving room for the keys and the other properties.
MAX_STATE_BYTES = 720_000
MAX_ATTEMPTS = 40
DUE_PARTITION = "due"
INTERIM_PARTITION = "interim"
_SAFE_ROW_KEY = re.compile(r"^[A-Za-z0-9._:@=+-]{1,512}$")
_BLOBS = ("state", "written", "claimed")


class RunStateTooLarge(ValueError):
    """A run whose merged state does not fit in one Table storage entity."""


class RunStateConflict(RuntimeError):
    """Another writer changed the entity between our read and our write (retried up to max_attempts times)."""


class TableRunStateStore:
    """RunStateStore over an Azure Table (see the module docstring and olparser/runs/store.py)."""

    def __init__(self, table: TableClient, *, ttl_seconds: int, max_state_bytes: int = MAX_STATE_BYTES,
                 max_attempts: int = MAX_ATTEMPTS, max_datasets: int | None = None,
                 connection_string: str | None = None) -> None:
        self.table = table
        self.connection_string = connection_string  # what it was opened with (None: given a client)
        self.ttl_seconds = ttl_seconds
        self.max_state_bytes = max_state_bytes
        self.max_datasets = max_datasets
        self._max_attempts = max_attempts

    @classmethod
    def from_connection_string(cls, connection: str, table_name: str, *, ttl_seconds: int,
                               **options: Any) -> "TableRunStateStore":
        """Connect and create the table if it does not exist yet."""
        service = TableServiceClient.from_connection_string(connection)
        return cls(service.create_table_if_not_exists(table_name), ttl_seconds=ttl_seconds,
                   connection_string=connection, **options)

    # --- merged events -----------------------------------------------------------------------------------------
    def merge(self, event: JSON, *, now: float | None = None) -> RunSnapshot:
        return self.merge_versioned(event, now=now)[0]

    def merge_versioned(self, event: JSON, *, now: float | None = None,
                        max_datasets: int | None = None) -> tuple[RunSnapshot, int]:
        run_id = event_run_id(event)
        max_datasets = self.max_datasets if max_datasets is None else max_datasets
        now = time.time() if now is None else now

        def attempt() -> tuple[RunSnapshot, int]:
            entity = self._read(run_id)
            live = entity is not None and not self._expired(entity, now)
            snapshot = merge_event(self._decode(entity) if live else None, event, max_datasets=max_datasets)
            version = int(entity.get("version", 0)) + 1 if entity is not None else 1
            new = self._carry_over(run_id, entity)
            self._put_blob(new, "state", _compressed_state(snapshot, run_id, self.max_state_bytes))
            new.update(updated_at=float(now), version=version)
            if not live:
                new.pop("fingerprint", None)
            self._write(new, entity)
            return snapshot, version

        return self._with_retries(attempt)

    def get(self, run_id: str, *, now: float | None = None) -> RunSnapshot | None:
        return self.get_versioned(run_id, now=now)[0]

    def get_versioned(self, run_id: str, *, now: float | None = None) -> tuple[RunSnapshot | None, int]:
        entity = self._read(run_id)
        if entity is None:
            return None, 0
        now = time.time() if now is None else now
        return (None if self._expired(entity, now) else self._decode(entity)), int(entity.get("version", 0))

    def written_fingerprint(self, run_key: str, *, now: float | None = None) -> str | None:
        entity = self._read(run_key)
        now = time.time() if now is None else now
        return None if entity is None or self._expired(entity, now) else entity.get("fingerprint")

    # --- what runs wrote ---------------------------------------------------------------------------------------
    def claim(self, run_key: str, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        now = time.time() if now is None else now
        keys = set(sorted_keys(keys))
        counted: set[Key] = set()
        contested: set[Key] = set()

        def attempt() -> None:
            entity = self._read(run_key)
            claimed = self._get_keys(entity, "claimed")
            for key in sorted(keys - claimed - counted):  # references first: a crash here only over-counts
                if self._add_user(key, now):
                    contested.add(key)
                counted.add(key)
            new = self._carry_over(run_key, entity)
            self._put_keys(new, "claimed", claimed | keys)
            new["updated_at"] = float(now)
            self._write(new, entity)

        self._with_retries(attempt)
        return frozenset(contested)

    def claimed(self, run_key: str) -> frozenset[Key]:
        return frozenset(self._get_keys(self._read(run_key), "claimed"))

    def contested(self, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        now = time.time() if now is None else now
        found = set()
        for key in sorted_keys(keys):
            ref = self._read_keys(self._ref_keys(key))
            if ref is not None and _tombstoned(ref, now):
                found.add(key)
        return frozenset(found)

    def commit(self, run_key: str, keys: Iterable[Key], *, version: int | None, fingerprint: str,
               process_names: Sequence[str] = (), run_time: float | None = None, dangling: Iterable[Key] = (),
               process_types: frozenset[str] = frozenset(), now: float | None = None) -> CommitResult:
        now = time.time() if now is None else now
        keys = set(sorted_keys(keys))
        dangling = set(sorted_keys(dangling))

        def attempt() -> tuple[set[Key], set[Key]] | None:
            """What the run no longer claims and what it left dangling; None when the run's version moved on."""
            entity = self._read(run_key)
            if version is not None and (entity is None or int(entity.get("version", 0)) != version):
                return None
            claimed = self._get_keys(entity, "claimed")
            new = self._carry_over(run_key, entity)
            self._put_keys(new, "written", keys)
            self._put_keys(new, "claimed", keys)
            new.update(fingerprint=fingerprint, updated_at=float(now), due_attempts=0)
            new.pop("due_at", None)
            self._write(new, entity)
            return claimed - keys, dangling - keys - claimed

        released = self._with_retries(attempt)
        if released is None:
            return CommitResult(stale=True)
        removed, others = released
        orphans = [key for key in sorted(removed) if self._remove_user(key, now)]
        orphans += [key for key in sorted(others) if self._tombstone_if_unused(key, now)]
        self._delete_due(run_key)
        newest = set()
        if process_names and run_time is not None:
            for name in dict.fromkeys(process_names):
                head = self._update_writers(name, lambda writers: (add_writer(writers, (run_time, run_key)), True))
                if head == run_key:
                    newest.add(name)
        restores = []
        for _, name in sorted(key for key in removed if key[0] in process_types):
            restore_from = self._update_writers(name, lambda writers: drop_writer(writers, run_key))
            if restore_from is not None:
                restores.append((name, restore_from))
        return CommitResult(orphans=tuple(sorted(orphans)), restores=tuple(restores), newest=frozenset(newest))

    def finish_deletes(self, keys: Iterable[Key]) -> None:
        for key in sorted_keys(keys):
            ref_keys = self._ref_keys(key)

            def attempt() -> None:
                ref = self._read_keys(ref_keys)
                if ref is None:
                    return
                if int(ref.get("users", 0)) <= 0:
                    self._delete(ref)
                else:
                    self._write(_ref_row(ref_keys, key, users=int(ref["users"])), ref)

            self._with_retries(attempt)

    def abandoned_deletes(self, now: float, limit: int) -> list[Key]:
        rows = self.table.query_entities(
            "PartitionKey ge 'ref-' and PartitionKey lt 'ref.' and users le 0 and deleting_since le @cutoff",
            parameters={"cutoff": float(now - TOMBSTONE_SECONDS)})
        found: list[Key] = []
        for ref in rows:
            if len(found) >= limit:
                break
            try:
                self._write(TableEntity({"PartitionKey": ref["PartitionKey"], "RowKey": ref["RowKey"]},
                                        users=0, deleting_since=float(now), type_name=ref.get("type_name", ""),
                                        qualified_name=ref.get("qualified_name", "")), ref)
            except RunStateConflict:  # claimed or finished meanwhile
                continue
            found.append((ref["type_name"], ref["qualified_name"]))
        return sorted(found)

    # --- the incomplete-runs timer -----------------------------------------------------------------------------
    def schedule(self, run_key: str, due_at: float | None, *, keep_earlier: bool = False) -> None:
        def attempt() -> None:
            entity = self._read(run_key)
            if entity is None:
                return
            current = entity.get("due_at")
            at = current if keep_earlier and current is not None and due_at is not None and current < due_at \
                else due_at
            new = TableEntity(entity)
            new["due_attempts"] = 0
            if at is None:
                new.pop("due_at", None)
            else:
                new["due_at"] = float(at)
            self._write(new, entity)
            if at is None:
                self._delete_due(run_key)
            else:
                self._put_due(run_key, float(at))

        self._with_retries(attempt)

    def due_runs(self, now: float, limit: int) -> list[str]:
        rows = self.table.query_entities("PartitionKey eq @p and due_at le @now",
                                         parameters={"p": DUE_PARTITION, "now": float(now)},
                                         select=["run_key", "due_at"])
        found = sorted(((float(row["due_at"]), row["run_key"]) for row in rows))
        return [run_key for _, run_key in found[:limit]]

    def postpone(self, run_key: str, due_at: float) -> int:
        def attempt() -> int:
            entity = self._read(run_key)
            if entity is None:
                self._delete_due(run_key)
                return 0
            attempts = int(entity.get("due_attempts", 0)) + 1
            new = TableEntity(entity)
            new.update(due_at=float(due_at), due_attempts=attempts)
            self._write(new, entity)
            self._put_due(run_key, float(due_at))
            return attempts

        return self._with_retries(attempt)

    # --- housekeeping ------------------------------------------------------------------------------------------
    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        cutoff = float(now - self.ttl_seconds)
        expired = self.table.query_entities("updated_at le @cutoff", parameters={"cutoff": cutoff},
                                            select=["PartitionKey", "RowKey", "updated_at", "due_at"])
        deleted = 0
        for entity in expired:
            if entity.get("due_at") is not None:
                continue
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

    def process_writers(self, qualified_names: Sequence[str]) -> dict[str, tuple[float, str]]:
        found: dict[str, tuple[float, str]] = {}
        for name in dict.fromkeys(qualified_names):
            entity = self._read_keys(self._process_keys(name))
            if entity is not None:
                found[name] = (float(entity["run_time"]), str(entity.get("run_key", "")))
        return found

    def record_process_runs(self, qualified_names: Sequence[str], run_time: float, run_key: str = "") -> None:
        for name in dict.fromkeys(qualified_names):
            self._update_writers(name, lambda writers: (add_writer(writers, (run_time, run_key)), False))

    def _update_writers(self, name: str,
                        change: Callable[[list[Writer]], tuple[list[Writer], bool]]) -> str | None:
        """Apply `change` to the process's writers; the key of the newest writer afterwards when `change` says so
        (it returns the new list and whether the newest matters), else None."""
        keys = self._process_keys(name)

        def attempt() -> str | None:
            entity = self._read_keys(keys)
            writers: list[Writer] = []
            if entity is not None:
                listed = entity.get("writers")
                writers = ([(float(t), str(k)) for t, k in json.loads(listed)] if listed
                           else [(float(entity["run_time"]), str(entity.get("run_key", "")))])
            changed, dropped_newest = change(writers)
            if not changed:
                if entity is not None:
                    self._delete(entity)
                return None
            self._write(TableEntity(keys, run_time=changed[0][0], run_key=changed[0][1],
                                    writers=json.dumps(changed)), entity)
            return changed[0][1] if dropped_newest else None

        return self._with_retries(attempt)

    def reset_process_runs(self, qualified_names: Sequence[str]) -> int:
        reset = 0
        for name in dict.fromkeys(qualified_names):
            entity = self._read_keys(self._process_keys(name))
            if entity is not None:
                self.table.delete_entity(entity["PartitionKey"], entity["RowKey"])  # absent meanwhile: no error
                reset += 1
        return reset

    def stats(self) -> StoreStats:
        counts = {"runs": 0, "due": 0, "entities": 0, "processes": 0, "interim": 0}
        for row in self.table.query_entities("PartitionKey ne ''", select=["PartitionKey"]):
            partition = row["PartitionKey"]
            kind = ("due" if partition == DUE_PARTITION else "interim" if partition == INTERIM_PARTITION
                    else "entities" if partition.startswith("ref-")
                    else "processes" if partition.startswith("process-") else "runs")
            counts[kind] += 1
        return StoreStats(**counts)

    # --- interim datasets (the re-link timer) ------------------------------------------------------------------
    def register_interim(self, entries: Mapping[Key, str], *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        for key, candidates in sorted(entries.items()):
            row = TableEntity(self._interim_keys(key), type_name=key[0], qualified_name=key[1], candidates=candidates,
                              registered_at=float(now), checked_at=float(now))
            try:
                self.table.create_entity(row)
            except ResourceExistsError:  # registered before: keep its times, take the new candidates
                self.table.update_entity(TableEntity(self._interim_keys(key), candidates=candidates),
                                         mode=UpdateMode.MERGE)

    def interim_keys(self, keys: Iterable[Key]) -> set[Key]:
        return {key for key in sorted_keys(keys) if self._read_keys(self._interim_keys(key)) is not None}

    def due_interim(self, limit: int) -> list[InterimDataset]:
        rows = self.table.query_entities("PartitionKey eq @p", parameters={"p": INTERIM_PARTITION},
                                         select=["type_name", "qualified_name", "candidates", "registered_at",
                                                 "checked_at"])
        found = sorted((float(r["checked_at"]), r["type_name"], r["qualified_name"], r["candidates"],
                        float(r["registered_at"])) for r in rows)
        return [InterimDataset((t, q), candidates, registered, checked)
                for checked, t, q, candidates, registered in found[:limit]]

    def checked_interim(self, keys: Iterable[Key], *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        for key in sorted_keys(keys):
            try:
                self.table.update_entity(TableEntity(self._interim_keys(key), checked_at=float(now)),
                                         mode=UpdateMode.MERGE)
            except ResourceNotFoundError:  # forgotten meanwhile
                continue

    def forget_interim(self, keys: Iterable[Key]) -> None:
        for key in sorted_keys(keys):
            ref = self._interim_keys(key)
            self.table.delete_entity(ref["PartitionKey"], ref["RowKey"])  # no error when absent

    def close(self) -> None:
        self.table.close()

    def __enter__(self) -> "TableRunStateStore":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- references --------------------------------------------------------------------------------------------
    def _add_user(self, key: Key, now: float) -> bool:
        """Count one more user of `key`; True if the entity is being deleted right now (the writer must wait)."""
        ref_keys = self._ref_keys(key)

        def attempt() -> bool:
            ref = self._read_keys(ref_keys)
            new = _ref_row(ref_keys, key, ref)
            new["users"] = int(new.get("users", 0)) + 1
            self._write(new, ref)
            return ref is not None and _tombstoned(ref, now)

        return self._with_retries(attempt)

    def _remove_user(self, key: Key, now: float) -> bool:
        """Count one user less; True if none is left (the entity is then tombstoned: delete it)."""
        ref_keys = self._ref_keys(key)

        def attempt() -> bool:
            ref = self._read_keys(ref_keys)
            new = _ref_row(ref_keys, key, ref)
            users = int(new.get("users", 0)) - 1
            new["users"] = max(users, 0)
            if users <= 0:
                new["deleting_since"] = float(now)
            self._write(new, ref)
            return users <= 0

        return self._with_retries(attempt)

    def _tombstone_if_unused(self, key: Key, now: float) -> bool:
        ref_keys = self._ref_keys(key)

        def attempt() -> bool:
            ref = self._read_keys(ref_keys)
            unused = ref is None or int(ref.get("users", 0)) <= 0
            if unused:
                self._write(_ref_row(ref_keys, key, users=0, deleting_since=float(now)), ref)
            return unused

        return self._with_retries(attempt)

    # --- entity helpers ----------------------------------------------------------------------------------------
    def _carry_over(self, run_key: str, entity: TableEntity | None) -> TableEntity:
        """A new entity for the run with everything `entity` had (the caller changes what it owns)."""
        new = TableEntity(self._keys(run_key))
        if entity is not None:
            new.update({k: v for k, v in entity.items() if k not in ("PartitionKey", "RowKey")})
        return new

    def _put_blob(self, entity: TableEntity, name: str, data: bytes) -> None:
        put_blob(entity, name, data)

    @staticmethod
    def _get_blob(entity: TableEntity | None, name: str) -> bytes | None:
        return get_blob(entity, name)

    def _put_keys(self, entity: TableEntity, name: str, keys: Iterable[Key]) -> None:
        text = json.dumps(sorted_keys(keys), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        self._put_blob(entity, name, zlib.compress(text, 6))

    def _get_keys(self, entity: TableEntity | None, name: str) -> set[Key]:
        data = self._get_blob(entity, name)
        return {(t, q) for t, q in json.loads(zlib.decompress(data))} if data else set()

    def _decode(self, entity: TableEntity) -> RunSnapshot | None:
        data = self._get_blob(entity, "state")
        return from_compressed(data) if data else None

    def _put_due(self, run_key: str, due_at: float) -> None:
        keys = {"PartitionKey": DUE_PARTITION, "RowKey": self._keys(run_key)["RowKey"]}
        self.table.upsert_entity(TableEntity(keys, run_key=run_key, due_at=due_at), mode=UpdateMode.REPLACE)

    def _delete_due(self, run_key: str) -> None:
        self.table.delete_entity(DUE_PARTITION, self._keys(run_key)["RowKey"])  # no error when absent

    def _with_retries(self, attempt: Callable[[], Any]) -> Any:
        retrying = Retrying(retry=retry_if_exception_type(RunStateConflict), reraise=True,
                            stop=stop_after_attempt(self._max_attempts),
                            wait=wait_random_exponential(multiplier=0.005, max=0.25))
        return retrying(attempt)

    def _keys(self, run_id: str) -> dict[str, str]:
        return {"PartitionKey": hashlib.sha256(run_id.encode()).hexdigest()[:2], "RowKey": safe_row_key(run_id)}

    @staticmethod
    def _process_keys(qualified_name: str) -> dict[str, str]:
        digest = hashlib.sha256(qualified_name.encode("utf-8")).hexdigest()
        return {"PartitionKey": "process-" + digest[:2], "RowKey": digest}

    @staticmethod
    def _interim_keys(key: Key) -> dict[str, str]:
        digest = hashlib.sha256(f"{key[0]}\n{key[1]}".encode("utf-8")).hexdigest()
        return {"PartitionKey": INTERIM_PARTITION, "RowKey": digest}

    @staticmethod
    def _ref_keys(key: Key) -> dict[str, str]:
        digest = hashlib.sha256(f"{key[0]}\n{key[1]}".encode("utf-8")).hexdigest()
        return {"PartitionKey": "ref-" + digest[:2], "RowKey": digest}

    def _read(self, run_id: str) -> TableEntity | None:
        return self._read_keys(self._keys(run_id))

    def _read_keys(self, keys: dict[str, str]) -> TableEntity | None:
        try:
            return self.table.get_entity(keys["PartitionKey"], keys["RowKey"])
        except ResourceNotFoundError:
            return None

    def _expired(self, entity: TableEntity, now: float) -> bool:
        return float(entity.get("updated_at", 0.0)) <= now - self.ttl_seconds

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
        except ResourceNotFoundError as error:  # deleted since our read
            raise RunStateConflict() from error
        except HttpResponseError as error:
            if error.status_code == 412:  # changed by another writer since our read
                raise RunStateConflict() from error
            raise

    def _delete(self, read: TableEntity) -> None:
        try:
            self.table.delete_entity(read["PartitionKey"], read["RowKey"], etag=read.metadata["etag"],
                                     match_condition=MatchConditions.IfNotModified)
        except HttpResponseError as error:
            if error.status_code == 412:
                raise RunStateConflict() from error
            raise


def put_blob(entity: TableEntity, name: str, data: bytes) -> None:
    """Store `data` in binary properties `{name}_0`, `{name}_1`... (a property holds at most 64 KiB) and
    `{name}_parts`, replacing what `entity` held under that name."""
    for i in range(int(entity.get(f"{name}_parts", 0))):
        entity.pop(f"{name}_{i}", None)
    parts = [data[i:i + PROPERTY_BYTES] for i in range(0, len(data), PROPERTY_BYTES)]
    entity[f"{name}_parts"] = len(parts)
    entity.update({f"{name}_{i}": part for i, part in enumerate(parts)})


def get_blob(entity: TableEntity | Mapping[str, Any] | None, name: str) -> bytes | None:
    """What `put_blob` stored under `name`, or None."""
    parts = int(entity.get(f"{name}_parts", 0)) if entity is not None else 0
    if parts == 0:
        return None
    return b"".join(bytes(entity[f"{name}_{i}"]) for i in range(parts))


def safe_row_key(key: str) -> str:
    """`key` itself when Table storage allows it as a RowKey, else `sha256-<hex digest>`."""
    return key if _SAFE_ROW_KEY.match(key) else "sha256-" + hashlib.sha256(key.encode()).hexdigest()


def _compressed_state(snapshot: RunSnapshot, run_id: str, limit: int) -> bytes:
    data = to_compressed(snapshot)
    if len(data) > limit:
        raise RunStateTooLarge(
            f"run {run_id}: merged state is {len(data)} bytes compressed, over the {limit}-byte limit of one Table "
            "storage entity; use RUN_STATE_STORE=sqlite or strip large facets (STRIP_FACETS)")
    return data


def _ref_row(ref_keys: dict[str, str], key: Key, ref: TableEntity | None = None, **values: Any) -> TableEntity:
    """The reference-count row of `key`: a copy of `ref` when there is one, else a new row; `values` set on top."""
    row = TableEntity(ref) if ref is not None else TableEntity(ref_keys, type_name=key[0], qualified_name=key[1])
    row.update(values)
    return row


def _tombstoned(ref: TableEntity, now: float) -> bool:
    since = ref.get("deleting_since")
    return since is not None and float(since) > now - TOMBSTONE_SECONDS
