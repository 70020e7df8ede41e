"""What `ol2purview serve` and `ol2purview worker` start around the function app, and stop in reverse order:
storage (tools/functions_host/storage), the catalog (local_catalog), the app's runtime with its typedefs registered,
the queue bindings and, unless told otherwise, the queue-trigger workers.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from olparser.adapters.catalog.type_ownership import ForeignTypeConflict, ModelTypeConflict
from olparser.adapters.delivery.queues import QueueService
from olparser.adapters.rules_file import ReloadingEngine
from olparser.adapters.runtime import ConfigurationError, process_runtime

from ..catalog import CatalogServer
from .config import HostConfig
from .functions import FunctionSpec, describe_functions, load_app
from .http_app import HTTP_TRIGGER
from .invocation import BindingDelivery, check_supported
from .local_catalog import describe_catalog, start_catalog_unless_configured
from .queue_host import DEFAULT_LEASE_SECONDS, QUEUE_OUTPUT, QUEUE_TRIGGER, QueueDelivery, QueueTriggers
from .storage import LocalStorage, open_storage
from .timer_host import TIMER_TRIGGER, TimerTriggers, resolve_schedule
from .trigger_settings import QueueTriggerSettings, queue_trigger_settings

log = logging.getLogger("ol2purview.host")

# Extension points: trigger types this host runs, and how to build the delivery of each output binding type.
TRIGGER_TYPES = frozenset({HTTP_TRIGGER, QUEUE_TRIGGER, TIMER_TRIGGER})
DELIVERIES: dict[str, Callable[[QueueService], BindingDelivery]] = {QUEUE_OUTPUT: QueueDelivery}
WORKER_STOP_TIMEOUT = 60.0
HOST_OVERRIDE_PREFIX = "AzureFunctionsJobHost__"  # app settings that override host.json, as in Azure


def host_json_with_overrides(path: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """host.json (empty when missing) with `AzureFunctionsJobHost__a__b=value` settings applied to `a.b`, as the
    Functions host does (e.g. AzureFunctionsJobHost__extensions__queues__batchSize=1). Integer texts become ints."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    for name, value in sorted(env.items()):
        if not name.startswith(HOST_OVERRIDE_PREFIX):
            continue
        *parents, leaf = name[len(HOST_OVERRIDE_PREFIX) :].split("__")
        node = document
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = int(value) if value.strip().lstrip("-").isdigit() else value
    return document


@dataclass(frozen=True)
class LoadedApp:
    """A function app checked against what this host can run, with its host.json settings."""

    path: Path
    functions: tuple[FunctionSpec, ...]
    config: HostConfig
    queue_settings: QueueTriggerSettings  # host.json extensions.queues, with AzureFunctionsJobHost__ overrides

    @classmethod
    def load(cls, path: Path) -> "LoadedApp":
        """Raises FunctionAppError / RouteTemplateError / ValueError with a message naming the problem."""
        config = HostConfig.load(path.parent / "host.json")
        queue_settings = queue_trigger_settings(host_json_with_overrides(path.parent / "host.json", os.environ))
        functions = describe_functions(load_app(path))
        check_supported(functions, TRIGGER_TYPES, DELIVERIES)
        for function in functions:
            if function.trigger.type == TIMER_TRIGGER:
                resolve_schedule(function)  # a bad schedule is an app error, reported before anything starts
        return cls(path, functions, config, queue_settings)


