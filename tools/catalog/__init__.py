"""The embedded, Atlas-compatible local catalog: Atlas v2 API over SQLite, a lineage page, fault injection."""
from tools.catalog.server import CatalogServer

__all__ = ["CatalogServer"]
