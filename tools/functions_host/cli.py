"""`ol2purview serve` and `ol2purview worker`: run function_app.py locally as the Azure Functions host would.

`serve` starts the storage (Azurite, or the embedded SQLite queues), the embedded catalog unless one is configured,
the queue triggers (unless `--no-worker`) and the HTTP functions. It prints the function and master keys, the Spark
and Python client settings that point at this endpoint, the catalog page, the storage, then a line starting with
`ready` once it accepts connections. `worker` runs only the queue triggers, so that a worker can be stopped or killed
while HTTP keeps accepting. SIGTERM and Ctrl-C stop either gracefully (in-flight messages finish) with status 0.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import uvicorn

from olparser.settings import PROJECT_ROOT, Settings
from tools.azurite import AzuriteNotInstalled, AzuriteStartError
from tools.functions_host.functions import FunctionAppError
from tools.functions_host.http_app import FunctionsHttpApp, HttpRoute
from tools.functions_host.keys import KEY_HEADER, KeyRing, generate_key
from tools.functions_host.local_catalog import add_catalog_arguments
from tools.functions_host.local_host import LoadedApp, LocalHost
from tools.functions_host.routes import RouteTemplateError
from tools.functions_host.storage import add_storage_arguments

DEFAULT_APP = PROJECT_ROOT / "function_app.py"
INGEST_FUNCTION = "ingest_event"
READY_LINE = "ready"
KEY_ENV = "OL2PURVIEW_FUNCTION_KEY"
MASTER_KEY_ENV = "OL2PURVIEW_MASTER_KEY"
STATUS_PATH = "/admin/ol2purview/status"
STARTUP_ERRORS = (FunctionAppError, RouteTemplateError, ValueError, AzuriteNotInstalled, AzuriteStartError,
                  RuntimeError, OSError)


@dataclass(frozen=True)
class ServeOptions:
    """What `serve` runs with, after defaults and generated keys are filled in."""

    app_path: Path
    host: str
    port: int
    key: str
    key_generated: bool
    master_key: str
    function_keys: dict[str, tuple[str, ...]]  # per-function keys: valid for that function only
    data_dir: Path
    storage: str | None
    azurite_ports: str | None
    catalog_port: int
    catalog_faults: str
    run_worker: bool
    log_level: str

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "ServeOptions":
        return cls(
            app_path=Path(args.app),
            host=getattr(args, "host", "127.0.0.1"),
            port=getattr(args, "port", 0),
            key=getattr(args, "key", None) or generate_key(),
            key_generated=not getattr(args, "key", None),
            master_key=getattr(args, "master_key", None) or generate_key(),
            function_keys=_function_keys(getattr(args, "function_key", None) or []),
            data_dir=Path(args.data).resolve() if args.data else Settings.from_env().data_dir.resolve(),
            storage=args.storage,
            azurite_ports=args.azurite_ports,
            catalog_port=args.catalog_port,
            catalog_faults=args.catalog_faults,
            run_worker=not getattr(args, "no_worker", False),
            log_level=args.log_level,
        )


def _function_keys(items: list[str]) -> dict[str, tuple[str, ...]]:
    keys: dict[str, tuple[str, ...]] = {}
    for item in items:
        name, sep, key = item.partition("=")
        if not sep or not name.strip() or not key:
            raise SystemExit(f"ol2purview serve: --function-key expects FUNCTION=KEY, got {item.split('=')[0]!r}...")
        keys[name.strip()] = (*keys.get(name.strip(), ()), key)
    return keys


def _add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", help="folder for local state: run state, queues, catalog, Azurite "
                                       "(sets OL2PURVIEW_DATA_DIR; default .data)")
    add_storage_arguments(parser)
    add_catalog_arguments(parser)
    parser.add_argument("--app", default=str(DEFAULT_APP), help="the function app to serve (default: function_app.py)")
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"], help="log level (default info)"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=7071,
                        help="port to listen on (default 7071, as func start; 0: any free port, see the ready line)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (0.0.0.0 for every interface)")
    parser.add_argument("--key", default=os.environ.get(KEY_ENV),
                        help=f"the function key callers must send (default: ${KEY_ENV}, else a new random key, printed)")
    parser.add_argument("--master-key", default=os.environ.get(MASTER_KEY_ENV),
                        help=f"the master key, for admin endpoints (default: ${MASTER_KEY_ENV}, else a random key)")
    parser.add_argument("--function-key", action="append", metavar="FUNCTION=KEY",
                        help="an extra key valid for one function only (repeatable), as Azure's function keys")
    parser.add_argument("--no-worker", action="store_true",
                        help="serve HTTP only; run the queue triggers with `ol2purview worker`")
    _add_common_arguments(parser)


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    _add_common_arguments(parser)


def _start(options: ServeOptions, command: str) -> tuple[LoadedApp, LocalHost] | int:
    logging.basicConfig(level=options.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("azure").setLevel(logging.WARNING)  # the SDK logs every request with its headers at INFO
    try:
        app = LoadedApp.load(options.app_path)
    except (FunctionAppError, RouteTemplateError, ValueError) as exc:
        print(f"ol2purview {command}: {exc}", file=sys.stderr)
        return 2
    try:
        host = LocalHost.start(app, options.data_dir, storage_mode=options.storage,
                               azurite_ports=options.azurite_ports, catalog_port=options.catalog_port,
                               catalog_faults=options.catalog_faults, run_worker=options.run_worker)
    except STARTUP_ERRORS as exc:
        print(f"ol2purview {command}: could not start: {exc}", file=sys.stderr)
        return 1
    return app, host


def run(args: argparse.Namespace) -> int:
    options = ServeOptions.from_args(args)
    signal.signal(signal.SIGTERM, _interrupt)  # while starting: unwind, so that Azurite and the catalog are stopped
    try:
        started = _start(options, "serve")
    except KeyboardInterrupt:
        print("ol2purview serve: stopped while starting", file=sys.stderr)
        return 0
    if isinstance(started, int):
        return started
    app, host = started
    try:
        return _serve_http(options, app, host)
    except KeyboardInterrupt:
        return 0
    finally:
        host.stop()


def _serve_http(options: ServeOptions, app: LoadedApp, host: LocalHost) -> int:
    try:
        http = FunctionsHttpApp(app.functions, app.config, KeyRing(options.master_key, host_keys=(options.key,),
                                                                   function_keys=options.function_keys),
                                host.deliveries, admin_endpoints={STATUS_PATH: host.status})
    except (FunctionAppError, RouteTemplateError, ValueError) as exc:
        print(f"ol2purview serve: {exc}", file=sys.stderr)
        return 2
    listener = _listen_on_any_port(options.host) if options.port == 0 else None  # tests: no race for a free port
    if listener is not None:
        options = replace(options, port=listener.getsockname()[1])
    print(banner(options, http.routes, host.describe()), flush=True)
    server = uvicorn.Server(
        uvicorn.Config(
            http, host=options.host, port=options.port, lifespan="off", access_log=False,  # URLs carry ?code=
            http="httptools", log_level=options.log_level, timeout_graceful_shutdown=10,
        )
    )
    # uvicorn re-raises the signal that stopped it once it has shut down; these handlers make that a clean exit.
    signal.signal(signal.SIGTERM, _ignore_signal)
    signal.signal(signal.SIGINT, _ignore_signal)
    asyncio.run(_serve(server, lambda: print(f"{READY_LINE}: http://{options.host}:{options.port}", flush=True),
                       [listener] if listener is not None else None))
    if not server.started:
        print(f"ol2purview serve: could not listen on {options.host}:{options.port} (see the error above)",
              file=sys.stderr)
        return 1
    return 0


def run_worker(args: argparse.Namespace) -> int:
    """`ol2purview worker`: the queue triggers only, until SIGTERM or Ctrl-C."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    options = ServeOptions.from_args(args)
    started = _start(options, "worker")
    if isinstance(started, int):
        return started
    _app, host = started
    try:
        print("\n".join(["ol2purview worker: queue triggers of " + options.app_path.name, *host.describe()]),
              flush=True)
        print(f"{READY_LINE}: worker", flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        host.stop()
    counts = host.triggers.counts() or {}
    print(f"ol2purview worker: stopped ({counts.get('succeeded', 0)} succeeded, {counts.get('failed', 0)} failed, "
          f"{counts.get('poisoned', 0)} poisoned)", flush=True)
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _ignore_signal(signum: int, frame: object) -> None:
    """Signals after shutdown need no action: the server has already stopped."""


def _listen_on_any_port(host: str) -> socket.socket:
    """A socket bound to a port the system picks, for uvicorn to serve on."""
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, 0))
    return listener


