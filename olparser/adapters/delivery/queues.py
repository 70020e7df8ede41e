"""The lineage queue: a small interface with an Azure Storage Queue implementation and a SQLite one (embedded mode).

Both behave like Azure Storage queues: a received message stays invisible for its visibility timeout, then comes
back with a higher dequeue count unless it was deleted with its current pop receipt. Texts travel base64-encoded on
Azure, as the Functions queue trigger expects.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.storage.queue import QueueClient, TextBase64DecodePolicy, TextBase64EncodePolicy

from olparser.adapters.delivery.group_commit import GroupCommit
from olparser.adapters.storage_account import StorageAccount, StorageConnection, storage_account
from olparser.settings import Settings

MAX_MESSAGE_BYTES = 64 * 1024  # as stored: the base64 text
MAX_RECEIVE = 32  # messages per receive call (the Azure limit)
NEVER_EXPIRE = -1  # time-to-live for sent messages: an accepted event must not silently expire after 7 days
_QUEUE_NAME = re.compile(r"^(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$")


class MessageGone(LookupError):
    """The message was deleted, or its pop receipt is stale (its visibility ran out and someone else received it)."""


class MessageTooLarge(ValueError):
    """The message text would exceed a queue message once base64-encoded."""


@dataclass(frozen=True)
class QueuedMessage:
    """A received message; `pop_receipt` proves the receiver still holds it."""

    id: str
    pop_receipt: str
    dequeue_count: int
    text: str


class LineageQueue(Protocol):
    name: str

    def send(self, text: str) -> str:
        """Enqueue `text`; returns the new message id."""

    def receive(self, max_messages: int, visibility_timeout: float) -> list[QueuedMessage]:
        """Up to `max_messages` (at most 32) visible messages, hidden for `visibility_timeout` seconds."""

    def delete(self, message: QueuedMessage) -> None:
        """Remove a received message; raises `MessageGone` if the pop receipt is no longer current."""

    def update_visibility(self, message: QueuedMessage, visibility_timeout: float) -> QueuedMessage:
        """Hide the message for `visibility_timeout` seconds from now (0: visible now); returns it with its new
        pop receipt. Raises `MessageGone` like `delete`."""

    def approximate_count(self) -> int:
        """Messages in the queue, visible or not (approximate on Azure)."""


class QueueService(Protocol):
    def queue(self, name: str) -> LineageQueue:
        """The queue called `name`, created if missing."""


def poison_queue_name(queue_name: str) -> str:
    """The queue where the Functions host moves messages that failed `maxDequeueCount` times."""
    return f"{queue_name}-poison"


def check_queue_name(name: str) -> str:
    """Azure's rule: 3-63 characters, lowercase letters, digits and single hyphens, starting and ending alphanumeric."""
    if not _QUEUE_NAME.match(name):
        raise ValueError(f"invalid queue name {name!r}: use 3-63 lowercase letters, digits and single hyphens")
    return name


def base64_size(text: str) -> int:
    return 4 * math.ceil(len(text.encode("utf-8")) / 3)


def _check_size(text: str) -> None:
    size = base64_size(text)
    if size > MAX_MESSAGE_BYTES:
        raise MessageTooLarge(f"queue message of {size} bytes (base64) exceeds the {MAX_MESSAGE_BYTES}-byte limit")


def _check_receive(max_messages: int) -> None:
    if not 1 <= max_messages <= MAX_RECEIVE:
        raise ValueError(f"max_messages must be between 1 and {MAX_RECEIVE}, got {max_messages}")


# --- Azure Storage queues ---------------------------------------------------------------------------------------


