"""An uploader that registers the connector's custom types once, before its first upload (the composition root,
olparser/adapters/runtime.py, gives the live path this one)."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterable

from olparser.adapters.catalog.typedefs import TypedefReport
from olparser.adapters.catalog.uploader import CatalogUploader
from olparser.lineage.plan import DeleteReport, LineagePlan, UploadReport


class TypedefsFirstUploader:
    """A CatalogUploader that registers the connector's custom types once, before its first upload.

    A failed registration is not remembered: the next upload tries again (the queue retries the message).
    """

    def __init__(self, uploader: CatalogUploader, typedefs: Callable[[], dict[str, list[dict[str, Any]]]]) -> None:
        self.uploader = uploader
        self._typedefs = typedefs
        self._registered: TypedefReport | None = None
        self._lock = threading.Lock()

    def ensure_typedefs(self) -> TypedefReport:
        """Register the types if this process has not yet; returns the (first) registration's report."""
        with self._lock:
            if self._registered is None:
                self._registered = self.uploader.register_typedefs(self._typedefs())
            return self._registered

    def upload(self, plan: LineagePlan, *, refresh: bool = True) -> UploadReport:
        self.ensure_typedefs()
        return self.uploader.upload(plan, refresh=refresh)

    def delete(self, keys: Iterable[tuple[str, str]], *, in_use: bool = False) -> DeleteReport:
        return self.uploader.delete(keys, in_use=in_use)

    def read(self, keys: Iterable[tuple[str, str]], calls: list[int]) -> dict[tuple[str, str], dict[str, Any]]:
        return self.uploader.read(keys, calls)

    def read_guids(self, guids: Iterable[str], calls: list[int]) -> list[dict[str, Any]]:
        return self.uploader.read_guids(guids, calls)
