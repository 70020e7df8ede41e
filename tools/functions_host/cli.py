"""`ol2purview serve` and `ol2purview worker`: run function_app.py locally as the Azure Functions host would.

`serve` starts the storage (Azurite, or the embedded SQLite queues), the embedded catalog unless one is configured,
the queue triggers (unless `--no-worker`) and the HTTP functions. It prints the function and master keys, the Spark
and Python client settings that point at this endpoint, the catalog page, the storage, then a line starting with
`ready` once it accepts connections. Generated keys are kept in the data folder and reused (state.py), and what
`serve` started is recorded there (`serve.json`) so that `worker` and every command that needs the host or the
catalog find it (tools/catalog_options.py). Without `--port` / `--catalog-port`, a port taken by another serve is
replaced by a free one, said on stdout: `--data DIR` is all a second serve needs. `worker` runs only the queue and
timer triggers, so that a worker can be stopped or killed while HTTP keeps accepting; without `--storage` it uses the
storage and catalog of the `serve` running on its data folder.
SIGTERM, SIGHUP (the terminal closed) and Ctrl-C stop either gracefully (in-flight messages finish) with status 0.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import uvicorn

from olparser.adapters.rules_file import rules_problem
from olparser.settings import Settings

from ..azurite import AzuriteNotInstalled, AzuriteStartError
from ..log_setup import UVICORN_LOG_CONFIG, configure_logging
from .functions import FunctionAppError
from .http_app import FunctionsHttpApp, HttpRoute
from .keys import KEY_HEADER, KeyRing
from .local_catalog import add_catalog_arguments
from .local_host import LoadedApp, LocalHost
from .protocol import HEADER_TIMEOUT_SECONDS, protocol_with_header_timeout
from .queue_host import DEFAULT_LEASE_SECONDS
from .routes import RouteTemplateError
from .state import HostKeys, RunningHost, forget_running, owner_only_dir, stop_leftover_azurite
from .storage import STORAGE_SETTING, add_storage_arguments

# The app `serve` runs by default: the repository's function_app.py next to the tools/ folder (also when tools/ is
# imported as ol2purview_tools by the editable install), or else the copy an installed wheel carries in
# ol2purview_tools/app/ (setup.py), which reads the rules the wheel packaged (olparser/settings.py).
_PACKAGE_FOLDER = Path(__file__).resolve().parent.parent
DEFAULT_APP = (
    _PACKAGE_FOLDER.parent / "function_app.py"
    if _PACKAGE_FOLDER.name == "tools"
    else _PACKAGE_FOLDER / "app" / "function_app.py"
)
INGEST_FUNCTION = "ingest_event"
READY_LINE = "ready"
DEFAULT_PORT = 7071
LISTEN_BACKLOG = 2048  # uvicorn's default, which it sets again when it serves
KEY_ENV = "OL2PURVIEW_FUNCTION_KEY"
MASTER_KEY_ENV = "OL2PURVIEW_MASTER_KEY"
STATUS_PATH = "/admin/ol2purview/status"
STARTUP_ERRORS = (
    FunctionAppError,
    RouteTemplateError,
    ValueError,
    AzuriteNotInstalled,
    AzuriteStartError,
    RuntimeError,
    OSError,
)
MAX_CONNECTIONS = 1000  # open connections and requests together; beyond that uvicorn answers 503
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # SIGHUP: the terminal was closed


@dataclass(frozen=True)
class ServeOptions:
    """What `serve` runs with, after defaults and generated keys are filled in."""

    app_path: Path
    host: str
    port: int
    keys: HostKeys
    function_keys: dict[str, tuple[str, ...]]  # per-function keys: valid for that function only
    data_dir: Path
    storage: str | None
    azurite_ports: str | None
    catalog_port: int | None  # None: the default, or a free port when that is in use
    catalog_faults: str
    run_worker: bool
    log_level: str
    lease_seconds: float = DEFAULT_LEASE_SECONDS

    @property
    def key(self) -> str:
        return self.keys.function_key

    @property
    def master_key(self) -> str:
        return self.keys.master_key

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, with_keys: bool = True) -> "ServeOptions":
        data_dir = Path(args.data).resolve() if args.data else Settings.from_env().data_dir.resolve()
        keys = (
            HostKeys.load_or_create(
                data_dir, getattr(args, "key", None) or None, getattr(args, "master_key", None) or None
            )
            if with_keys
            else HostKeys("", "", None, False, False)
        )
        return cls(
            app_path=Path(args.app),
            host=getattr(args, "host", "127.0.0.1"),
            port=getattr(args, "port", None) or 0,
            keys=keys,
            function_keys=_function_keys(getattr(args, "function_key", None) or []),
            data_dir=data_dir,
            storage=args.storage,
            azurite_ports=args.azurite_ports,
            catalog_port=args.catalog_port,
            catalog_faults=args.catalog_faults,
            run_worker=not getattr(args, "no_worker", False),
            log_level=args.log_level,
            lease_seconds=getattr(args, "lease", DEFAULT_LEASE_SECONDS),
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
    parser.add_argument(
        "--data",
        help="folder for local state: run state, queues, catalog, Azurite (sets OL2PURVIEW_DATA_DIR; default .data)",
    )
    add_storage_arguments(parser)
    add_catalog_arguments(parser)
    parser.add_argument("--app", default=str(DEFAULT_APP), help="the function app to serve (default: function_app.py)")
    parser.add_argument(
        "--lease",
        type=_lease_seconds,
        default=DEFAULT_LEASE_SECONDS,
        metavar="SECONDS",
        help="how long a message the queue triggers took stays invisible to other workers, renewed "
        "while it runs: a killed worker's messages come back after this "
        f"(default {DEFAULT_LEASE_SECONDS:g})",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"], help="log level (default info)"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=int,
        help=f"port to listen on (default {DEFAULT_PORT}, as func start, or a free "
        "one when that is in use; 0 = a free port)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (0.0.0.0 for every interface)")
    parser.add_argument(
        "--key",
        default=os.environ.get(KEY_ENV),
        help=f"the function key callers must send (default: ${KEY_ENV}, else the key kept in "
        "<data>/host-keys.json, generated on the first start)",
    )
    parser.add_argument(
        "--master-key",
        default=os.environ.get(MASTER_KEY_ENV),
        help=f"the master key, for admin endpoints (default: ${MASTER_KEY_ENV}, else the key kept in "
        "<data>/host-keys.json)",
    )
    parser.add_argument(
        "--function-key",
        action="append",
        metavar="FUNCTION=KEY",
        help="an extra key valid for one function only (repeatable), as Azure's function keys",
    )
    parser.add_argument(
        "--no-worker",
        action="store_true",
        help="serve HTTP only; run the queue and timer triggers with `ol2purview worker`",
    )
    _add_common_arguments(parser)


def _lease_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lease must be a number of seconds, got {value[:20]!r}") from None
    if not 1 <= seconds <= 3600:
        raise argparse.ArgumentTypeError(f"--lease must be between 1 and 3600 seconds, got {seconds:g}")
    return seconds


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    _add_common_arguments(parser)


def _start(options: ServeOptions, command: str) -> tuple[LoadedApp, LocalHost] | int:
    os.umask(0o077)  # every file this host writes (keys, queues, claim checks, run state, Azurite data) owner-only
    if options.run_worker:  # rules that cannot be used would send every event to the poison queue: refuse to start
        problem = rules_problem(Settings.from_env())
        if problem:
            print(
                f"ol2purview {command}: the mapping rules cannot be used (fix them, check with `qn-tester lint`): "
                f"{problem}",
                file=sys.stderr,
            )
            return 2
    owner_only_dir(options.data_dir)
    try:
        app = LoadedApp.load(options.app_path)
    except (FunctionAppError, RouteTemplateError, ValueError) as exc:
        print(f"ol2purview {command}: {exc}", file=sys.stderr)
        return 2
    try:
        host = LocalHost.start(
            app,
            options.data_dir,
            storage_mode=options.storage,
            azurite_ports=options.azurite_ports,
            catalog_port=options.catalog_port,
            catalog_faults=options.catalog_faults,
            run_worker=options.run_worker,
            function_key=options.key or None,
            lease_seconds=options.lease_seconds,
        )
    except STARTUP_ERRORS as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        print(f"ol2purview {command}: could not start: {reason}", file=sys.stderr)
        return 1
    return app, host


def bind_http(host: str, port: int | None) -> socket.socket:
    """The listening socket for `serve`, bound before anything else starts. `port` None: the default port, or a free
    one (said on stdout) when another serve holds it; a port given that is in use is an error that names the port
    and the flag that changes it."""
    if port is None:
        try:
            return bind_http(host, DEFAULT_PORT)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
        sock = bind_http(host, 0)
        _say(
            f"port {DEFAULT_PORT} on {host} is in use (another `ol2purview serve`?): listening on "
            f"{sock.getsockname()[1]}"
        )
        return sock
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        # Listening at once takes the port: two serves starting together could otherwise both bind it (SO_REUSEADDR)
        # and the second fail only when uvicorn listens, after the catalog and the typedefs started. Connections
        # made before the app serves wait in the backlog.
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise OSError(
                exc.errno,
                f"port {port} on {host} is already in use (another `ol2purview serve`?): "
                f"pass --port N to listen on another one",
            ) from None
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock


def _other_serve(data_dir: Path) -> str | None:
    """Why this data folder cannot be served now (another serve runs on it), after stopping an Azurite that a
    killed serve left behind; None when it is free."""
    recorded = RunningHost.recorded(data_dir)
    if recorded is None:
        return None
    if recorded.is_running() and recorded.pid != os.getpid():
        return (
            f"another ol2purview serve (pid {recorded.pid}, {recorded.url}) is using the data folder {data_dir}: "
            "stop it, or pass --data DIR to run a second one"
        )
    stopped = stop_leftover_azurite(recorded)
    if stopped is not None:
        print(f"ol2purview serve: stopped Azurite (pid {stopped}) left running by an earlier serve", flush=True)
    return None


def _record(options: ServeOptions, host: LocalHost) -> RunningHost:
    azurite = host.storage.azurite
    running = RunningHost(
        pid=os.getpid(),
        url=f"http://{_public_host(options.host)}:{options.port}",
        data_dir=str(options.data_dir),
        storage_mode=host.storage.mode,
        storage_connection=os.environ.get(STORAGE_SETTING),
        atlas_url=os.environ.get("ATLAS_ENDPOINT"),
        catalog_page=f"{host.catalog.url}/" if host.catalog else None,
        azurite_pid=azurite.pid if azurite else None,
        azurite_location=str(azurite.location) if azurite else None,
        started_at=time.time(),
    )
    running.write()
    return running


def run(args: argparse.Namespace) -> int:
    for sig in STOP_SIGNALS:  # while starting: unwind, so that Azurite and the catalog are stopped
        signal.signal(sig, _interrupt)
    configure_logging(args.log_level)
    data_dir = Path(args.data).resolve() if args.data else Settings.from_env().data_dir.resolve()
    busy = _other_serve(data_dir)
    if busy:
        print(f"ol2purview serve: {busy}", file=sys.stderr)
        return 1
    try:
        sock = bind_http(args.host, args.port)
    except OSError as exc:
        print(f"ol2purview serve: {exc.strerror}", file=sys.stderr)
        return 1
    options = replace(ServeOptions.from_args(args), port=sock.getsockname()[1])
    try:
        started = _start(options, "serve")
    except KeyboardInterrupt:
        sock.close()
        print("ol2purview serve: stopped while starting", file=sys.stderr)
        return 0
    if isinstance(started, int):
        sock.close()
        return started
    app, host = started
    try:
        _record(options, host)
        return _serve_http(options, app, host, sock)
    except KeyboardInterrupt:
        return 0
    finally:
        forget_running(options.data_dir, os.getpid())
        host.stop()


def _serve_http(options: ServeOptions, app: LoadedApp, host: LocalHost, sock: socket.socket) -> int:
    try:
        http = FunctionsHttpApp(
            app.functions,
            app.config,
            KeyRing(options.master_key, host_keys=(options.key,), function_keys=options.function_keys),
            host.deliveries,
            admin_endpoints={STATUS_PATH: host.status},
        )
    except (FunctionAppError, RouteTemplateError, ValueError) as exc:
        print(f"ol2purview serve: {exc}", file=sys.stderr)
        return 2
    _say(banner(options, http.routes, host.describe()))
    server = uvicorn.Server(
        uvicorn.Config(
            http,
            host=options.host,
            port=options.port,
            lifespan="off",
            access_log=False,  # URLs carry ?code=
            http=protocol_with_header_timeout(HEADER_TIMEOUT_SECONDS),
            log_level=options.log_level,
            timeout_graceful_shutdown=10,
            limit_concurrency=MAX_CONNECTIONS,
            log_config=UVICORN_LOG_CONFIG,
        )
    )
    # uvicorn re-raises the signal that stopped it once it has shut down; these handlers make that a clean exit.
    for sig in (*STOP_SIGNALS, signal.SIGINT):
        signal.signal(sig, _ignore_signal)
    # uvicorn handles SIGINT and SIGTERM while it serves; SIGHUP (the terminal closed) must stop it the same way.
    signal.signal(signal.SIGHUP, lambda _sig, frame: server.handle_exit(signal.SIGTERM, frame))
    asyncio.run(_serve(server, sock, lambda: _say(f"{READY_LINE}: http://{options.host}:{options.port}")))
    if not server.started:
        print(
            f"ol2purview serve: could not listen on {options.host}:{options.port} (see the error above)",
            file=sys.stderr,
        )
        return 1
    return 0


def _use_running_serve(options: ServeOptions) -> tuple[ServeOptions, str | None]:
    """A worker without --storage (and no AzureWebJobsStorage) joins the `serve` running on its data folder: the
    same storage and the same catalog. Returns the options to use and a line saying so."""
    running = RunningHost.find(options.data_dir)
    if running is None or options.storage is not None or os.environ.get(STORAGE_SETTING):
        return options, None
    if running.storage_mode == "embedded":
        options = replace(options, storage="embedded")
    elif running.storage_connection:
        os.environ[STORAGE_SETTING] = running.storage_connection
    if running.atlas_url and not (
        os.environ.get("ATLAS_ENDPOINT") or os.environ.get("PURVIEW_ACCOUNT_NAME") or os.environ.get("PURVIEW_ENDPOINT")
    ):
        os.environ["ATLAS_ENDPOINT"] = running.atlas_url
    return options, f"using the storage and catalog of ol2purview serve (pid {running.pid}, {running.url})"


def run_worker(args: argparse.Namespace) -> int:
    """`ol2purview worker`: the queue and timer triggers only, until SIGTERM, SIGHUP or Ctrl-C."""
    stop = threading.Event()
    for sig in (*STOP_SIGNALS, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    configure_logging(args.log_level)
    options, joined = _use_running_serve(ServeOptions.from_args(args, with_keys=False))
    started = _start(options, "worker")
    if isinstance(started, int):
        return started
    _app, host = started
    try:
        _say(
            "\n".join(
                [
                    "ol2purview worker: queue and timer triggers of " + options.app_path.name,
                    *([joined] if joined else []),
                    *host.describe(),
                    f"{READY_LINE}: worker",
                ]
            )
        )
        while not stop.wait(0.5):
            pass
    finally:
        host.stop()
    counts = host.triggers.counts() or {}
    print(
        f"ol2purview worker: stopped ({counts.get('succeeded', 0)} succeeded, {counts.get('failed', 0)} failed, "
        f"{counts.get('poisoned', 0)} poisoned)",
        flush=True,
    )
    return 0


def _say(text: str) -> None:
    """Print lines in one write, so that a log record from a trigger thread cannot land in the middle of them."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _ignore_signal(signum: int, frame: object) -> None:
    """Signals after shutdown need no action: the server has already stopped."""


