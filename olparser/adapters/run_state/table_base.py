"""What the mixins of the run-state table store (`table_owned`, `table_due`, `table_side`) use of the store itself
(`table_store.TableRunStateStore`), declared once for the type checker: the store defines each of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

from azure.data.tables import TableEntity

from olparser.runs import ledger
from olparser.runs.ledger import Key

T = TypeVar("T")


class RunRows:
    """The run-state store's table and its row primitives, as its mixins see them."""

    table: Any
    ttl_seconds: float
    temporary_seconds: float

    if TYPE_CHECKING:  # defined by TableRunStateStore (and `_transact` by OwnedRows); no stubs at run time

        def _keys(self, run_id: str) -> dict[str, str]: ...

        def _read(self, run_id: str, *, fresh: bool = False) -> TableEntity | None: ...

        def _read_keys(self, keys: dict[str, str]) -> TableEntity | None: ...

        def _write(self, entity: TableEntity, read: TableEntity | None) -> TableEntity: ...

        def _delete(self, read: TableEntity) -> None: ...

        def _with_retries(self, attempt: Callable[[], T]) -> T: ...

        def _record(self, entity: TableEntity | None) -> ledger.OwnershipRecord: ...

        def _copied_row(self, run_key: str, entity: TableEntity | None) -> TableEntity: ...

        def _transact(self, operations: list[Any], key: Key | None = None) -> list[Any]: ...
