"""The composition root: the only place that turns Settings into the objects the functions use, and all it does.

    rt = process_runtime()                 # one per process, built from the environment on first use
    rt.courier().deliver(...)              # HTTP intake: envelope text for the lineage queue
    rt.pipeline().process(event)           # queue trigger: merge -> map -> build -> upload (typedefs first, once)

What the functions do with these parts (an event through the runner, the timers' ticks, the history's answers) is
olparser/adapters/operations.py. Every part is built lazily on first use and then kept for the life of the process
(one catalog uploader, so one existence cache, shared with the resolver), behind one lock so concurrent first uses
build each part once; each part is a typed attribute (`Part`), none is looked up by name. Building reads no network:
the first catalog call happens on the first upload, preceded once per process by the typedef registration (at most 3
calls, create-or-update), so a fresh deployment needs no manual step.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

from azure.storage.queue import ExponentialRetry

from olparser.adapters.catalog import (
    AtlasCatalogClient,
    CatalogTarget,
    CatalogUploader,
    entity_type_names,
    load_typedefs,
    make_atlas_client,
    resolve_target,
)
from olparser.adapters.catalog.existence import ExistenceCache, existence_cache_for
from olparser.adapters.catalog.placement import CollectionPlacement, placement_from_settings
from olparser.adapters.catalog.typedefs_first import TypedefsFirstUploader
from olparser.adapters.delivery.archive import EventArchive, archive_from_settings
from olparser.adapters.delivery.queues import (
    AzureQueueService,
    QueueService,
    SqliteQueueService,
    embedded_queue_path,
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
from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from olparser.pipeline import LineagePipeline, WritePolicy
from olparser.pipeline.accelerator import Takeovers
from olparser.pipeline.relink import Relinker
from olparser.pipeline.writing import CatalogWrite
from olparser.runs import RunStateStore
from olparser.settings import TYPEDEFS_DIR, Settings

if TYPE_CHECKING:  # loaded on first use (the resource-set rules engine)
    from olparser.adapters.catalog.resolver import ScannedAssetResolver

T = TypeVar("T")


class ConfigurationError(ValueError):
    """The settings cannot work; the message names the setting to change."""


class Part(Generic[T]):
    """One part of the runtime: built by `get(build)` on its first use, under the runtime's lock (so concurrent first
    uses build it once), then kept; `given`: a part the caller built itself."""

    def __init__(self, lock: threading.RLock, given: T | None = None) -> None:
        self._lock = lock
        self._box: tuple[T] | None = None if given is None else (given,)

    def get(self, build: Callable[[], T]) -> T:
        with self._lock:
            if self._box is None:
                self._box = (build(),)
            return self._box[0]

    def built(self) -> T | None:
        """The part if it was built (or given), else None."""
        return None if self._box is None else self._box[0]


class Parts:
    """The runtime's parts, each a typed attribute, none built yet (but those given)."""

    def __init__(
        self, lock: threading.RLock, catalog_client: Any = None, run_state_store: RunStateStore | None = None
    ) -> None:
        self.limits: Part[IntakeLimits] = Part(lock)
        self.courier: Part[EventCourier] = Part(lock)
        self.queue_service: Part[QueueService] = Part(lock)
        self.event_archive: Part[EventArchive | None] = Part(lock)
        self.engine: Part[MappingEngine | ReloadingEngine] = Part(lock)
        self.run_state_store: Part[RunStateStore] = Part(lock, run_state_store)
        self.lineage_options: Part[LineageOptions] = Part(lock)
        self.sql_parser: Part[SqlParser | None] = Part(lock)
        self.catalog_target: Part[CatalogTarget] = Part(lock)
        self.catalog_client: Part[AtlasCatalogClient] = Part(lock, catalog_client)
        self.existence_cache: Part[ExistenceCache] = Part(lock)
        self.uploader: Part[TypedefsFirstUploader] = Part(lock)
        self.catalog_uploader: Part[CatalogUploader] = Part(lock)
        self.typedefs: Part[dict[str, list[dict[str, Any]]]] = Part(lock)
        self.placement: Part[CollectionPlacement | None] = Part(lock)
        self.resolver: Part["ScannedAssetResolver | None"] = Part(lock)
        self.catalog_write: Part[CatalogWrite] = Part(lock)
        self.pipeline: Part[LineagePipeline] = Part(lock)
        self.relinker: Part[Relinker | None] = Part(lock)
        self.takeovers: Part[Takeovers] = Part(lock)
        self.history_store: Part[RunHistoryStore] = Part(lock)

    def closable(self) -> tuple[Any, ...]:
        """The built parts that hold files, connections or processes, in the order they are closed."""
        parts = (self.catalog_client, self.run_state_store, self.history_store, self.queue_service, self.sql_parser)
        return (*(part.built() for part in parts), self.engine.built())


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
        self._lock = threading.RLock()
        self._parts = Parts(self._lock, catalog_client, run_state_store)

    # --- intake ------------------------------------------------------------------------------------------------
    def limits(self) -> IntakeLimits:
        """The intake's limits, with the contract compiled for them (so that no request waits for that)."""

        def build() -> IntakeLimits:
            limits = IntakeLimits.from_settings(self.settings)
            validators_for(limits)
            return limits

        return self._parts.limits.get(build)

    def courier(self) -> EventCourier:
        """Envelopes for the lineage queue; claim checks in blob storage (AzureWebJobsStorage) or the data folder."""
        return self._parts.courier.get(lambda: courier_from_settings(self.settings))

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

        return self._parts.queue_service.get(build)

    def event_archive(self) -> EventArchive | None:
        """Where the queue trigger keeps every accepted event (ARCHIVE_EVENTS), or None when that is off."""
        return self._parts.event_archive.get(lambda: archive_from_settings(self.settings))

    # --- processing --------------------------------------------------------------------------------------------
    def engine(self) -> MappingEngine | ReloadingEngine:
        """The mapping rules; a rule file is followed (a changed file is used within seconds, no restart)."""
        return self._parts.engine.get(lambda: ReloadingEngine.from_settings(self.settings))

    def run_state_store(self) -> RunStateStore:
        return self._parts.run_state_store.get(lambda: open_run_state_store(self.settings))

    def lineage_options(self) -> LineageOptions:
        return self._parts.lineage_options.get(lambda: LineageOptions.from_settings(self.settings))

    def sql_parser(self) -> SqlParser | None:
        """Column lineage from a run's SQL (SQL_COLUMN_LINEAGE): the parser's worker processes start on the first
        statement that needs them, not here."""
        return self._parts.sql_parser.get(
            lambda: SqlParser.from_settings(self.settings) if self.settings.sql_column_lineage else None
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

        return self._parts.catalog_target.get(build)

    def catalog_client(self) -> AtlasCatalogClient:
        return self._parts.catalog_client.get(
            lambda: make_atlas_client(
                self.catalog_target(), timeout=self.settings.catalog_timeout_seconds, credential=self._credential
            ),
        )

    def existence_cache(self) -> ExistenceCache:
        """What the catalog holds, as far as this process knows: shared by the resolver and the uploader."""
        return self._parts.existence_cache.get(lambda: existence_cache_for(self.settings))

    def uploader(self) -> TypedefsFirstUploader:
        """The process's one uploader (one existence cache), registering typedefs before its first upload. Entities
        of types that are not the connector's own are deleted only when nothing else uses them."""
        return self._parts.uploader.get(
            lambda: TypedefsFirstUploader(self.catalog_uploader(), lambda: self._typedefs())
        )

    def catalog_uploader(self) -> CatalogUploader:
        """The uploader itself, without the typedef registration (the Spark paths register them before they start:
        `ol2purview spark` registers the typedefs once, not per task)."""
        return self._parts.catalog_uploader.get(
            lambda: CatalogUploader(
                self.catalog_client(),
                settings=self.settings,
                cache=self.existence_cache(),
                connector_types=entity_type_names(self._typedefs()),
                placement=self.placement(),
            ),
        )

    def _typedefs(self) -> dict[str, list[dict[str, Any]]]:
        return self._parts.typedefs.get(lambda: load_typedefs(self._typedefs_dir))

    def placement(self) -> CollectionPlacement | None:
        """The collection of each run (PLACEMENT_RULES_PATH, PURVIEW_COLLECTION), or None: every entity in the
        root. The rules are read (and checked) here, once."""

        def build() -> CollectionPlacement | None:
            try:
                return placement_from_settings(self.catalog_client(), self.settings)
            except ValueError as exc:
                raise ConfigurationError(str(exc)) from None

        return self._parts.placement.get(build)

    def resolver(self) -> ScannedAssetResolver | None:
        """The process's one ScannedAssetResolver (None when RESOLVE_SCANNED_ASSETS is off). The resource-set rules are
        read from the catalog on first use."""

        def build() -> ScannedAssetResolver | None:
            if not self.settings.resolve_scanned_assets:
                return None
            from olparser.adapters.catalog.resolver import resolver_for  # loads the resource-set rules engine

            return resolver_for(
                self.catalog_client(), self.settings, self.existence_cache(), owned=self.run_state_store().interim_keys
            )

        return self._parts.resolver.get(build)

    def catalog_write(self) -> CatalogWrite:
        """The write path's one catalog writer (store, uploader, resolver, history, process locks): the runner, its
        timer and take-over write through it, the re-link takes its locks."""
        return self._parts.catalog_write.get(
            lambda: CatalogWrite(self.run_state_store(), self.uploader(), self.resolver(), self.history_store())
        )

    def pipeline(self) -> LineagePipeline:
        return self._parts.pipeline.get(
            lambda: LineagePipeline(
                self.run_state_store(),
                self.engine(),
                self.lineage_options(),
                self.uploader(),
                WritePolicy.from_settings(self.settings),
                resolver=self.resolver(),
                history=self.history_store(),
                parse_sql=self.sql_parser(),
                takeovers=self.takeovers(),
                catalog=self.catalog_write(),
            ),
        )

    def takeovers(self) -> Takeovers:
        """The processes taken over from the accelerator that still wait for their successor, as this process last
        read them (olparser/pipeline/accelerator.py)."""
        return self._parts.takeovers.get(Takeovers)

    def relinker(self) -> Relinker | None:
        """The re-link timer's worker (None when RESOLVE_SCANNED_ASSETS is off)."""

        def build() -> Relinker | None:
            resolver = self.resolver()
            if resolver is None:
                return None
            return Relinker(
                self.run_state_store(),
                resolver,
                self.uploader().uploader,
                batch_size=self.settings.relink_batch_size,
                locked_processes=self.catalog_write().locked_processes,
            )

        return self._parts.relinker.get(build)

    # --- the run history ----------------------------------------------------------------------------------------
    def history_store(self) -> RunHistoryStore:
        """Where every run's dataset accesses are kept (RUN_HISTORY_DAYS), next to the run state."""
        return self._parts.history_store.get(lambda: open_history_store(self.settings))

    def close(self) -> None:
        """Release what holds files or connections (tests; a host shutting down)."""
        with self._lock:
            parts, self._parts = self._parts, Parts(self._lock)
        for part in parts.closable():
            close = getattr(part, "close", None)
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
