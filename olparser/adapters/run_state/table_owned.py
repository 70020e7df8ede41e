"""The run-state store's rows for the entities the connector owns (Azure Table storage): a partition per entity, its
head row (users count, tombstone) and one row per run using it; the rows of the processes' newest writers. A part of
TableRunStateStore (table_store.py), given its table's row operations (`table_base.RunRows`)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from typing import Any, Iterable, Sequence, cast

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableEntity

from olparser.adapters.run_state.table_base import RunRows, RunStateConflict
from olparser.adapters.run_state.table_rows import put_op as _put_op
from olparser.adapters.run_state.table_rows import remember_row, with_etag
from olparser.adapters.run_state.table_rows import unchanged as _unchanged
from olparser.runs import ledger
from olparser.runs.ledger import Key, Writer, sorted_keys
from olparser.runs.store import TOMBSTONE_SECONDS, RunSession, WritersRead

OWNED_PREFIX = "own-"  # + sha256 of an entity's type and qualifiedName: one partition per connector-owned entity
HEAD_ROW = "entity"
# Rows `ref-xx` of the version that only counted users: looked for once (one request), then again after this long
# only, when none was found (no release of this version writes them; one still running during an upgrade might).
LEGACY_RECHECK_SECONDS = 3600.0
KNOWN_HEADS = 4096  # entities' head rows (and processes' writers rows) remembered as last read or written here


class OwnedRows:
    """Users of the connector's entities and writers of its processes (a part of TableRunStateStore), with the head
    rows and writers rows as last read or written here."""

    def __init__(self, rows: RunRows) -> None:
        self.rows = rows
        self._lock = threading.Lock()
        self._legacy_checked: tuple[bool, float] | None = None  # (any `ref-` row found, when looked, monotonic)
        self._heads: OrderedDict[str, TableEntity] = OrderedDict()  # entity partition -> its head row, as last seen
        self._writers: OrderedDict[str, TableEntity] = OrderedDict()  # process RowKey -> its writers row, as seen

    def contested(self, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        now = time.time() if now is None else now
        found = set()
        for key in sorted_keys(keys):
            head = self.rows.read_keys(_head_keys(key))
            if head is not None and _tombstoned(head, now):
                found.add(key)
        return frozenset(found)

    def finish_deletes(self, keys: Iterable[Key]) -> None:
        for key in sorted_keys(keys):
            # the head as this instance's release left it (its tombstone): deleted, or changed, if still so; a head
            # changed since fails that, and the retry reads it
            known = [self._known_head(key)]

            def attempt(key: Key = key, known: list[TableEntity | None] = known) -> None:
                head = known.pop() if known else None
                self._forget_head(key)
                if head is None:
                    head = self.rows.read_keys(_head_keys(key))
                    if head is None:
                        return
                try:
                    if ledger.orphaned(int(head.get("users", 0)), int(head.get("legacy", 0))):
                        self.rows.delete(head)
                        return
                except ResourceNotFoundError as error:  # deleted since it was known here
                    raise RunStateConflict() from error
                row = TableEntity(head)
                row.pop("deleting_since", None)
                self._remember_head(key, self.rows.write(row, head))

            self.rows.retried(attempt)

    def abandoned_deletes(self, now: float, limit: int) -> list[Key]:
        cutoff = {"cutoff": float(now - TOMBSTONE_SECONDS)}
        heads = self.rows.table.query_entities(
            f"PartitionKey ge '{OWNED_PREFIX}' and PartitionKey lt 'own.' and RowKey eq '{HEAD_ROW}' and users le 0 "
            "and legacy le 0 and deleting_since le @cutoff",
            parameters=cutoff,
        )
        found: list[Key] = []
        for head in heads:
            if len(found) >= limit:
                break
            try:
                self.rows.write(TableEntity(head, deleting_since=float(now)), head)
            except RunStateConflict:  # claimed or finished meanwhile
                continue
            found.append((head["type_name"], head["qualified_name"]))
        # tombstones of the version that counted users (rows `ref-xx`): moved to the rows of this version
        legacy = self.rows.table.query_entities(
            "PartitionKey ge 'ref-' and PartitionKey lt 'ref.' and users le 0 and deleting_since le @cutoff",
            parameters=cutoff,
        )
        for row in legacy:
            if len(found) >= limit:
                break
            key = (row["type_name"], row["qualified_name"])
            try:
                self.rows.table.create_entity(_head_row(key, None, users=0, legacy=0, deleting_since=float(now)))
            except ResourceExistsError:
                continue
            finally:
                self.rows.table.delete_entity(row["PartitionKey"], row["RowKey"])
            found.append(key)
        return sorted(found)

    # --- what the ledger holds for the connector: the entities some run uses (`ledger.orphaned`: not held) -------
    def owned(self, keys: Iterable[Key]) -> set[Key]:
        """A point read of each key's head row (a request per key); a key without a head, when the table holds rows
        of the version that only counted users, one more (its `ref-` row; and, once, `_legacy_rows`'s look)."""
        return {
            key
            for key in sorted_keys(keys)
            if not ledger.orphaned(*self._counts(key, self.rows.read_keys(_head_keys(key))))
        }

    def owned_of_types(self, type_names: Iterable[str]) -> list[Key]:
        """One query per type over the head rows of the `own-` partitions (a request per page: 1,000 rows, or less
        where the service ends one); when the table holds rows of the version that only counted users, one more per
        type over those (an entity with a head is counted by its head)."""
        found: set[Key] = set()
        for type_name in sorted(set(type_names)):
            heads = self.rows.table.query_entities(
                f"PartitionKey ge '{OWNED_PREFIX}' and PartitionKey lt 'own.' and RowKey eq '{HEAD_ROW}' and "
                "type_name eq @t",
                parameters={"t": type_name},
            )
            headed = set()
            for head in heads:
                key = (head["type_name"], head["qualified_name"])
                headed.add(key)
                if not ledger.orphaned(*self._counts(key, head)):
                    found.add(key)
            if not self._legacy_rows():
                continue
            legacy = self.rows.table.query_entities(
                "PartitionKey ge 'ref-' and PartitionKey lt 'ref.' and type_name eq @t", parameters={"t": type_name}
            )
            for row in legacy:
                key = (row["type_name"], row["qualified_name"])
                if key not in headed and not ledger.orphaned(0, _legacy_users(row)):
                    found.add(key)
        return sorted(found)

    def claim_user(self, key: Key, run_key: str, epoch: int, now: float, *, first: bool = False) -> bool:
        """Record the run among the entity's users (the head's count and the run's row change in one batch, in one
        partition); True if the entity is being deleted right now (the writer must wait). `first`: the run's record
        did not list the key (its entry is most likely not there)."""
        known = [self._known_head(key) if first else None]

        def attempt() -> bool:
            # the head as this instance last saw it, and the run not among its users yet (a run's first claim of an
            # entity): one batch, conditional on the head's ETag; a head changed since, or the run's entry already
            # there, fails it, and the retry reads both
            head = known.pop() if known else None
            user = None
            if head is None:
                head, user = self._owned_rows(key, run_key)
            tombstoned = head is not None and _tombstoned(head, now)
            new_epoch = ledger.claimed_epoch(int(user["epoch"]) if user is not None else None, epoch)
            if new_epoch is None:
                return tombstoned
            if user is not None:
                self.rows.write(TableEntity(user, epoch=new_epoch), user)
                return tombstoned
            users, legacy = self._counts(key, head)
            new_head = _head_row(key, head, users=users + 1, legacy=legacy)
            done = self._transact(
                [
                    _put_op(new_head, head),
                    ("create", TableEntity(_user_keys(key, run_key), run_key=run_key, epoch=new_epoch)),
                ],
                key,
            )
            self._remember_head(key, new_head, done)
            return tombstoned

        return self.rows.retried(attempt)

    def release_user(self, key: Key, run_key: str, epoch: int, now: float) -> bool:
        """Remove the run from the entity's users (if the intentions of `epoch` still may); True if none is left
        (the entity is then tombstoned: delete it)."""

        def attempt() -> bool:
            head, user = self._owned_rows(key, run_key)
            users, legacy = self._counts(key, head)
            # the head is remembered as written here: `finish_deletes` deletes it without reading it again
            if user is not None and ledger.releases(int(user["epoch"]), epoch):  # (releases None: never)
                users = max(users - 1, 0)
                unused = ledger.orphaned(users, legacy)
                since = {"deleting_since": float(now)} if unused else {}
                new_head = _head_row(key, head, users=users, legacy=legacy, **since)
                self._remember_head(
                    key, new_head, self._transact([_put_op(new_head, head), ("delete", user, _unchanged(user))], key)
                )
                return unused
            if not ledger.orphaned(users, legacy):
                return False
            self._forget_head(key)
            self._remember_head(
                key, self.rows.write(_head_row(key, head, users=users, legacy=legacy, deleting_since=float(now)), head)
            )
            return True

        return self.rows.retried(attempt)

    def _owned_rows(self, key: Key, run_key: str) -> tuple[TableEntity | None, TableEntity | None]:
        """The entity's head row and the run's row among its users (one query)."""
        head_keys, user_keys = _head_keys(key), _user_keys(key, run_key)
        rows = list(
            self.rows.table.query_entities(
                "PartitionKey eq @p and (RowKey eq @h or RowKey eq @u )",
                parameters={"p": head_keys["PartitionKey"], "h": HEAD_ROW, "u": user_keys["RowKey"]},
            )
        )
        head = next((r for r in rows if r["RowKey"] == HEAD_ROW), None)
        self._remember_head(key, head)
        return head, next((r for r in rows if r["RowKey"] != HEAD_ROW), None)

    def _known_head(self, key: Key) -> TableEntity | None:
        with self._lock:
            head: TableEntity | None = self._heads.get(_head_keys(key)["PartitionKey"])
            return head

    def _remember_head(self, key: Key, head: TableEntity | None, written: list[Any] | None = None) -> None:
        """Remember the entity's head row as read (`written`: the answers of the batch that wrote it, its ETag
        first); None forgets it."""
        if written and head is not None:
            head = with_etag(head, (written[0] or {}).get("etag"))
        with self._lock:
            remember_row(self._heads, _head_keys(key)["PartitionKey"], head, KNOWN_HEADS)

    def _forget_head(self, key: Key) -> None:
        self._remember_head(key, None)

    def _counts(self, key: Key, head: TableEntity | None) -> tuple[int, int]:
        """The users the head counts, and the users an older version counted (read from its row once, when the
        entity has no head yet: those never release, so the entity is kept)."""
        if head is not None:
            return int(head.get("users", 0)), int(head.get("legacy", 0))
        if not self._legacy_rows():
            return 0, 0
        return 0, _legacy_users(self.rows.read_keys(ref_keys(key)))

    def _legacy_rows(self) -> bool:
        """Whether the table holds rows `ref-xx` of the version that only counted users (one request, once, and
        again after LEGACY_RECHECK_SECONDS when there were none)."""
        checked = self._legacy_checked
        if checked is None or (not checked[0] and time.monotonic() - checked[1] > LEGACY_RECHECK_SECONDS):
            rows = self.rows.table.query_entities(
                "PartitionKey ge 'ref-' and PartitionKey lt 'ref.'", select=["PartitionKey"], results_per_page=1
            )
            # (the first row, following continuations: a scan across partitions may answer a page with none)
            checked = (next(iter(rows), None) is not None, time.monotonic())
            self._legacy_checked = checked
        found: bool = checked[0]
        return found

    def _transact(self, operations: list[Any], key: Key) -> list[Any]:
        """`RunRows.transact`, forgetting the head of entity `key` (which the batch changes) on any failure."""
        try:
            return self.rows.transact(operations)
        except (RunStateConflict, HttpResponseError):
            self._forget_head(key)
            raise

    def process_writers(
        self, qualified_names: Sequence[str], *, session: RunSession | None = None
    ) -> dict[str, tuple[float, str]]:
        found: dict[str, tuple[float, str]] = {}
        for name in dict.fromkeys(qualified_names):
            keys = self._process_keys(name)
            # remembered only in a session that folds: its commit's change of the writers checks them
            entity = self._known_writers(keys) if session is not None and session.folds else None
            remembered = entity is not None
            if entity is None:
                entity = self.rows.read_keys(keys)
                self._remember_writers(keys, entity)
            if session is not None:  # for the commit's change of its writers (a conditional write)
                session.note(name, WritersRead(tuple(_writers_of(entity)), entity, remembered))
            if entity is not None:
                found[name] = (float(entity["run_time"]), str(entity.get("run_key", "")))
        return found

    def change_writers(
        self,
        name: str,
        run_key: str,
        intentions: ledger.Intentions,
        taken: WritersRead | None,
        seen: Sequence[Writer] | None,
    ) -> ledger.WriterChange:
        """Carry out the intentions' part for process `name` (written only if it changes anything). Its first attempt
        starts from the row as the session's `process_writers` saw it (`taken`) — read, or as this instance last
        read or wrote it: the write is conditional on it, and a row changed since fails it; nothing to write on a
        remembered row is confirmed by a read. `seen`: `ledger.writers_after`'s."""
        keys = self._process_keys(name)
        read: list[tuple[TableEntity | None, bool]] = []
        if taken is not None:  # (the row this store noted: a TableEntity, or None)
            read.append((cast("TableEntity | None", taken.row), taken.remembered))

        def attempt() -> ledger.WriterChange:
            entity, remembered = read.pop() if read else (self.rows.read_keys(keys), False)
            while True:
                writers = _writers_of(entity)
                change = ledger.writers_after(writers, run_key, intentions, name, seen=seen)
                if change.writers != writers or not remembered:
                    break
                entity, remembered = (
                    self.rows.read_keys(keys),
                    False,
                )  # still so? (another instance may have changed it)
            self._remember_writers(keys, entity)
            if change.writers == writers:
                return change
            try:
                if not change.writers:
                    if entity is not None:
                        self.rows.delete(entity)
                    self._remember_writers(keys, None)
                    return change
                written = self.rows.write(
                    TableEntity(
                        keys,
                        run_time=change.writers[0][0],
                        run_key=change.writers[0][1],
                        writers=json.dumps(change.writers),
                    ),
                    entity,
                )
            except (RunStateConflict, HttpResponseError):  # what the row now is is unknown
                self._remember_writers(keys, None)
                raise
            self._remember_writers(keys, written)
            return change

        return self.rows.retried(attempt)

    def reset_process_runs(self, qualified_names: Sequence[str]) -> int:
        reset = 0
        for name in dict.fromkeys(qualified_names):
            keys = self._process_keys(name)
            entity = self.rows.read_keys(keys)
            self._remember_writers(keys, None)
            if entity is not None:
                self.rows.table.delete_entity(entity["PartitionKey"], entity["RowKey"])  # absent meanwhile: no error
                reset += 1
        return reset

    def _known_writers(self, keys: dict[str, str]) -> TableEntity | None:
        with self._lock:
            row: TableEntity | None = self._writers.get(keys["RowKey"])
            return row

    def _remember_writers(self, keys: dict[str, str], row: TableEntity | None) -> None:
        """Remember a process's writers row as read or written here (with its ETag); None forgets it."""
        with self._lock:
            remember_row(self._writers, keys["RowKey"], row, KNOWN_HEADS)

    @staticmethod
    def _process_keys(qualified_name: str) -> dict[str, str]:
        digest = hashlib.sha256(qualified_name.encode("utf-8")).hexdigest()
        return {"PartitionKey": "process-" + digest[:2], "RowKey": digest}


def _writers_of(entity: TableEntity | None) -> list[Writer]:
    """A process's writers as its row lists them, newest first."""
    if entity is None:
        return []
    return ledger.stored_writers(entity.get("writers"), entity["run_time"], entity.get("run_key", ""))


def ref_keys(key: Key) -> dict[str, str]:
    """The row `ref-xx` of the version that only counted users."""
    digest = hashlib.sha256(f"{key[0]}\n{key[1]}".encode("utf-8")).hexdigest()
    return {"PartitionKey": "ref-" + digest[:2], "RowKey": digest}


def _head_keys(key: Key) -> dict[str, str]:
    digest = hashlib.sha256(f"{key[0]}\n{key[1]}".encode("utf-8")).hexdigest()
    return {"PartitionKey": OWNED_PREFIX + digest, "RowKey": HEAD_ROW}


def _user_keys(key: Key, run_key: str) -> dict[str, str]:
    return {
        "PartitionKey": _head_keys(key)["PartitionKey"],
        "RowKey": "run-" + hashlib.sha256(run_key.encode("utf-8")).hexdigest(),
    }


def _head_row(key: Key, head: TableEntity | None, **values: Any) -> TableEntity:
    """The entity's head row (its users count, its tombstone): a copy of `head` when there is one, else a new row;
    `values` set on top."""
    row = (
        TableEntity(head) if head is not None else TableEntity(_head_keys(key), type_name=key[0], qualified_name=key[1])
    )
    row.update(values)
    return row


def _legacy_users(row: TableEntity | None) -> int:
    """The users a row `ref-xx` of the version that only counted users counts (none without a row)."""
    return max(int(row.get("users", 0)), 0) if row is not None else 0


def _tombstoned(ref: TableEntity, now: float) -> bool:
    since = ref.get("deleting_since")
    return since is not None and float(since) > now - TOMBSTONE_SECONDS
