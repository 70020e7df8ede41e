"""The run-state stores (adapters over the interface in olparser/runs/store.py): SQLite, one local file (the
default), and Azure Table storage (scaled-out Function Apps). `open_run_state_store(settings)` picks one."""

from __future__ import annotations

from olparser.runs.store import RUN_STATE_TABLE, SQLITE_FILE_NAME, STORE_KINDS, RunStateStore
from olparser.settings import Settings


def open_run_state_store(settings: "Settings") -> RunStateStore:
    """The store chosen by RUN_STATE_STORE: `sqlite` (a file in data_dir) or `table` (AzureWebJobsStorage)."""
    kind = settings.run_state_store
    ttl = settings.run_state_ttl_seconds
    max_datasets = settings.max_datasets_per_run
    if kind == "sqlite":
        from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore

        return SqliteRunStateStore(
            settings.data_dir / SQLITE_FILE_NAME,
            ttl_seconds=ttl,
            max_datasets=max_datasets,
            temporary_seconds=settings.temporary_dataset_seconds,
        )
    if kind == "table":
        from olparser.adapters.run_state.table_store import TableRunStateStore
        from olparser.adapters.storage_account import StorageAccount

        account = StorageAccount.required(settings, "RUN_STATE_STORE=table")
        return TableRunStateStore.from_connection_string(
            account,
            RUN_STATE_TABLE,
            ttl_seconds=ttl,
            max_datasets=max_datasets,
            temporary_seconds=settings.temporary_dataset_seconds,
        )
    raise ValueError(f"RUN_STATE_STORE must be one of {', '.join(STORE_KINDS)}, not {kind!r}")
