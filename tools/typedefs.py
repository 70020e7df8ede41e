"""`ol2purview typedefs`: register the connector's custom Atlas types (create the missing, update the existing)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olparser.catalog import (CatalogRejected, CatalogTarget, CatalogUnavailable, RetryPolicy, load_typedefs,
                              make_atlas_client, register_typedefs, resolve_target)
from olparser.settings import TYPEDEFS_DIR, Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", type=Path, default=TYPEDEFS_DIR,
                        help="folder of TypesDef JSON files (default: %(default)s)")
    parser.add_argument("--atlas-url", help="Atlas v2 base URL, e.g. http://127.0.0.1:21000/api/atlas/v2 "
                                            "(default: PURVIEW_ACCOUNT_NAME or ATLAS_ENDPOINT from the settings)")
    parser.add_argument("--user", help="basic-auth user for --atlas-url (default: ATLAS_USERNAME)")
    parser.add_argument("--password", help="basic-auth password for --atlas-url (default: ATLAS_PASSWORD)")


def _target(args: argparse.Namespace, settings: Settings) -> CatalogTarget:
    if args.atlas_url:
        return CatalogTarget("atlas", args.atlas_url.rstrip("/"), username=args.user or settings.atlas_username,
                             password=args.password or settings.atlas_password)
    target = resolve_target(settings)
    if target.endpoint is None:
        raise ValueError("no catalog configured: set PURVIEW_ACCOUNT_NAME or ATLAS_ENDPOINT, or pass --atlas-url")
    return target


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    try:
        typedefs = load_typedefs(args.dir)
        target = _target(args, settings)
    except ValueError as exc:
        print(f"ol2purview typedefs: {exc}", file=sys.stderr)
        return 2
    client = make_atlas_client(target, timeout=settings.catalog_timeout_seconds)
    try:
        report = register_typedefs(client, typedefs, RetryPolicy(max_attempts=settings.catalog_max_attempts))
    except (CatalogRejected, CatalogUnavailable) as exc:
        print(f"ol2purview typedefs: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
    print(f"{target.endpoint}: {report.describe()}")
    return 0
