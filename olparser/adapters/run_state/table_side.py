"""The run-state store's rows for temporary datasets (a partition per scope and dataset, a row per writer and per
reader), for interim datasets (the re-link timer's partition), for the processes taken over from another connector
(one partition) and for the lifecycle marks of dropped and renamed tables (one partition). A part of
TableRunStateStore (table_store.py), given its table's row operations (`table_base.RunRows`)."""

from __future__ import annotations

import functools
import hashlib
import json
import time
from typing import Any, Iterable, Mapping, Sequence

from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableEntity, UpdateMode

from olparser.adapters.run_state.table_base import RunRows, RunStateConflict
from olparser.adapters.run_state.table_rows import put_op
from olparser.runs.ledger import Key, sorted_keys
from olparser.runs.marks import LifecycleMark
from olparser.runs.store import MAX_TEMPORARY_ROWS, InterimDataset, Takeover

INTERIM_PARTITION = "interim"
TAKEOVER_PARTITION = "takeover"
MAX_TEXT_CHARS = 32_000  # a string property holds at most 64 KiB (UTF-16)
TEMPORARY_PREFIX = "tmp-"  # + sha256 of (scope, namespace, name): one partition per temporary dataset
LIFECYCLE_PARTITION = "lifecycle"
FILTER_KEYS = 14  # RowKeys per query: a filter holds at most 15 comparisons (one is the PartitionKey's)
BATCH_ROWS = 100  # operations per batch transaction


