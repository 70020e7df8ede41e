"""`ol2purview catalog`: run the embedded Atlas-compatible catalog and its lineage page in the foreground;
`ol2purview catalog scan PATH ...` registers a local folder as Purview's storage scanners would (tools.catalog.scan)."""

from __future__ import annotations

import argparse
import os
import sys

from olparser.settings import Settings

from ..exit_codes import FAILED
from ..log_setup import configure_logging
from .collections import DEFAULT_ACCOUNT_NAME, parse_curator_of
from .faults import parse_fault_spec
from .history_link import HistoryLink
from .server import CatalogServer

DEFAULT_PORT = 21000  # Apache Atlas's usual port
PASSWORD_ENV = "OL2PURVIEW_CATALOG_PASSWORD"  # the basic-auth password, kept out of `ps` (wins over nothing else)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any free)")
    parser.add_argument("--db", help="SQLite database file (default: <OL2PURVIEW_DATA_DIR>/catalog.sqlite)")
    parser.add_argument("--user", help="require HTTP basic auth with this user name")
    parser.add_argument(
        "--password", help=f"the basic auth password (with --user); better: ${PASSWORD_ENV}, which `ps` does not show"
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this Host name (default: loopback names only, against DNS "
        "rebinding); repeatable; '*' allows any",
    )
    parser.add_argument(
        "--faults",
        default="",
        help="fault injection for the Atlas API, e.g. 429:0.2,503:0.1,reset:0.05,latency:50ms,seed:1",
    )
    parser.add_argument("--access-log", action="store_true", help="log every request (method, path, status)")
    parser.add_argument(
        "--account-name",
        default=DEFAULT_ACCOUNT_NAME,
        help="the account name, which names the root collection (default: %(default)s)",
    )
    parser.add_argument(
        "--curator-of",
        metavar="NAMES",
        help="answer as Purview does to a caller who is Data Curator of these collections only "
        "(comma-separated, e.g. finance,lineage-team; sub-collections inherit): a write "
        "elsewhere gets 403 (default: every collection)",
    )
    sub = parser.add_subparsers(dest="catalog_command", metavar="{scan}")
    scan = sub.add_parser(
        "scan",
        help="register a local folder as Purview's ADLS (or Blob) scanner would",
        description="register a local folder as Purview's ADLS (or Blob) scanner would: the "
        "container, the resource sets and the single files",
    )
    from . import scan as scan_command

    scan_command.add_arguments(scan)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "catalog_command", None) == "scan":
        from . import scan as scan_command

        return scan_command.run(args)
    password = args.password or os.environ.get(PASSWORD_ENV) or None
    if bool(args.user) != bool(password):
        raise SystemExit(f"ol2purview catalog: give --user together with ${PASSWORD_ENV} (or --password)")
    try:
        faults = parse_fault_spec(args.faults)
        curator_of = parse_curator_of(args.curator_of)
    except ValueError as exc:
        raise SystemExit(f"ol2purview catalog: {exc}") from None
    data_dir = Settings.from_env().data_dir
    db = args.db or str(data_dir / "catalog.sqlite")
    configure_logging("info")
    server = CatalogServer(
        db,
        host=args.host,
        port=args.port,
        user=args.user,
        password=password,
        faults=faults,
        log_level="info",
        access_log=args.access_log,
        allowed_hosts=args.allow_host,
        history=HistoryLink(data_dir),  # the page's time window: the serve on the data folder
        account_name=args.account_name,
        curator_of=curator_of,
    )

    def announce(listening: CatalogServer) -> None:
        print(f"catalog page:  {listening.url}/  (database {db})", flush=True)
        print(
            f"Atlas API:     {listening.atlas_url}{'  (basic auth)' if args.user else ''}"
            f"{f'  faults: {faults}' if str(faults) else ''}",
            flush=True,
        )

    try:
        server.serve_forever(announce)
    except OSError as exc:  # the port is taken (another catalog, a serve's): one line, as `serve` says it
        print(
            f"ol2purview catalog: cannot listen on {args.host}:{args.port}: {exc.strerror or exc} "
            "(--port 0 takes a free port)",
            file=sys.stderr,
        )
        return FAILED
    return 0