class AzureLineageQueue:
    """One Azure Storage queue, with the encoding its `AzureQueueService` was given (base64 by default)."""

    def __init__(self, client: QueueClient) -> None:
        self.name = client.queue_name
        self._client = client

    def send(self, text: str) -> str:
        _check_size(text)
        return self._client.send_message(text, time_to_live=NEVER_EXPIRE).id

    def receive(self, max_messages: int, visibility_timeout: float) -> list[QueuedMessage]:
        _check_receive(max_messages)
        pages = self._client.receive_messages(
            messages_per_page=max_messages,
            max_messages=max_messages,
            visibility_timeout=max(1, math.ceil(visibility_timeout)),
        )
        # A received message has its pop receipt and dequeue count (the SDK's QueueMessage types them as optional).
        return [QueuedMessage(m.id, m.pop_receipt, m.dequeue_count, m.content) for m in pages]  # type: ignore[arg-type]

    def delete(self, message: QueuedMessage) -> None:
        try:
            self._client.delete_message(message.id, message.pop_receipt)
        except (ResourceNotFoundError, HttpResponseError) as exc:
            raise _gone_or_raise(message, exc) from None

    def update_visibility(self, message: QueuedMessage, visibility_timeout: float) -> QueuedMessage:
        try:
            updated = self._client.update_message(
                message.id, message.pop_receipt, visibility_timeout=max(0, math.ceil(visibility_timeout))
            )
        except (ResourceNotFoundError, HttpResponseError) as exc:
            raise _gone_or_raise(message, exc) from None
        # An updated message has a new pop receipt (the SDK's QueueMessage types it as optional).
        return QueuedMessage(message.id, updated.pop_receipt, message.dequeue_count, message.text)  # type: ignore[arg-type]

    def approximate_count(self) -> int:
        # The service always answers the count (the SDK's QueueProperties types it as optional).
        return self._client.get_queue_properties().approximate_message_count  # type: ignore[return-value]


def _gone_or_raise(message: QueuedMessage, exc: HttpResponseError) -> Exception:
    code = getattr(exc, "error_code", None) or ""
    if isinstance(exc, ResourceNotFoundError) or code in ("MessageNotFound", "PopReceiptMismatch"):
        return MessageGone(f"message {message.id} was deleted or received again by another consumer")
    return exc


class AzureQueueService:
    """Azure Storage queues from a connection string (`UseDevelopmentStorage=true` means Azurite's default ports) or
    a StorageAccount (identity-based)."""

    def __init__(
        self, connection_string: StorageConnection, message_encoding: str = "base64", **client_options: Any
    ) -> None:
        """`message_encoding` as in host.json ("base64" or "none"); `client_options` go to every `QueueClient`
        (e.g. `retry_policy=ExponentialRetry(...)`)."""
        if message_encoding not in ("base64", "none"):
            raise ValueError(f"message_encoding must be 'base64' or 'none', got {message_encoding!r}")
        self._account = storage_account(connection_string)
        self._client_options = dict(client_options)
        if message_encoding == "base64":
            self._client_options.update(
                message_encode_policy=TextBase64EncodePolicy(), message_decode_policy=TextBase64DecodePolicy()
            )
        self._queues: dict[str, AzureLineageQueue] = {}
        self._lock = threading.Lock()

    def queue(self, name: str) -> AzureLineageQueue:
        with self._lock:
            if name not in self._queues:
                client = self._account.queue_client(check_queue_name(name), **self._client_options)
                try:
                    client.create_queue()
                except ResourceExistsError:
                    pass
                self._queues[name] = AzureLineageQueue(client)
            return self._queues[name]


# --- SQLite (embedded mode) -------------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS queue_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    queue TEXT NOT NULL,
    id TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    dequeue_count INTEGER NOT NULL DEFAULT 0,
    visible_at REAL NOT NULL,
    pop_receipt TEXT
);
CREATE INDEX IF NOT EXISTS queue_messages_visible ON queue_messages (queue, visible_at, seq);
"""


SEND_WINDOW_SECONDS = 0.002  # how long a group commit of sends waits for company (only when sends are concurrent)
SEND_BATCH_MAX = 256  # messages in one group commit at the most


class SqliteQueueService:
    """Queues in one SQLite file (WAL, synchronous=FULL: a sent message is on disk when `send` returns).

    Concurrent sends are group-committed: one transaction and one fsync for all the messages sent meanwhile
    (adapters/delivery/group_commit.py). Safe to share between threads, and between processes using the same file.
    """

    def __init__(self, path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        self.sends = GroupCommit(self._insert, SEND_WINDOW_SECONDS, SEND_BATCH_MAX)

    def queue(self, name: str) -> SqliteLineageQueue:
        return SqliteLineageQueue(check_queue_name(name), self._db, self._lock, self.sends)

    def _insert(self, rows: list[tuple[str, str, str, float]]) -> list[None]:
        """One transaction for the rows (queue, id, text, visible_at) of a group commit."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT INTO queue_messages (queue, id, text, visible_at) VALUES (?, ?, ?, ?)", rows
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return [None] * len(rows)

    def close(self) -> None:
        with self._lock:
            self._db.close()