async def _serve(server: uvicorn.Server, sock: socket.socket, on_ready: Callable[[], None]) -> None:
    serving = asyncio.create_task(_serve_until_stopped(server, sock))
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    if server.started:
        on_ready()
    await serving


async def _serve_until_stopped(server: uvicorn.Server, sock: socket.socket) -> None:
    try:
        await server.serve(sockets=[sock])
    except SystemExit:  # uvicorn exits this way when it cannot bind; it has logged why
        pass


def _public_host(host: str) -> str:
    return socket.gethostname() if host in ("0.0.0.0", "::") else host


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
REAL_CLUSTER_NOTE = (
    "  ({host} is this machine: a Spark on it can use these settings, a real cluster cannot reach "
    "them; to try one before deploying, see docs/guides/run-locally.md, \"Try it from a real "
    "cluster\")"
)


def banner(options: ServeOptions, routes: list[HttpRoute], services: list[str]) -> str:
    """What `serve` prints on start: routes, keys, services, and the producer settings that point at this endpoint."""
    url = f"http://{_public_host(options.host)}:{options.port}"
    ingest = next((r for r in routes if r.function.name == INGEST_FUNCTION), None)
    endpoint = "/" + ingest.template.template if ingest else "/api/v1/lineage"
    keys = options.keys
    kept = f"kept in {keys.path}" if keys.path else ""
    key_note = (
        f" ({'generated, ' if keys.created else ''}{kept}; reused by the next serve)" if keys.function_key_kept else ""
    )
    master_note = f" ({kept})" if keys.path else ""
    lines = [
        f"ol2purview serve: {options.app_path.name} on {url}",
        *(f"  {route.describe()}" for route in routes),
        f"function key: {options.key}{key_note}",
        f"master key: {options.master_key}{master_note}",
        f"status: {url}{STATUS_PATH} (master key)",
        *services,
        "",
        "Spark / Databricks (cluster Spark config):",
        *(f"  {name} {value}" for name, value in spark_settings(url, endpoint, options.key)),
        *([REAL_CLUSTER_NOTE.format(host=options.host)] if options.host in LOOPBACK_HOSTS else []),
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


def spark_settings(url: str, endpoint: str, key: str) -> list[tuple[str, str]]:
    """The cluster Spark config that points the OpenLineage listener at this endpoint (Databricks' Spark config box
    takes one `key value` per line)."""
    return [
        ("spark.extraListeners", "io.openlineage.spark.agent.OpenLineageSparkListener"),
        ("spark.openlineage.transport.type", "http"),
        ("spark.openlineage.transport.url", url),
        ("spark.openlineage.transport.endpoint", endpoint),
        ("spark.openlineage.transport.urlParams.code", key),
        ("spark.openlineage.transport.compression", "gzip"),
    ]
