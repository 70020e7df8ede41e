"""The run-history stores (adapters over the interface in olparser/history/store.py): SQLite, one local file,
and Azure Table storage. `open_history_store(settings)` picks the one next to the run state."""

from __future__ import annotations

from olparser.history.store import HISTORY_TABLE, SQLITE_FILE_NAME, RunHistoryStore
from olparser.settings import Settings


def open_history_store(settings: "Settings") -> RunHistoryStore:
    """The store next to the run state: SQLite in the data folder, or Table storage (RUN_STATE_STORE=table)."""
    days = settings.run_history_days
    if settings.run_state_store == "table":
        from olparser.adapters.history_stores.table_store import TableHistoryStore
        from olparser.adapters.storage_account import StorageAccount

        account = StorageAccount.required(settings, "RUN_STATE_STORE=table")
        return TableHistoryStore.from_connection_string(account, HISTORY_TABLE, retention_days=days)
    from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore

    return SqliteHistoryStore(settings.data_dir / SQLITE_FILE_NAME, retention_days=days)
