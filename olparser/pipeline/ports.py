"""The write path's ports, in one module, typed: what the pipeline needs from outside it. The run state
(`RunStateStore`: olparser/runs/store.py, SQLite and Azure Tables in olparser/adapters/run_state/), the run history
(`RunHistoryStore`: olparser/history/store.py, olparser/adapters/history_stores/), the rules (`RuleSource`:
olparser/naming/engine.py, a rule file followed as it changes in olparser/adapters/rules_file.py), the catalog
(`Uploader`, `RelinkCatalog`: olparser/adapters/catalog/uploader.py) and the scanned-asset resolver (`Resolver`:
olparser/adapters/catalog/resolver.py). The composition root (olparser/adapters/runtime.py) builds the adapters and
hands them in; nothing in the pipeline imports an adapter."""

from __future__ import annotations

from typing import Any, Iterable, Protocol

from olparser.history.store import RunHistoryStore
from olparser.lineage import LineagePlan
from olparser.lineage.plan import DeleteReport, UploadReport
from olparser.naming import RuleSource
from olparser.resolution.model import Candidate, Resolution
from olparser.runs import RunStateStore
from olparser.runs.ledger import Key

__all__ = ["RelinkCatalog", "RelinkResolver", "Resolver", "RuleSource", "RunHistoryStore", "RunStateStore", "Uploader"]


class Uploader(Protocol):
    """olparser.adapters.catalog.CatalogUploader: writes plans, deletes what no run uses; typed reports."""

    def upload(self, plan: LineagePlan, *, refresh: bool = True) -> UploadReport: ...
    def delete(self, keys: Iterable[Key]) -> DeleteReport: ...


class RelinkCatalog(Protocol):
    """What the re-link needs from the catalog (CatalogUploader provides it)."""

    def read(self, keys: Iterable[Key], calls: list[int]) -> dict[Key, dict[str, Any]]: ...
    def read_guids(self, guids: Iterable[str], calls: list[int]) -> list[dict[str, Any]]: ...
    def upload(self, plan: LineagePlan) -> UploadReport: ...
    def delete(self, keys: Iterable[Key], *, in_use: bool = False) -> DeleteReport: ...


class Resolver(Protocol):
    """olparser.adapters.catalog.resolver.ScannedAssetResolver: which scanned asset each dataset is."""

    def resolve(
        self,
        datasets: Iterable[Any],
        *,
        fresh: bool = False,
        bounded: bool = True,
        extra: Any = None,
        tasks: Iterable[Any] = (),
    ) -> Resolution: ...
    def note_interim(self, keys: Iterable[Key]) -> None: ...
    def forget(self, keys: Iterable[Key]) -> None: ...
    def forget_datasets(self, datasets: Iterable[Any]) -> None: ...


class RelinkResolver(Resolver, Protocol):
    """What the re-link asks the resolver besides: datasets whose candidates the re-link registry kept."""

    def resolve_candidates(
        self,
        planned: dict[Key, tuple[Candidate, ...]],
        *,
        fresh: bool = False,
        calls: list[int] | None = None,
        max_searches: int | None = None,
    ) -> Resolution: ...
