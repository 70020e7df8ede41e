"""When the incomplete-runs timer should look at a run, in Azure Table storage: the run's own row says it (`due_at`,
written with the row, in the same request), and the timer finds the due runs by one query over the 256 run
partitions (PartitionKey `00`..`ff`, `due_at le now`: the rows of other partitions are not read). A part of
TableRunStateStore (table_store.py), given its table's row operations (`table_base.RunRows`).

The previous releases also wrote a row per due run in a shared `due` partition (PartitionKey `due`, RowKey = the
run's RowKey, `run_key`, `due_at`; never later than the run's row), written before the run's row and deleted after
it. This release writes none: the timer's query also returns such rows (`due` sorts within `00`..`ff`), takes the
run's key from them where the run's row has none (a RowKey hashed from a key Table storage does not allow), and
deletes those whose run is no longer due (or moves them to the run's due time, as the previous release did)."""

from __future__ import annotations

import time

from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableEntity, UpdateMode

from olparser.adapters.run_state.table_base import RunRows
from olparser.adapters.run_state.table_rows import unchanged as _unchanged
from olparser.runs import ledger

DUE_PARTITION = "due"  # the previous releases' due rows: read and cleared, no longer written
RUN_PARTITIONS = ("00", "g")  # the runs' partitions (2 hex digits) sort in [00, g); so does `due`, no other one


def is_run_partition(partition: str) -> bool:
    """A run's (or static declaration's) partition: 2 hex digits of the sha256 of its key."""
    return len(partition) == 2 and all(c in "0123456789abcdef" for c in partition)


def name_run(row: TableEntity, run_key: str) -> None:
    """The run's key in its row when the RowKey is a hash of it: the timer's query answers with the key."""
    if row["RowKey"] != run_key:
        row["run_key"] = run_key


class DueRows:
    """The incomplete-runs timer's look at the runs (a part of TableRunStateStore)."""

    def __init__(self, rows: RunRows) -> None:
        self.rows = rows

    # --- the incomplete-runs timer -----------------------------------------------------------------------------
    def schedule(self, run_key: str, due_at: float | None, *, keep_earlier: bool = False) -> None:
        def attempt() -> None:
            entity = self.rows.read(run_key)
            if entity is None:
                return
            new = TableEntity(entity)
            self.schedule_row(run_key, new, entity, due_at, keep_earlier, time.time())
            if new != entity:  # (a replayed run is not due, and stays so: no write)
                self.rows.write(new, entity)

        self.rows.retried(attempt)

    def schedule_row(
        self,
        run_key: str,
        new: TableEntity,
        entity: TableEntity | None,
        due_at: float | None,
        keep_earlier: bool,
        now: float,
    ) -> None:
        """Set when the run is due in `new` (its row about to replace `entity`)."""
        current = entity.get("due_at") if entity is not None else None
        at = ledger.due_at(self.rows.record(entity), current, due_at, keep_earlier=keep_earlier, now=now)
        new["due_attempts"] = 0
        if at is None:
            new.pop("due_at", None)
            return
        new["due_at"] = float(at)
        name_run(new, run_key)

    def due_runs(self, now: float, limit: int) -> list[str]:
        rows = self.rows.table.query_entities(
            "PartitionKey ge @low and PartitionKey lt @high and due_at le @now",
            parameters={"low": RUN_PARTITIONS[0], "high": RUN_PARTITIONS[1], "now": float(now)},
            select=["PartitionKey", "RowKey", "run_key", "due_at"],
        )
        runs: dict[str, TableEntity] = {}  # RowKey -> the run's row, due
        legacy: dict[str, TableEntity] = {}  # RowKey -> the previous release's due row
        for row in rows:
            if is_run_partition(row["PartitionKey"]):
                runs[row["RowKey"]] = row
            elif row["PartitionKey"] == DUE_PARTITION:
                legacy[row["RowKey"]] = row
        found: list[tuple[float, str]] = []
        for row_key, row in runs.items():
            named = row.get("run_key") or (legacy[row_key]["run_key"] if row_key in legacy else None)
            run_key = named or (None if row_key.startswith("sha256-") else row_key)
            if run_key is not None:
                found.append((float(row["due_at"]), run_key))
        for row_key, row in legacy.items():
            if row_key not in runs:  # its run is due later, or no longer (it reads its run's row, once)
                self._clear_legacy_due(row)
        return [run_key for _, run_key in sorted(found)[:limit]]

    def _clear_legacy_due(self, row: TableEntity) -> None:
        """A previous release's due row whose run is not due now: deleted, or moved to when the run is due (the
        row's run key is kept while the run is due: the run's row may not have it)."""
        entity = self.rows.read(row["run_key"])
        at = entity.get("due_at") if entity is not None else None
        try:  # unless a writer of the previous release changed the due row since the query
            if at is None:
                self.rows.table.delete_entity(row["PartitionKey"], row["RowKey"], **_unchanged(row))
            else:
                self.rows.table.update_entity(
                    TableEntity(row, due_at=float(at)), mode=UpdateMode.REPLACE, **_unchanged(row)
                )
        except HttpResponseError as error:
            if error.status_code not in (404, 412):
                raise

    def postpone(self, run_key: str, due_at: float) -> int:
        def attempt() -> int:
            entity = self.rows.read(run_key)
            if entity is None:
                return 0
            attempts = int(entity.get("due_attempts", 0)) + 1
            new = TableEntity(entity)
            new.update(due_at=float(due_at), due_attempts=attempts)
            name_run(new, run_key)
            self.rows.write(new, entity)
            return attempts

        return self.rows.retried(attempt)
