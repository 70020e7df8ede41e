"""`ol2purview migrate accelerator [--apply]`: take over what Microsoft's C# accelerator wrote.

Reads the accelerator's estate from the catalog (its hash-named `databricks_process`es, the runnables they hang under,
its lower-cased placeholder datasets) and the connector's ledger (the run-state store of the running `serve`, or the
one the settings name), prints the plan (olparser/lineage/accelerator.py) and changes nothing; `--apply` carries it
out (olparser/pipeline/accelerator.py): idempotent, resumable after a crash. Guide: docs/guides/from-the-accelerator.md.

    ol2purview migrate accelerator            # what would be taken over, retired, repointed
    ol2purview migrate accelerator --apply
"""

from __future__ import annotations

import argparse
import sys
import time

from olparser.adapters.catalog import CatalogRejected, CatalogUnavailable, make_atlas_client
from olparser.adapters.runtime import Runtime
from olparser.lineage.accelerator import plan_migration, render
from olparser.pipeline.accelerator import apply_migration, read_estate, settle_takeovers
from olparser.settings import Settings

from .catalog_options import NoCatalog, add_target_arguments, catalog_target, ledger_settings
from .exit_codes import FAILED, OK, USAGE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="migrate_source", metavar="SOURCE", required=True)
    accelerator = sub.add_parser(
        "accelerator",
        help="take over what Purview-ADB-Lineage-Solution-Accelerator wrote (prints the plan; --apply does it)",
        description="Take over the entities Microsoft's C# accelerator (Purview-ADB-Lineage-Solution-Accelerator) "
        "wrote: its processes become the connector's and give way to the connector's own, its placeholders go",
    )
    accelerator.add_argument(
        "--apply", action="store_true", help="carry the plan out (idempotent: run it again after a failure)"
    )
    add_target_arguments(accelerator, catalog=True)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    try:
        target = catalog_target(args, settings)
    except (NoCatalog, ValueError) as exc:
        print(f"ol2purview migrate: {exc}", file=sys.stderr)
        return USAGE
    client = make_atlas_client(target, timeout=settings.catalog_timeout_seconds)
    runtime = Runtime(ledger_settings(args, settings), catalog_client=client)
    try:
        store, uploader = runtime.run_state_store(), runtime.catalog_uploader()
        runtime.uploader().ensure_typedefs()  # Purview's Databricks model and the connector's types, where missing
        now = time.time()
        if args.apply:  # what a crashed --apply left is carried out first, so that the plan reads what it did
            settle_takeovers(store, uploader, runtime.resolver(), now)
        estate, accelerator = read_estate(uploader, client.guids_of_type, store, [0])
        plan = plan_migration(estate)
        if args.apply:
            report = apply_migration(plan, accelerator, store, uploader, runtime.resolver(), now=now)
            print("\n".join(render(plan, target.endpoint or '', applied=True)))
            print(
                f"{report.registered} processes taken over, {report.repointed} repointed, {report.retired} retired, "
                f"{report.deleted} entities deleted"
            )
        else:
            print("\n".join(render(plan, target.endpoint or '', applied=False)))
    except (CatalogRejected, CatalogUnavailable, OSError) as exc:
        print(f"ol2purview migrate: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr)
        return FAILED
    finally:
        runtime.close()
    return OK