class SqliteLineageQueue:
    """One queue inside a `SqliteQueueService` file, with Azure Storage queue semantics."""

    def __init__(
        self,
        name: str,
        db: sqlite3.Connection,
        lock: threading.Lock,
        sends: GroupCommit[tuple[str, str, str, float], None],
    ) -> None:
        self.name = name
        self._db = db
        self._lock = lock
        self._sends = sends

    def send(self, text: str) -> str:
        _check_size(text)
        message_id = str(uuid.uuid4())
        self._sends.submit((self.name, message_id, text, time.time()))
        return message_id

    def receive(self, max_messages: int, visibility_timeout: float) -> list[QueuedMessage]:
        _check_receive(max_messages)
        now = time.time()
        receipt = uuid.uuid4().hex
        with self._lock:
            rows = self._db.execute(
                "UPDATE queue_messages SET dequeue_count = dequeue_count + 1, visible_at = ?, pop_receipt = ? "
                "WHERE seq IN (SELECT seq FROM queue_messages WHERE queue = ? AND visible_at <= ? ORDER BY seq LIMIT ?) "
                "RETURNING seq, id, dequeue_count, text",
                (now + visibility_timeout, receipt, self.name, now, max_messages),
            ).fetchall()
        return [QueuedMessage(mid, receipt, count, text) for _seq, mid, count, text in sorted(rows)]

    def delete(self, message: QueuedMessage) -> None:
        with self._lock:
            cursor = self._db.execute(
                "DELETE FROM queue_messages WHERE queue = ? AND id = ? AND pop_receipt = ?",
                (self.name, message.id, message.pop_receipt),
            )
        if cursor.rowcount != 1:
            raise MessageGone(f"message {message.id} was deleted or received again by another consumer")

    def update_visibility(self, message: QueuedMessage, visibility_timeout: float) -> QueuedMessage:
        receipt = uuid.uuid4().hex
        with self._lock:
            cursor = self._db.execute(
                "UPDATE queue_messages SET visible_at = ?, pop_receipt = ? WHERE queue = ? AND id = ? AND pop_receipt = ?",
                (time.time() + visibility_timeout, receipt, self.name, message.id, message.pop_receipt),
            )
        if cursor.rowcount != 1:
            raise MessageGone(f"message {message.id} was deleted or received again by another consumer")
        return QueuedMessage(message.id, receipt, message.dequeue_count, message.text)

    def approximate_count(self) -> int:
        with self._lock:
            count: int = self._db.execute(
                "SELECT count(*) FROM queue_messages WHERE queue = ?", (self.name,)
            ).fetchone()[0]
        return count


def embedded_queue_path(data_dir: Path) -> Path:
    """The SQLite file holding the embedded mode's queues."""
    return Path(data_dir) / "queues.sqlite3"


def queue_service_from_settings(settings: Settings, message_encoding: str = "base64") -> QueueService:
    """Azure Storage queues when a storage connection is set (AzureWebJobsStorage, or its identity-based settings),
    else the embedded SQLite queues in data_dir."""
    if (account := StorageAccount.from_settings(settings)) is not None:
        return AzureQueueService(account, message_encoding)
    return SqliteQueueService(embedded_queue_path(settings.data_dir))
