"""The embedded, Atlas-compatible local catalog: Atlas v2 API over SQLite, a lineage page, fault injection.

`CatalogServer` is imported on first use, so that the pure parts load without the web stack."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import CatalogServer

__all__ = ["CatalogServer"]


def __getattr__(name: str) -> Any:
    if name == "CatalogServer":
        from .server import CatalogServer

        return CatalogServer
    raise AttributeError(name)
