"""`ol2purview serve`: run function_app.py locally over HTTP, as the Azure Functions host would.

Prints the function key, the Spark and Python client settings that point at this endpoint, then a line starting
with `ready` once it accepts connections. SIGTERM and Ctrl-C shut it down gracefully with exit status 0.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import uvicorn

from olparser.settings import PROJECT_ROOT
from tools.functions_host.config import HostConfig
from tools.functions_host.functions import FunctionAppError, describe_functions, load_app
from tools.functions_host.http_app import HTTP_TRIGGER, FunctionsHttpApp, HttpRoute
from tools.functions_host.invocation import BindingDelivery, check_supported
from tools.functions_host.keys import KEY_HEADER, KeyRing, generate_key
from tools.functions_host.routes import RouteTemplateError

DEFAULT_APP = PROJECT_ROOT / "function_app.py"
INGEST_FUNCTION = "ingest_event"
READY_LINE = "ready"
KEY_ENV = "OL2PURVIEW_FUNCTION_KEY"
# Extension points: trigger types this host runs, and output binding deliveries by binding type.
TRIGGER_TYPES = frozenset({HTTP_TRIGGER})
DELIVERIES: dict[str, BindingDelivery] = {}


@dataclass(frozen=True)
class ServeOptions:
    """What `serve` runs with, after defaults and generated keys are filled in."""

    app_path: Path
    host: str
    port: int
    key: str
    key_generated: bool
    master_key: str
    data_dir: Path | None
    catalog_port: int  # the embedded catalog's port; starting the catalog is wired in with tools/catalog
    log_level: str

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "ServeOptions":
        return cls(
            app_path=Path(args.app),
            host=args.host,
            port=args.port,
            key=args.key or generate_key(),
            key_generated=not args.key,
            master_key=args.master_key or generate_key(),
            data_dir=Path(args.data).resolve() if args.data else None,
            catalog_port=args.catalog_port,
            log_level=args.log_level,
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=7071, help="port to listen on (default 7071, as func start)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (0.0.0.0 for every interface)")
    parser.add_argument("--key", default=os.environ.get(KEY_ENV),
                        help=f"the function key callers must send (default: ${KEY_ENV}, else a new random key, printed)")
    parser.add_argument("--master-key", help="the master key, for admin-level functions (default: a random key)")
    parser.add_argument("--data", help="folder for local state such as the inbox (sets OL2PURVIEW_DATA_DIR)")
    parser.add_argument("--catalog-port", type=int, default=21000, help="port of the embedded catalog")
    parser.add_argument("--app", default=str(DEFAULT_APP), help="the function app to serve (default: function_app.py)")
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"], help="log level (default info)"
    )


def run(args: argparse.Namespace) -> int:
    options = ServeOptions.from_args(args)
    logging.basicConfig(level=options.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if options.data_dir is not None:
        os.environ["OL2PURVIEW_DATA_DIR"] = str(options.data_dir)  # read by Settings.from_env in the app
    try:
        config = HostConfig.load(options.app_path.parent / "host.json")
        functions = describe_functions(load_app(options.app_path))
        check_supported(functions, TRIGGER_TYPES, DELIVERIES)
        app = FunctionsHttpApp(functions, config, KeyRing(options.master_key, host_keys=(options.key,)), DELIVERIES)
    except (FunctionAppError, RouteTemplateError, ValueError) as exc:
        print(f"ol2purview serve: {exc}", file=sys.stderr)
        return 2
    print(banner(options, app.routes), flush=True)
    server = uvicorn.Server(
        uvicorn.Config(
            app, host=options.host, port=options.port, lifespan="off", access_log=False,  # URLs carry ?code=
            http="httptools", log_level=options.log_level, timeout_graceful_shutdown=10,
        )
    )
    # uvicorn re-raises the signal that stopped it once it has shut down; these handlers make that a clean exit.
    signal.signal(signal.SIGTERM, _ignore_signal)
    signal.signal(signal.SIGINT, _ignore_signal)
    asyncio.run(_serve(server, lambda: print(f"{READY_LINE}: http://{options.host}:{options.port}", flush=True)))
    if not server.started:
        print(f"ol2purview serve: could not listen on {options.host}:{options.port} (see the error above)",
              file=sys.stderr)
        return 1
    return 0


def _ignore_signal(signum: int, frame: object) -> None:
    """Signals after shutdown need no action: the server has already stopped."""


async def _serve(server: uvicorn.Server, on_ready: Callable[[], None]) -> None:
    serving = asyncio.create_task(_serve_until_stopped(server))
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    if server.started:
        on_ready()
    await serving


async def _serve_until_stopped(server: uvicorn.Server) -> None:
    try:
        await server.serve()
    except SystemExit:  # uvicorn exits this way when it cannot bind; it has logged why
        pass


def _public_host(host: str) -> str:
    return socket.gethostname() if host in ("0.0.0.0", "::") else host


def banner(options: ServeOptions, routes: list[HttpRoute]) -> str:
    """What `serve` prints on start: routes, key, and the producer settings that point at this endpoint."""
    url = f"http://{_public_host(options.host)}:{options.port}"
    ingest = next((r for r in routes if r.function.name == INGEST_FUNCTION), None)
    endpoint = "/" + ingest.template.template if ingest else "/api/v1/lineage"
    key_note = " (generated; pass --key to keep one)" if options.key_generated else ""
    lines = [
        f"ol2purview serve: {options.app_path.name} on {url}",
        *(f"  {route.describe()}" for route in routes),
        f"function key: {options.key}{key_note}",
        f"data folder: {options.data_dir or os.environ.get('OL2PURVIEW_DATA_DIR') or PROJECT_ROOT / '.data'}",
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
