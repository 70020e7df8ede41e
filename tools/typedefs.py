"""`ol2purview typedefs`: register the connector's custom Atlas types (create the missing, update the existing)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olparser.adapters.catalog import (
    CatalogRejected,
    CatalogUnavailable,
    load_typedefs,
    make_atlas_client,
    register_typedefs,
    retry_for,
)
from olparser.catalog_rules import REQUEST
from olparser.settings import TYPEDEFS_DIR, Settings

from .catalog_options import add_target_arguments, catalog_target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir",
        type=Path,
        default=TYPEDEFS_DIR,
        help="folder of TypesDef JSON files (default: the connector's own, olparser/lineage/typedefs)",
    )
    parser.add_argument("--password", help="basic-auth password for --atlas-url (default: ATLAS_PASSWORD)")
    add_target_arguments(parser, catalog=True)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    try:
        typedefs = load_typedefs(args.dir)
        target = catalog_target(args, settings)
    except ValueError as exc:
        print(f"ol2purview typedefs: {exc}", file=sys.stderr)
        return 2
    client = make_atlas_client(target, timeout=settings.catalog_timeout_seconds)
    try:
        report = register_typedefs(client, typedefs, retry_for(REQUEST, settings))
    except (CatalogRejected, CatalogUnavailable) as exc:
        print(f"ol2purview typedefs: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
    print(f"{target.endpoint}: {report.describe()}")
    return 0
