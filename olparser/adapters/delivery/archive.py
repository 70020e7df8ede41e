"""The event archive: every accepted event kept once, gzip-compressed, under the hour of its eventTime.

    {yyyy}/{mm}/{dd}/{hh}/{sha256 of the event JSON}.json.gz

in the blob container `lineage-archive` (ARCHIVE_STORE=blob, the default in Azure) or under
`$OL2PURVIEW_DATA_DIR/archive/` (ARCHIVE_STORE=folder, the default elsewhere). `ol2purview spark backfill` and
`ol2purview spark remap` read it back; the hour folders let them read only the hours a time range needs.

The queue trigger archives an event before it processes it, so the HTTP acknowledgement pays nothing, and an event
that later fails (and goes to the poison queue) is archived all the same. The name is the SHA-256 of the event's
JSON, so a retried message, a requeued one, or an event that Spark sent twice is stored once (a blob is written again
under the same name; a file that exists is left as it is).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from olparser.adapters.delivery.claim_check import BlobClaimCheckStore, FolderClaimCheckStore
from olparser.adapters.delivery.envelope import sha256_hex
from olparser.adapters.storage_account import StorageAccount, StorageConnection

if TYPE_CHECKING:
    from olparser.settings import Settings

ARCHIVE_SUFFIX = ".json.gz"
ARCHIVE_FOLDER = "archive"  # under the data folder
ARCHIVE_STORES = ("folder", "blob")


def event_hour(event_time: Any, now: datetime | None = None) -> datetime:
    """The UTC hour an eventTime falls in; an eventTime that cannot be read (the contract lets none through) files
    under the current hour."""
    moment = None
    if isinstance(event_time, str):
        try:
            moment = datetime.fromisoformat(event_time)
        except ValueError:
            moment = None
    if moment is None:
        moment = now or datetime.now(timezone.utc)
    moment = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
    return moment.replace(minute=0, second=0, microsecond=0)


def hour_prefix(hour: datetime) -> str:
    """`yyyy/mm/dd/hh`: the folder of one hour of the archive."""
    return f"{hour.year:04d}/{hour.month:02d}/{hour.day:02d}/{hour.hour:02d}"


def archive_name(event_json: bytes, event_time: Any) -> str:
    """Where an event is kept: `yyyy/mm/dd/hh/<sha256>.json.gz` (the same event always gets the same name)."""
    return f"{hour_prefix(event_hour(event_time))}/{sha256_hex(event_json)}{ARCHIVE_SUFFIX}"


def event_json(event: dict[str, Any]) -> bytes:
    """The archived form of an event: compact UTF-8 JSON, keys in the order received."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class ArchiveStore(Protocol):
    def keep(self, name: str, data: bytes) -> None:
        """Store `data` gzip-compressed as `name` (writing a name again stores the same event again)."""


class FolderArchiveStore:
    """Archive files under `root`, written as the folder claim checks are (a temporary file flushed to disk, then
    renamed into place); a name that exists is not written again."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def keep(self, name: str, data: bytes) -> None:
        if (self.root / name).exists():
            return
        folder, _, file_name = name.rpartition("/")
        parent, _, hour = folder.rpartition("/")
        FolderClaimCheckStore(self.root / parent, hour).put(file_name, data)


class BlobArchiveStore:
    """Archive blobs in a container of an Azure Storage account: the claim-check store's blob writer (gzip, created
    container, overwrite) under other names."""

    def __init__(self, connection_string: StorageConnection, container: str) -> None:
        self.blobs = BlobClaimCheckStore(connection_string, container)

    def keep(self, name: str, data: bytes) -> None:
        self.blobs.put(name, data)


class EventArchive:
    """Keeps accepted events in an ArchiveStore under their archive names."""

    def __init__(self, store: ArchiveStore) -> None:
        self.store = store

    def keep(self, event: dict[str, Any]) -> str:
        """Archive one event (a no-op when it is already there); returns its name."""
        data = event_json(event)
        name = archive_name(data, event.get("eventTime"))
        self.store.keep(name, data)
        return name


def archive_from_settings(settings: "Settings") -> EventArchive | None:
    """The archive chosen by ARCHIVE_EVENTS / ARCHIVE_STORE, or None when archiving is off."""
    if not settings.archive_events:
        return None
    if settings.archive_store == "folder":
        return EventArchive(FolderArchiveStore(settings.data_dir / ARCHIVE_FOLDER))
    if settings.archive_store == "blob":
        account = StorageAccount.required(settings, "ARCHIVE_STORE=blob")
        return EventArchive(BlobArchiveStore(account, settings.archive_container))
    raise ValueError(f"ARCHIVE_STORE must be one of {', '.join(ARCHIVE_STORES)}, not {settings.archive_store!r}")
