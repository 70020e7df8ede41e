"""The storage account behind `AzureWebJobsStorage` (queues, run-state and history tables, claim-check and archive
blobs), reached with its connection string or, when none is set, with the app's managed identity.

An identity-based connection is what Azure policy "Storage accounts should prevent shared key access" requires: the
template sets `AzureWebJobsStorage__accountName` (and the service URIs) for the Functions host and for this code, and
gives the app's identity the storage data roles. The credential is azure-identity's DefaultAzureCredential (the
managed identity in Azure; `AZURE_CLIENT_ID` chooses a user-assigned one), created once per process.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping, Union

from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient

from olparser.settings import Settings, StorageEndpoints

# One operation of a Table storage batch (TableClient.submit_transaction): ("create", row), ("delete", keys),
# ("update", row, {"mode": ..., "etag": ..., "match_condition": ...}); an answer is the operation's response (its ETag).
TableOperation = Union[tuple[str, Mapping[str, Any]], tuple[str, Mapping[str, Any], Mapping[str, Any]]]
TableAnswer = Mapping[str, Any]


@functools.cache
def default_credential() -> Any:
    """One DefaultAzureCredential for every storage client of the process (its tokens are cached inside it)."""
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


class StorageAccount:
    """Builds the storage SDK clients from a connection string, or from service URIs and a token credential."""

    def __init__(
        self, connection_string: str | None = None, endpoints: StorageEndpoints | None = None, credential: Any = None
    ) -> None:
        if (connection_string is None) == (endpoints is None):
            raise ValueError("a storage account needs either a connection string or service URIs")
        self.connection_string = connection_string
        self.endpoints = endpoints
        self._credential = credential

    @classmethod
    def from_settings(cls, settings: Settings, credential: Any = None) -> "StorageAccount | None":
        """The connection string (AzureWebJobsStorage) when set, else the identity-based settings, else None."""
        if settings.storage_connection:
            return cls(connection_string=settings.storage_connection)
        if settings.storage_endpoints is not None:
            return cls(endpoints=settings.storage_endpoints, credential=credential)
        return None

    @classmethod
    def required(cls, settings: Settings, what: str) -> "StorageAccount":
        """The account from the settings; a ValueError naming `what` (the setting that needs it) when none is set."""
        account = cls.from_settings(settings)
        if account is None:
            raise ValueError(
                f"{what} needs AzureWebJobsStorage (a connection string, or "
                "AzureWebJobsStorage__accountName for the managed identity)"
            )
        return account

    @property
    def _connection(self) -> str:
        """The connection string of an account built without service URIs (the constructor takes one of them)."""
        assert self.connection_string is not None, "a storage account built from service URIs has no connection string"
        return self.connection_string

    @property
    def uses_identity(self) -> bool:
        return self.endpoints is not None

    @property
    def credential(self) -> Any:
        if self._credential is None:
            self._credential = default_credential()
        return self._credential

    def describe(self) -> str:
        """Where it points, without secrets."""
        if self.endpoints is not None:
            return f"{self.endpoints.queue} (managed identity)"
        return "AzureWebJobsStorage connection string"

    def blob_service(self) -> BlobServiceClient:
        if self.endpoints is not None:
            return BlobServiceClient(self.endpoints.blob, credential=self.credential)
        return BlobServiceClient.from_connection_string(self._connection)

    def table_service(self) -> TableServiceClient:
        if self.endpoints is not None:
            return TableServiceClient(self.endpoints.table, credential=self.credential)
        return TableServiceClient.from_connection_string(self._connection)

    def queue_client(self, name: str, **options: Any) -> QueueClient:
        if self.endpoints is not None:
            return QueueClient(self.endpoints.queue, name, credential=self.credential, **options)
        return QueueClient.from_connection_string(self._connection, name, **options)


StorageConnection = Union[str, StorageAccount]


def storage_account(connection: StorageConnection) -> StorageAccount:
    """A connection string (what tools and tests pass) or an account (what the runtime passes) as an account."""
    return connection if isinstance(connection, StorageAccount) else StorageAccount(connection_string=connection)
