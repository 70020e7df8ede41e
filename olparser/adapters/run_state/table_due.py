"""The run-state store's `due` partition (Azure Table storage): one row per run the timer should look at, never later
than the run's own row says (`due_at`). Mixed into TableRunStateStore (table_store.py)."""

from __future__ import annotations

import time
from typing import Any

from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableEntity, UpdateMode

from olparser.adapters.run_state.table_base import RunRows
from olparser.adapters.run_state.table_rows import unchanged as _unchanged
from olparser.runs import ledger

DUE_PARTITION = "due"


class DueRows(RunRows):
    """The incomplete-runs timer's rows (a mixin of TableRunStateStore)."""

    # --- the incomplete-runs timer -----------------------------------------------------------------------------
    def schedule(self, run_key: str, due_at: float | None, *, keep_earlier: bool = False) -> None:
        def attempt() -> None:
            entity = self._read(run_key)
            if entity is None:
                return
            new = TableEntity(entity)
            self._schedule_row(run_key, new, entity, due_at, keep_earlier, time.time())
            if new != entity:  # (a replayed run is not due, and stays so: no write)
                self._write(new, entity)
            if new.get("due_at") is None:
                self._due_row_gone(run_key, entity)

        self._with_retries(attempt)

    def _schedule_row(
        self,
        run_key: str,
        new: TableEntity,
        entity: TableEntity | None,
        due_at: float | None,
        keep_earlier: bool,
        now: float,
    ) -> None:
        """Set when the run is due in `new` (its row about to replace `entity`), and put its row in the `due`
        partition first when the run becomes due earlier than that row says: a due row may be earlier than the run
        (the timer's look at it moves it, `due_runs`), never later, so postponing a run writes its row only."""
        current = entity.get("due_at") if entity is not None else None
        at = ledger.due_at(self._record(entity), current, due_at, keep_earlier=keep_earlier, now=now)
        new["due_attempts"] = 0
        if at is None:
            new.pop("due_at", None)
            return
        new["due_at"] = float(at)
        if current is None or at < float(current):
            self._put_due(run_key, float(at))

    def _due_row_gone(self, run_key: str, entity: TableEntity | None) -> None:
        """The run is no longer due: its due row goes, after its row says so (a due row left by a crash: the timer
        finds the run not due and deletes it, `due_runs`)."""
        if entity is not None and entity.get("due_at") is not None:
            self._delete_due(run_key)

    def due_runs(self, now: float, limit: int) -> list[str]:
        rows = self.table.query_entities(
            "PartitionKey eq @p and due_at le @now",
            parameters={"p": DUE_PARTITION, "now": float(now)},
            select=["PartitionKey", "RowKey", "run_key", "due_at"],
        )
        found = sorted(((float(row["due_at"]), row["run_key"], row) for row in rows), key=lambda item: item[:2])
        due: list[Any] = []
        for _, run_key, row in found:  # the run's own row says when it is due (its due row may be earlier: postponed)
            if len(due) >= limit:
                break
            entity = self._read(run_key)
            at = entity.get("due_at") if entity is not None else None
            if at is not None and float(at) <= now:
                due.append(run_key)
                continue
            try:  # unless a writer changed the due row since the query (it scheduled the run meanwhile)
                if at is None:  # not due any more (a crash between its row's write and the due row's delete)
                    self.table.delete_entity(row["PartitionKey"], row["RowKey"], **_unchanged(row))
                else:  # postponed
                    self.table.update_entity(
                        TableEntity(row, due_at=float(at)), mode=UpdateMode.REPLACE, **_unchanged(row)
                    )
            except HttpResponseError as error:
                if error.status_code not in (404, 412):
                    raise
        return due

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

    def _put_due(self, run_key: str, due_at: float) -> None:
        keys = {"PartitionKey": DUE_PARTITION, "RowKey": self._keys(run_key)["RowKey"]}
        self.table.upsert_entity(TableEntity(keys, run_key=run_key, due_at=due_at), mode=UpdateMode.REPLACE)

    def _delete_due(self, run_key: str) -> None:
        self.table.delete_entity(DUE_PARTITION, self._keys(run_key)["RowKey"])  # no error when absent
