"""The catalog the local host writes to: Purview or an Atlas endpoint when configured, else the embedded catalog.

The embedded catalog (tools/catalog) is started in this process with its database under the data folder, and
ATLAS_ENDPOINT is set for the app so that `olparser.adapters.runtime` finds it.
"""

from __future__ import annotations

import argparse
import errno
import os
from pathlib import Path
from typing import MutableMapping

from ..catalog import CatalogServer
from ..catalog.history_link import HistoryLink

DEFAULT_CATALOG_PORT = 21000
CATALOG_DB = "catalog.sqlite"


def add_catalog_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog-port",
        type=int,
        help=f"port of the embedded catalog (default {DEFAULT_CATALOG_PORT}, or a free one when that "
        "is in use; 0 = a free port); it starts unless PURVIEW_ACCOUNT_NAME, PURVIEW_ENDPOINT or ATLAS_ENDPOINT is "
        "set",
    )
    parser.add_argument(
        "--catalog-faults",
        default="",
        metavar="SPEC",
        help="fault injection for the embedded catalog, e.g. 429:0.2,503:0.1,reset:0.05,seed:1",
    )


def catalog_configured(env: MutableMapping[str, str]) -> bool:
    return bool(env.get("PURVIEW_ACCOUNT_NAME") or env.get("PURVIEW_ENDPOINT") or env.get("ATLAS_ENDPOINT"))


def start_catalog_unless_configured(
    data_dir: Path,
    port: int | None,
    faults: str,
    env: MutableMapping[str, str] = os.environ,
    function_key: str | None = None,
) -> CatalogServer | None:
    """The started embedded catalog (ATLAS_ENDPOINT now points at it), or None when a catalog is configured. Its page
    asks the run history of the serve on `data_dir` (with `function_key`) for the time window. `port` None: the
    default port, or a free one when another serve (or anything) holds it."""
    if catalog_configured(env):
        return None

    def start(number: int) -> CatalogServer:
        server = CatalogServer(
            data_dir / CATALOG_DB, port=number, faults=faults or None, history=HistoryLink(data_dir, function_key)
        )
        try:
            return server.start()
        except BaseException:
            server.stop()  # closes its database
            raise

    try:
        try:
            server = start(DEFAULT_CATALOG_PORT if port is None else port)
        except OSError as exc:
            if port is not None or exc.errno != errno.EADDRINUSE:
                raise
            server = start(0)
            print(
                f"port {DEFAULT_CATALOG_PORT} is in use (another `ol2purview serve`?): the embedded catalog "
                f"listens on {server.port}",
                flush=True,
            )
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OSError(
                exc.errno,
                f"port {port} of the embedded catalog is already in use (another `ol2purview "
                "serve` or `ol2purview catalog`?): pass --catalog-port N (0 = any free port), "
                "or set ATLAS_ENDPOINT to use that catalog",
            ) from None
        raise
    env["ATLAS_ENDPOINT"] = server.atlas_url
    return server


def describe_catalog(server: CatalogServer | None, faults: str = "", env: MutableMapping[str, str] = os.environ) -> str:
    """The banner line: `catalog page: <url>/ ...` for the embedded catalog, else `catalog: <where>`."""
    if server is not None:
        return (
            f"catalog page: {server.url}/ (embedded; Atlas API {server.atlas_url}"
            f"{'; faults ' + faults if faults else ''})"
        )
    if env.get("PURVIEW_ACCOUNT_NAME"):
        return f"catalog: Purview account {env['PURVIEW_ACCOUNT_NAME']}"
    if env.get("PURVIEW_ENDPOINT"):
        return f"catalog: Purview at {env['PURVIEW_ENDPOINT']} (PURVIEW_ENDPOINT)"
    return f"catalog: {env.get('ATLAS_ENDPOINT')} (ATLAS_ENDPOINT)"
