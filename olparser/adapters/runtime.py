"""The composition root: the only place that turns Settings into the objects the functions use.

    rt = process_runtime()                 # one per process, built from the environment on first use
    rt.courier().deliver(...)              # HTTP intake: envelope text for the lineage queue
    rt.process(event)                      # queue trigger: merge -> map -> build -> upload (typedefs first, once)
    rt.write_due_runs()                    # timer: incomplete and held runs, failed deletions, expired run state
    rt.relink_scanned_assets()             # timer: interim datasets re-linked to what a scan registered since
    rt.history_lineage(params)             # GET /api/ol2purview/lineage: lineage in a time window, from the history

Every part is built lazily on first use and then kept for the life of the process (one catalog uploader, so one
existence cache, shared with the resolver), behind one lock so concurrent first uses build each part once. Building
reads no network: the first catalog call happens on the first upload, preceded once per process by the typedef
registration (at most 3 calls, create-or-update), so a fresh deployment needs no manual step.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from azure.storage.queue import ExponentialRetry

from olparser.adapters.catalog import (
    AtlasCatalogClient,
    CatalogTarget,
    CatalogUploader,
    DeleteReport,
    TypedefReport,
    UploadReport,
    entity_type_names,
    load_typedefs,
    make_atlas_client,
    resolve_target,
)
from olparser.adapters.catalog.existence import ExistenceCache, existence_cache_for
from olparser.adapters.catalog.placement import CollectionPlacement, placement_from_settings
from olparser.adapters.delivery.archive import EventArchive, archive_from_settings
from olparser.adapters.delivery.queues import (
    AzureQueueService,
    QueueService,
    SqliteQueueService,
    embedded_queue_path,
    poison_queue_name,
)
from olparser.adapters.delivery.sender import EventCourier, courier_from_settings
from olparser.adapters.history_stores import open_history_store
from olparser.adapters.rules_file import ReloadingEngine
from olparser.adapters.run_state import open_run_state_store
from olparser.adapters.sql.process_parser import SqlParser
from olparser.adapters.storage_account import StorageAccount
from olparser.contract import IntakeLimits
from olparser.contract.reader import validators_for
from olparser.history import RunHistoryStore
from olparser.history.api import lineage_answer, run_answer
from olparser.lineage import LineageOptions, LineagePlan
from olparser.naming import MappingEngine
from olparser.pipeline import DueReport, LineageOutcome, LineagePipeline, WritePolicy
from olparser.relink import Relinker, RelinkReport
from olparser.runs import RunStateStore
from olparser.settings import TYPEDEFS_DIR, Settings

T = TypeVar("T")
log = logging.getLogger("ol2purview.runtime")


class ConfigurationError(ValueError):
    """The settings cannot work; the message names the setting to change."""


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


class Runtime:
    """The objects built from one Settings. `credential` replaces DefaultAzureCredential (tests). `catalog_client`
    and `run_state_store`: parts a caller built itself — the Spark paths' rate-limited catalog client
    (tools/spark/catalog.py `ThrottledClient`) and the run-state store a task opened — from which the rest is built
    as for the live path (tools/spark builds its uploader, resolver, run state and history here)."""

    def __init__(
        self,
        settings: Settings,
        *,
        credential: Any = None,
        typedefs_dir: Path = TYPEDEFS_DIR,
        catalog_client: Any = None,
        run_state_store: RunStateStore | None = None,
    ) -> None:
        self.settings = settings
        self._credential = credential
        self._typedefs_dir = typedefs_dir
        self._built: dict[str, Any] = {}
        if catalog_client is not None:
            self._built["catalog_client"] = catalog_client
        if run_state_store is not None:
            self._built["run_state_store"] = run_state_store
        self._lock = threading.RLock()

    def _once(self, name: str, build: Callable[[], T]) -> T:
        with self._lock:
            if name not in self._built:
                self._built[name] = build()
            built: T = self._built[name]
            return built

    # --- intake ------------------------------------------------------------------------------------------------
    def limits(self) -> IntakeLimits:
        """The intake's limits, with the contract compiled for them (so that no request waits for that)."""

        def build() -> IntakeLimits:
            limits = IntakeLimits.from_settings(self.settings)
            validators_for(limits)
            return limits

        return self._once("limits", build)

    def courier(self) -> EventCourier:
        """Envelopes for the lineage queue; claim checks in blob storage (AzureWebJobsStorage) or the data folder."""
        return self._once("courier", lambda: courier_from_settings(self.settings))

    def queue_service(self, message_encoding: str = "base64") -> QueueService:
        """Azure Storage queues (AzureWebJobsStorage), else the embedded SQLite queues. Used by the local host;
        in Azure the Functions host owns the queue (bindings).

        A sender is waiting for its answer: a few quick retries (not the SDK's 15 s, 18 s, 24 s), then the host
        answers 503 and the sender sends again.
        """

        def build() -> QueueService:
            if (account := StorageAccount.from_settings(self.settings)) is not None:
                # Fractions of a second: the SDK annotates these as int but computes the backoff with floats.
                backoff: dict[str, Any] = {"initial_backoff": 0.2, "increment_base": 1.5, "random_jitter_range": 0.2}
                quick = ExponentialRetry(retry_total=2, **backoff)
                return AzureQueueService(
                    account, message_encoding, retry_policy=quick, connection_timeout=5, read_timeout=20
                )
            return SqliteQueueService(embedded_queue_path(self.settings.data_dir))

        return self._once("queue_service", build)

    def event_archive(self) -> EventArchive | None:
        """Where the queue trigger keeps every accepted event (ARCHIVE_EVENTS), or None when that is off."""
        return self._once("event_archive", lambda: archive_from_settings(self.settings))

    # --- processing --------------------------------------------------------------------------------------------
    def engine(self) -> MappingEngine | ReloadingEngine:
        """The mapping rules; a rule file is followed (a changed file is used within seconds, no restart)."""
        return self._once("engine", lambda: ReloadingEngine.from_settings(self.settings))

    def run_state_store(self) -> RunStateStore:
        return self._once("run_state_store", lambda: open_run_state_store(self.settings))

    def lineage_options(self) -> LineageOptions:
        return self._once("lineage_options", lambda: LineageOptions.from_settings(self.settings))

    def sql_parser(self) -> SqlParser | None:
        """Column lineage from a run's SQL (SQL_COLUMN_LINEAGE): the parser's worker processes start on the first
        statement that needs them, not here."""
        return self._once(
            "sql_parser", lambda: SqlParser.from_settings(self.settings) if self.settings.sql_column_lineage else None
        )

    def catalog_target(self) -> CatalogTarget:
        """Purview or an Atlas endpoint. `embedded` needs the endpoint of a running local catalog (the local host
        starts one and sets ATLAS_ENDPOINT), so without one it is a configuration error."""

        def build() -> CatalogTarget:
            try:
                target = resolve_target(self.settings)
            except ValueError as exc:
                raise ConfigurationError(str(exc)) from None
            if target.endpoint is None:
                raise ConfigurationError(
                    "no catalog configured: set PURVIEW_ACCOUNT_NAME, PURVIEW_ENDPOINT or ATLAS_ENDPOINT"
                )
            return target

        return self._once("catalog_target", build)

    def catalog_client(self) -> AtlasCatalogClient:
        return self._once(
            "catalog_client",
            lambda: make_atlas_client(
                self.catalog_target(), timeout=self.settings.catalog_timeout_seconds, credential=self._credential
            ),
        )

    def existence_cache(self) -> ExistenceCache:
        """What the catalog holds, as far as this process knows: shared by the resolver and the uploader."""
        return self._once("existence_cache", lambda: existence_cache_for(self.settings))

    def uploader(self) -> TypedefsFirstUploader:
        """The process's one uploader (one existence cache), registering typedefs before its first upload. Entities
        of types that are not the connector's own are deleted only when nothing else uses them."""
        return self._once("uploader", lambda: TypedefsFirstUploader(self.catalog_uploader(), lambda: self._typedefs()))

    def catalog_uploader(self) -> CatalogUploader:
        """The uploader itself, without the typedef registration (the Spark paths register them before they start:
        `ol2purview spark` registers the typedefs once, not per task)."""
        return self._once(
            "catalog_uploader",
            lambda: CatalogUploader(
                self.catalog_client(),
                settings=self.settings,
                cache=self.existence_cache(),
                connector_types=entity_type_names(self._typedefs()),
                placement=self.placement(),
            ),
        )

    def _typedefs(self) -> dict[str, list[dict[str, Any]]]:
        return self._once("typedefs", lambda: load_typedefs(self._typedefs_dir))

    def placement(self) -> CollectionPlacement | None:
        """The collection of each run (PLACEMENT_RULES_PATH, PURVIEW_COLLECTION), or None: every entity in the
        root. The rules are read (and checked) here, once."""

        def build() -> CollectionPlacement | None:
            try:
                return placement_from_settings(self.catalog_client(), self.settings)
            except ValueError as exc:
                raise ConfigurationError(str(exc)) from None

        return self._once("placement", build)

    def resolver(self) -> Any:
        """The process's one ScannedAssetResolver (None when RESOLVE_SCANNED_ASSETS is off). The resource-set rules are
        read from the catalog on first use."""

        def build() -> Any:
            if not self.settings.resolve_scanned_assets:
                return None
            from olparser.adapters.catalog.resolver import resolver_for  # loads the resource-set rules engine

            return resolver_for(
                self.catalog_client(), self.settings, self.existence_cache(), owned=self.run_state_store().interim_keys
            )

        return self._once("resolver", build)

    def ensure_typedefs(self) -> TypedefReport:
        """Register the custom types now (the local host does this at start); a no-op after the first success."""
        return self.uploader().ensure_typedefs()

    def pipeline(self) -> LineagePipeline:
        return self._once(
            "pipeline",
            lambda: LineagePipeline(
                self.run_state_store(),
                self.engine(),  # type: ignore[arg-type]  # a ReloadingEngine delegates to its current MappingEngine
                self.lineage_options(),
                self.uploader(),
                WritePolicy.from_settings(self.settings),
                resolver=self.resolver(),
                history=self.history_store(),
                parse_sql=self.sql_parser(),
            ),
        )

    def relinker(self) -> Relinker | None:
        """The re-link timer's worker (None when RESOLVE_SCANNED_ASSETS is off)."""

        def build() -> Relinker | None:
            if self.resolver() is None:
                return None
            return Relinker(
                self.run_state_store(),
                self.resolver(),
                self.uploader().uploader,
                batch_size=self.settings.relink_batch_size,
                locked_processes=self.pipeline().locked_processes,
            )

        return self._once("relinker", build)

    def process(self, event: dict[str, Any], *, redelivered: bool = False) -> LineageOutcome:
        """Run the pipeline for one event (the pipeline handles one event of a run at a time in this process);
        `redelivered`: its queue message comes again (an earlier attempt failed or died), so the run is written again
        even if the store says it is unchanged."""
        return self.pipeline().process(event, redelivered=redelivered)

    def write_due_runs(self, now: float | None = None) -> DueReport:
        """The timer's work: runs that never completed (INCOMPLETE) or waited long enough for their Databricks
        environment, deletions that failed, and expired run state."""
        report = self.pipeline().write_due(now=now)
        return dataclasses.replace(report, poison_waiting=self.poison_waiting())

    def poison_waiting(self) -> int:
        """Messages in the lineage queue's poison queue (approximate), 0 when it cannot be read (logged)."""
        try:
            return self.queue_service().queue(poison_queue_name(self.settings.lineage_queue)).approximate_count()
        except Exception as exc:  # the tick's own work is done; the next tick looks again
            log.warning("could not read the poison queue's length: %s", type(exc).__name__)
            return 0

    def relink_scanned_assets(self, now: float | None = None) -> RelinkReport:
        """The re-link timer's work: interim datasets whose scanned asset a scan has registered since."""
        relinker = self.relinker()
        return relinker.run(now=now) if relinker is not None else RelinkReport()

    # --- the run history ----------------------------------------------------------------------------------------
    def history_store(self) -> RunHistoryStore:
        """Where every run's dataset accesses are kept (RUN_HISTORY_DAYS), next to the run state."""
        return self._once("history_store", lambda: open_history_store(self.settings))

    def history_lineage(self, params: dict[str, str], now: float | None = None) -> tuple[int, dict[str, Any]]:
        """GET /api/ol2purview/lineage: the lineage of a dataset (or column) in a time window."""
        return lineage_answer(self.history_store(), params, time.time() if now is None else now)

    def history_run(self, run_id: str) -> tuple[int, dict[str, Any]]:
        """GET /api/ol2purview/runs/{runId}: one run with its accesses and metadata."""
        return run_answer(self.history_store(), run_id)

    def reset_process_runs(self, qualified_names: list[str]) -> int:
        """Forget the newest run time of these processes, so that the next run of their code writes them."""
        return self.run_state_store().reset_process_runs(qualified_names)

    def close(self) -> None:
        """Release what holds files or connections (tests; a host shutting down)."""
        with self._lock:
            built, self._built = self._built, {}
        for name in ("catalog_client", "run_state_store", "history_store", "queue_service", "sql_parser", "engine"):
            close = getattr(built.get(name), "close", None)
            if close is not None:
                close()


_process_runtime: Runtime | None = None
_process_lock = threading.Lock()


def process_runtime() -> Runtime:
    """The runtime of this process, built from the environment (app settings) on first use."""
    global _process_runtime
    with _process_lock:
        if _process_runtime is None:
            _process_runtime = Runtime(Settings.from_env())
        return _process_runtime


def reset_process_runtime() -> None:
    """Forget the process runtime (closing it), so the next use reads the environment again."""
    global _process_runtime
    with _process_lock:
        runtime, _process_runtime = _process_runtime, None
    if runtime is not None:
        runtime.close()