class SideRows:
    """Temporary and interim datasets, take-overs, lifecycle marks (a part of TableRunStateStore)."""

    def __init__(self, rows: RunRows) -> None:
        self.rows = rows

    # --- temporary datasets -----------------------------------------------------------------------------------
    # One partition per (scope, temporary dataset); a row per writer (`w-` + sha256 of its run key, `passed_on`)
    # and per reader (`r-` + ...), each upserted whole: no read-modify-write, so no conflict between workers. A
    # writer upserts then reads the readers, a reader upserts then reads the writers: one of them sees the other.
    def record_temporary(
        self, scope: str, writer: str, writes: Mapping[tuple[str, str], bytes], *, now: float | None = None
    ) -> frozenset[str]:
        now = time.time() if now is None else now
        readers: set[str] = set()
        for name, passed_on in sorted(writes.items()):
            partition = self._temporary_partition(scope, name)
            self.rows.table.upsert_entity(
                TableEntity(
                    PartitionKey=partition,
                    RowKey="w-" + _sha(writer),
                    run_key=writer,
                    passed_on=passed_on,
                    temporary_at=float(now),
                ),
                mode=UpdateMode.REPLACE,
            )
            readers.update(self._temporary_rows(partition, "r-", now, ("run_key",)))
        readers.discard(writer)
        for reader in sorted(readers):
            self.rows.retried(functools.partial(self._bump_version, reader))
        return frozenset(readers)

    def _bump_version(self, run_key: str) -> None:
        """A new version of the run, its state unchanged: a commit of a plan built before is stale (rebuilt)."""
        entity = self.rows.read(run_key)
        if entity is not None:
            new = self.rows.copied_row(run_key, entity)
            new["version"] = int(entity.get("version", 0)) + 1
            self.rows.write(new, entity)

    def temporary_sources(
        self, scope: str, names: Sequence[tuple[str, str]], reader: str, *, now: float | None = None
    ) -> dict[tuple[str, str], list[bytes]]:
        now = time.time() if now is None else now
        found: dict[tuple[str, str], list[bytes]] = {}
        for name in names:
            partition = self._temporary_partition(scope, name)
            self.rows.table.upsert_entity(
                TableEntity(
                    PartitionKey=partition, RowKey="r-" + _sha(reader), run_key=reader, temporary_at=float(now)
                ),
                mode=UpdateMode.REPLACE,
            )
            rows = [
                row
                for run_key, row in sorted(self._temporary_rows(partition, "w-", now, ("run_key", "passed_on")).items())
                if run_key != reader
            ]
            if rows:
                found[name] = [bytes(row["passed_on"]) for row in rows]
        return found

    def _temporary_rows(self, partition: str, prefix: str, now: float, select: tuple[str, ...]) -> dict[str, Any]:
        """The live rows of a temporary dataset's partition whose RowKey starts with `prefix`, by run key (at most
        MAX_TEMPORARY_ROWS)."""
        rows = self.rows.table.query_entities(
            "PartitionKey eq @p and RowKey ge @lo and RowKey lt @hi and temporary_at gt @cutoff",
            parameters={
                "p": partition,
                "lo": prefix,
                "hi": prefix[:-1] + ".",
                "cutoff": float(now - self.rows.temporary_seconds),
            },
            select=list(select),
        )
        found: dict[str, Any] = {}
        for row in rows:
            found[row["run_key"]] = row
            if len(found) >= MAX_TEMPORARY_ROWS:
                break
        return found

    def purge_temporary(self, now: float) -> None:
        cutoff = float(now - self.rows.temporary_seconds)
        rows = self.rows.table.query_entities(
            "PartitionKey ge @lo and PartitionKey lt @hi and temporary_at le @cutoff",
            parameters={"lo": TEMPORARY_PREFIX, "hi": TEMPORARY_PREFIX[:-1] + ".", "cutoff": cutoff},
            select=["PartitionKey", "RowKey"],
        )
        for row in rows:
            self.rows.table.delete_entity(row["PartitionKey"], row["RowKey"])  # no error when absent

    @staticmethod
    def _temporary_partition(scope: str, name: tuple[str, str]) -> str:
        return TEMPORARY_PREFIX + _sha(json.dumps([scope, *name]))

    # --- tables dropped and renamed ------------------------------------------------------------------------------
    # One partition `lifecycle`, a row per dataset key (sha256 of type and qualifiedName): `mark` (JSON,
    # olparser.runs.marks.LifecycleMark), `marked_at`. A run's keys are read in one query (14 at a time) and changed
    # in one batch; the timer purges those unchanged for the run-state TTL.
    def record_lifecycle(
        self, marks: Mapping[Key, LifecycleMark], *, now: float | None = None
    ) -> dict[Key, LifecycleMark]:
        now = time.time() if now is None else now
        rows = {_key_row(key): key for key in sorted_keys(marks)}
        if not rows:
            return {}

        def attempt() -> dict[Key, LifecycleMark]:
            read: dict[str, TableEntity] = {}
            names = sorted(rows)
            for start in range(0, len(names), FILTER_KEYS):  # one query per 14 keys (a run has a few)
                chunk = names[start : start + FILTER_KEYS]
                parameters = {"p": LIFECYCLE_PARTITION, **{f"r{i}": name for i, name in enumerate(chunk)}}
                condition = " or ".join(f"RowKey eq @r{i}" for i in range(len(chunk)))
                read.update(
                    (e["RowKey"], e)
                    for e in self.rows.table.query_entities(
                        f"PartitionKey eq @p and ( {condition} )", parameters=parameters
                    )
                )  # spaced: the SDK's @names
            merged: dict[Key, LifecycleMark] = {}
            operations = []
            for name, key in sorted(rows.items()):
                stored = LifecycleMark.from_json(json.loads(read[name]["mark"])) if name in read else None
                merged[key] = stored.merged(marks[key]) if stored is not None else marks[key]
                if merged[key] != stored:
                    row = TableEntity(
                        PartitionKey=LIFECYCLE_PARTITION,
                        RowKey=name,
                        marked_at=float(now),
                        mark=json.dumps(merged[key].to_json(), separators=(",", ":")),
                    )
                    operations.append(put_op(row, read.get(name)))
            for start in range(0, len(operations), BATCH_ROWS):  # all in one partition: one batch
                self.rows.transact(operations[start : start + BATCH_ROWS])
            return merged

        result: dict[Key, LifecycleMark] = self.rows.retried(attempt)
        return result

    def purge_lifecycle(self, now: float) -> None:
        rows = self.rows.table.query_entities(
            "PartitionKey eq @p and marked_at le @cutoff",
            select=["RowKey"],
            parameters={"p": LIFECYCLE_PARTITION, "cutoff": float(now - self.rows.ttl_seconds)},
        )
        for row in rows:
            try:
                self.rows.table.delete_entity(
                    LIFECYCLE_PARTITION,
                    row["RowKey"],
                    etag=row.metadata["etag"],
                    match_condition=MatchConditions.IfNotModified,
                )
            except HttpResponseError as error:  # changed since the query: no longer expired (412)
                if error.status_code != 412:
                    raise

    # --- interim datasets (the re-link timer) ------------------------------------------------------------------
    # One partition `interim`, a row per dataset (sha256 of type and qualifiedName): `type_name`, `qualified_name`,
    # `candidates` (JSON), `registered_at`, `checked_at`. Purging keeps them.
    def register_interim(self, entries: Mapping[Key, str], *, now: float | None = None) -> None:
        """One request per new dataset, two per dataset registered before."""
        now = time.time() if now is None else now
        for key, candidates in sorted(entries.items()):
            times = {"registered_at": float(now), "checked_at": float(now)}
            self._register(INTERIM_PARTITION, key, {"candidates": candidates}, times)

    def interim_keys(self, keys: Iterable[Key]) -> set[Key]:
        return {
            key for key in sorted_keys(keys) if self.rows.read_keys(_registry_keys(INTERIM_PARTITION, key)) is not None
        }

    def due_interim(self, limit: int) -> list[InterimDataset]:
        rows = self.rows.table.query_entities(
            "PartitionKey eq @p",
            parameters={"p": INTERIM_PARTITION},
            select=["type_name", "qualified_name", "candidates", "registered_at", "checked_at"],
        )
        found = sorted(
            (float(r["checked_at"]), r["type_name"], r["qualified_name"], r["candidates"], float(r["registered_at"]))
            for r in rows
        )
        return [
            InterimDataset((t, q), candidates, registered, checked)
            for checked, t, q, candidates, registered in found[:limit]
        ]

    def checked_interim(self, keys: Iterable[Key], *, now: float | None = None) -> None:
        self._checked(INTERIM_PARTITION, keys, time.time() if now is None else now)

    def forget_interim(self, keys: Iterable[Key]) -> None:
        self._forget(INTERIM_PARTITION, keys)

    # --- processes taken over from another connector (ol2purview migrate accelerator) -----------------------------
    # One partition `takeover`, a row per process (sha256 of type and qualifiedName): `type_name`, `qualified_name`,
    # `owner`, `output`, `run_key`, `keys` (JSON: [[typeName, qualifiedName], ...], as registered), `registered_at`,
    # `checked_at`. Purging keeps them (they have no `updated_at`).
    def register_takeovers(self, entries: Sequence[Takeover]) -> None:
        """One request per new take-over, two per take-over registered before (its create refused, then its fields
        merged, its times kept)."""
        for entry in entries:
            text = json.dumps([[t, q] for t, q in entry.keys], separators=(",", ":"), ensure_ascii=False)
            if len(text) > MAX_TEXT_CHARS:
                raise ValueError(
                    f"take-over of {entry.process[0]} {entry.process[1]!r}: its {len(entry.keys)} keys are "
                    f"{len(text)} characters of JSON, over the {MAX_TEXT_CHARS} a Table storage property holds"
                )
            fields = {"owner": entry.owner, "output": entry.output, "run_key": entry.run_key, "keys": text}
            times = {"registered_at": float(entry.registered_at), "checked_at": float(entry.checked_at)}
            self._register(TAKEOVER_PARTITION, entry.process, fields, times)

    def pending_takeovers(self, limit: int | None = None, *, owners: Iterable[str] | None = None) -> list[Takeover]:
        """One query of the partition (a request per 1,000 take-overs), filtered and ordered here."""
        among = None if owners is None else set(owners)
        rows = self.rows.table.query_entities("PartitionKey eq @p", parameters={"p": TAKEOVER_PARTITION})
        found = sorted(
            (
                Takeover(
                    (r["type_name"], r["qualified_name"]),
                    r["owner"],
                    r["output"],
                    r["run_key"],
                    tuple((t, q) for t, q in json.loads(r["keys"])),
                    float(r["registered_at"]),
                    float(r["checked_at"]),
                )
                for r in rows
                if among is None or r["owner"] in among
            ),
            key=lambda entry: (entry.checked_at, entry.process),
        )
        return found[:limit]

    def checked_takeovers(self, processes: Iterable[Key], *, now: float | None = None) -> None:
        """One request per process."""
        self._checked(TAKEOVER_PARTITION, processes, time.time() if now is None else now)

    def forget_takeovers(self, processes: Iterable[Key]) -> None:
        """One request per process."""
        self._forget(TAKEOVER_PARTITION, processes)

    # --- the registries' rows (interim datasets, take-overs): one partition, a row per key ------------------------
    def _register(self, partition: str, key: Key, fields: dict[str, Any], times: dict[str, float]) -> None:
        """Create the key's row with `fields` and `times`; when it is there already, merge `fields` into it (its times
        kept). A row forgotten in between is created again."""
        keys = _registry_keys(partition, key)

        def attempt() -> None:
            try:
                self.rows.table.create_entity(
                    TableEntity(keys, type_name=key[0], qualified_name=key[1], **fields, **times)
                )
                return
            except ResourceExistsError:  # registered before: keep its times, take the new fields
                pass
            try:
                self.rows.table.update_entity(TableEntity(keys, **fields), mode=UpdateMode.MERGE)
            except ResourceNotFoundError as error:  # forgotten since the create was refused
                raise RunStateConflict() from error

        self.rows.retried(attempt)

    def _checked(self, partition: str, keys: Iterable[Key], now: float) -> None:
        """The rows of these keys were looked at `now` (a key no longer registered is passed over)."""
        for key in sorted_keys(keys):
            try:
                self.rows.table.update_entity(
                    TableEntity(_registry_keys(partition, key), checked_at=float(now)), mode=UpdateMode.MERGE
                )
            except ResourceNotFoundError:  # forgotten meanwhile
                continue

    def _forget(self, partition: str, keys: Iterable[Key]) -> None:
        for key in sorted_keys(keys):
            ref = _registry_keys(partition, key)
            self.rows.table.delete_entity(ref["PartitionKey"], ref["RowKey"])  # no error when absent


def _registry_keys(partition: str, key: Key) -> dict[str, str]:
    return {"PartitionKey": partition, "RowKey": _key_row(key)}


def _key_row(key: Key) -> str:
    return _sha(f"{key[0]}\n{key[1]}")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