async def _serve(server: uvicorn.Server, on_ready: Callable[[], None],
                 sockets: list[socket.socket] | None = None) -> None:
    serving = asyncio.create_task(_serve_until_stopped(server, sockets))
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    if server.started:
        on_ready()
    await serving


async def _serve_until_stopped(server: uvicorn.Server, sockets: list[socket.socket] | None) -> None:
    try:
        await server.serve(sockets)
    except SystemExit:  # uvicorn exits this way when it cannot bind; it has logged why
        pass


def _public_host(host: str) -> str:
    return socket.gethostname() if host in ("0.0.0.0", "::") else host


def banner(options: ServeOptions, routes: list[HttpRoute], services: list[str]) -> str:
    """What `serve` prints on start: routes, keys, services, and the producer settings that point at this endpoint."""
    url = f"http://{_public_host(options.host)}:{options.port}"
    ingest = next((r for r in routes if r.function.name == INGEST_FUNCTION), None)
    endpoint = "/" + ingest.template.template if ingest else "/api/v1/lineage"
    key_note = " (generated; pass --key to keep one)" if options.key_generated else ""
    lines = [
        f"ol2purview serve: {options.app_path.name} on {url}",
        *(f"  {route.describe()}" for route in routes),
        f"function key: {options.key}{key_note}",
        f"master key: {options.master_key}",
        f"status: {url}{STATUS_PATH} (master key)",
        *services,
        "",
        "Spark / Databricks (cluster Spark config):",
        "  spark.extraListeners=io.openlineage.spark.agent.OpenLineageSparkListener",
        "  spark.openlineage.transport.type=http",
        f"  spark.openlineage.transport.url={url}",
        f"  spark.openlineage.transport.endpoint={endpoint}",
        f"  spark.openlineage.transport.urlParams.code={options.key}",
        "  spark.openlineage.transport.compression=gzip",
        "",
        "Python client (openlineage-python), environment:",
        f"  OPENLINEAGE_URL={url}",
        f"  OPENLINEAGE_ENDPOINT={endpoint.lstrip('/')}?code={options.key}",
        "or openlineage.yml:",
        "  transport:",
        "    type: http",
        f"    url: {url}",
        f"    endpoint: {endpoint.lstrip('/')}",
        "    compression: gzip",
        "    custom_headers:",
        f"      {KEY_HEADER}: {options.key}",
        "",
    ]
    return "\n".join(lines)
