"""Where events too big for a queue message are kept: Azure Blob storage, or a local folder in the embedded mode.

Stored events are gzip-compressed JSON. References are "<container>/<name>" as carried in a claim-check envelope.
Writing the same name twice stores the same bytes again, so retried uploads are harmless.
"""

from __future__ import annotations

import gzip
import os
import tempfile
from pathlib import Path
from typing import Protocol

from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import ContentSettings

from olparser.adapters.delivery.group_commit import GroupCommit
from olparser.adapters.storage_account import StorageConnection, storage_account

GZIP_LEVEL = 6


class ClaimCheckError(LookupError):
    """A claim check that cannot be redeemed: unknown reference, missing or corrupt stored event."""


class ClaimCheckStore(Protocol):
    """Keeps event bytes under a name; `get` returns exactly what `put` stored."""

    container: str

    def put(self, name: str, data: bytes) -> str:
        """Store `data` as `name`; returns the reference "<container>/<name>"."""

    def get(self, reference: str) -> bytes:
        """The bytes stored at `reference`; raises `ClaimCheckError` when there are none."""


def split_reference(reference: str) -> tuple[str, str]:
    """ "<container>/<name>" -> (container, name); raises `ClaimCheckError` for anything else."""
    container, _, name = reference.partition("/")
    if not container or not name or name.startswith("/"):
        raise ClaimCheckError(f"claim-check reference {reference!r} is not '<container>/<name>'")
    return container, name


def _decompress(reference: str, stored: bytes) -> bytes:
    try:
        return gzip.decompress(stored)
    except (OSError, EOFError) as exc:
        raise ClaimCheckError(f"stored event {reference!r} is not valid gzip: {exc}") from None


RENAME_WINDOW_SECONDS = 0.002  # how long a group of renames waits for company (only when puts are concurrent)


def _rename_durably(moves: list[tuple[str, Path]]) -> list[None]:
    """Move each flushed file to its name, then flush each folder once: the names are on disk when this returns."""
    for tmp, target in moves:
        os.replace(tmp, target)
    for folder in {target.parent for _tmp, target in moves}:
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return [None] * len(moves)


class BlobClaimCheckStore:
    """Claim checks in an Azure Storage blob container (created on first use)."""

    def __init__(self, connection_string: StorageConnection, container: str) -> None:
        self.container = container
        self._service = storage_account(connection_string).blob_service()
        self._container_client = self._service.get_container_client(container)
        self._container_ready = False

    def put(self, name: str, data: bytes) -> str:
        if not self._container_ready:
            try:
                self._container_client.create_container()
            except ResourceExistsError:
                pass
            self._container_ready = True
        self._container_client.upload_blob(
            name,
            gzip.compress(data, GZIP_LEVEL),
            overwrite=True,
            content_settings=ContentSettings(content_type="application/gzip"),
        )
        return f"{self.container}/{name}"

    def get(self, reference: str) -> bytes:
        container, name = split_reference(reference)
        try:
            stored = self._service.get_blob_client(container, name).download_blob().readall()
        except ResourceNotFoundError:
            raise ClaimCheckError(f"stored event {reference!r} not found") from None
        return _decompress(reference, stored)


class FolderClaimCheckStore:
    """Claim checks as files in `root/<container>/`, written atomically and flushed to disk (embedded mode).

    Each file is flushed by its writer (concurrent flushes share the file system's journal commits); the renames
    that give files their names are group-committed (adapters/delivery/group_commit.py): the folder is flushed once
    for all the files renamed meanwhile, so that `put` returns only when the name, too, is on disk.
    """

    def __init__(self, root: Path, container: str) -> None:
        self.container = container
        self._root = Path(root)
        self._renames: GroupCommit[tuple[str, Path], None] = GroupCommit(_rename_durably, RENAME_WINDOW_SECONDS)

    def put(self, name: str, data: bytes) -> str:
        target = self._path(self.container, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(gzip.compress(data, GZIP_LEVEL))
                out.flush()
                os.fsync(out.fileno())
            self._renames.submit((tmp, target))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return f"{self.container}/{name}"

    def get(self, reference: str) -> bytes:
        container, name = split_reference(reference)
        try:
            stored = self._path(container, name).read_bytes()
        except FileNotFoundError:
            raise ClaimCheckError(f"stored event {reference!r} not found") from None
        return _decompress(reference, stored)

    def _path(self, container: str, name: str) -> Path:
        if any(part in ("", ".", "..") or "/" in part or "\\" in part for part in (container, name)):
            raise ClaimCheckError(f"claim-check reference {container + '/' + name!r} is not a plain file name")
        return self._root / container / name