@dataclass
class LocalHost:
    """The running services around an app. Build with `LocalHost.start(...)`, end with `stop()`."""

    app: LoadedApp
    data_dir: Path
    storage: LocalStorage
    catalog: CatalogServer | None
    catalog_faults: str
    deliveries: dict[str, BindingDelivery]
    triggers: QueueTriggers
    timers: TimerTriggers
    typedefs_note: str
    stopped: bool = field(default=False)

    @classmethod
    def start(
        cls,
        app: LoadedApp,
        data_dir: Path,
        *,
        storage_mode: str | None,
        azurite_ports: str | None,
        catalog_port: int | None,
        catalog_faults: str,
        run_worker: bool,
        function_key: str | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> "LocalHost":
        """Start storage, then the catalog, then the workers; on failure stop what was started and re-raise.
        `function_key`: serve's key, with which the catalog's page asks serve's run history."""
        os.environ["OL2PURVIEW_DATA_DIR"] = str(data_dir)  # read by Settings.from_env in the app
        storage = open_storage(storage_mode, data_dir, azurite_ports)
        catalog = None
        try:
            catalog = start_catalog_unless_configured(data_dir, catalog_port, catalog_faults, function_key=function_key)
            runtime = process_runtime()
            runtime.limits()  # compiles the contract for the configured limits before the first request
            engine = runtime.engine()  # the mapping rules (checked before the host started: see cli._start)
            if run_worker and isinstance(engine, ReloadingEngine):
                engine.watch()  # a rule-file change is noticed (and logged) within seconds, not at the next event
            typedefs_note = _register_typedefs()
            service = runtime.queue_service(app.queue_settings.message_encoding)
            deliveries = {kind: build(service) for kind, build in DELIVERIES.items()}
            triggers = QueueTriggers(app.functions, service, app.queue_settings, deliveries, lease_seconds)
            triggers.status()  # creates the queues now, so that senders, status and requeue find them
            timers = TimerTriggers(app.functions, deliveries)
            if run_worker:  # background triggers run where the queue triggers run (serve, or worker)
                triggers.start()
                timers.start()
        except BaseException:
            if catalog is not None:
                catalog.stop()
            storage.stop()
            raise
        return cls(app, data_dir, storage, catalog, catalog_faults, deliveries, triggers, timers, typedefs_note)

    def status(self) -> dict[str, Any]:
        """The body of GET /admin/ol2purview/status."""
        return {
            "state": "Running",
            "storage": self.storage.mode,
            "rules": _rules_status(),
            **self.triggers.status(),
            "timers": self.timers.status(),
            "runState": _run_state_size(),
            "catalog": {
                "url": f"{self.catalog.url}/" if self.catalog else None,
                "atlasUrl": self.catalog.atlas_url if self.catalog else os.environ.get("ATLAS_ENDPOINT"),
            },
        }

    def describe(self) -> list[str]:
        """Lines for the start banner: data folder, storage, catalog, typedefs, workers."""
        queues = ", ".join(f"{f.name} <- {f.trigger.settings['queueName']}" for f in self.triggers.functions)
        return [
            f"data folder: {self.data_dir}",
            f"storage: {self.storage.describe()}",
            describe_catalog(self.catalog, self.catalog_faults),
            f"mapping rules: {_rules_line()}",
            f"typedefs: {self.typedefs_note}",
            f"queue triggers: {queues or 'none'} ({'running' if self.triggers.workers else 'not running'})",
            self.timers.describe(),
        ]

    def stop(self) -> None:
        """Let the workers finish what they hold, then stop the catalog and the storage emulator."""
        if self.stopped:
            return
        self.stopped = True
        self.timers.stop(WORKER_STOP_TIMEOUT)
        self.triggers.stop(WORKER_STOP_TIMEOUT)
        if self.catalog is not None:
            self.catalog.stop()
        self.storage.stop()


def _run_state_size() -> dict[str, Any] | None:
    """How much the run-state store holds (runs, of which due for the timer; entities and processes tracked)."""
    try:
        return process_runtime().run_state_store().stats().to_json()
    except Exception as exc:  # a store that cannot be opened is reported, not fatal to the status page
        log.warning("run state size unavailable: %s", type(exc).__name__)
        return None


def _rules_status() -> dict[str, Any]:
    """The mapping rules in force: `ok` false (with the error) while the rule file's last edit cannot be used."""
    engine = process_runtime().engine()
    if isinstance(engine, ReloadingEngine):
        return engine.status()
    return {"ok": True, "path": None, "rules": len(engine.rules), "source": "app setting OlToPurviewMappings"}


def _rules_line() -> str:
    """Which rules this host maps with, for the banner: `config/OlToPurviewMappings.json (55 rules)`."""
    rules = _rules_status()
    return f"{rules['path'] or rules['source']} ({rules['rules']} rules)"


def _register_typedefs() -> str:
    """The typedef note for the banner. A type of the connector's name that it did not create and cannot write with
    refuses the start (RuntimeError naming it, what differs and TYPE_PREFIX), as does a definition of a name of
    Purview's Databricks model that is not Purview's; the catalog being down does not."""
    try:
        report = process_runtime().uploader().ensure_typedefs()
    except (ForeignTypeConflict, ModelTypeConflict) as exc:
        raise RuntimeError(exc.message) from None
    except ConfigurationError as exc:  # e.g. a placement rules file with problems: named, not retried
        raise RuntimeError(str(exc)) from None
    except Exception as exc:  # the catalog may be down: the first upload tries again
        log.warning(
            "could not register the custom types yet (%s); they are registered before the first upload",
            type(exc).__name__,
        )
        return f"not registered yet ({type(exc).__name__}); retried before the first upload"
    return report.describe()
