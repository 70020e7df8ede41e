"""`ol2purview prune --older-than DAYS [--dry-run]`: remove the lineage of code that no longer runs.

A process the connector wrote remembers its last run (`lastRunTime`). Code that was deleted or renamed never runs
again, so its processes would stay in the catalog forever. This removes every process the connector's ledger holds
(the run-state store of the running `serve`, or the one the settings name: what the connector wrote, and what
`ol2purview migrate accelerator --apply` took over) whose last run is older than DAYS, and the placeholder datasets
the ledger holds (`openlineage_dataset` and its subtypes, with their columns, the accelerator's placeholders it took
over) that only those processes used. Nothing the ledger does not hold is ever touched: another connector's
processes, Purview's own, scanned assets. It reads and deletes through the Atlas API, so it works against the
embedded catalog, any Atlas, or Purview.

    ol2purview prune --older-than 90 --dry-run      # what would go, nothing deleted
    ol2purview prune --older-than 90

A process pruned here is simply written again by the next run of its code.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable

from olparser.adapters.catalog import CatalogRejected, CatalogUnavailable, CatalogUploader, make_atlas_client
from olparser.adapters.runtime import Runtime
from olparser.lineage import PROCESS_TYPES
from olparser.lineage.accelerator import PLACEHOLDER_TYPE as ACCELERATOR_PLACEHOLDER
from olparser.lineage.datasets import PLACEHOLDER_TYPE, UNITY_CATALOG_TYPE
from olparser.runs import RunStateStore
from olparser.settings import Settings

from .catalog_options import NoCatalog, add_target_arguments, catalog_target, ledger_settings

PLACEHOLDER_TYPES = frozenset({PLACEHOLDER_TYPE, UNITY_CATALOG_TYPE, ACCELERATOR_PLACEHOLDER})
Key = tuple[str, str]


@dataclass(frozen=True)
class PrunePlan:
    processes: tuple[Key, ...]
    placeholders: tuple[Key, ...]
    kept_placeholders: int  # placeholders of pruned processes that a live process still uses


def last_run(entity: dict[str, Any]) -> datetime | None:
    """When the process last ran: its `lastRunTime`, else the catalog's `updateTime` (static lineage)."""
    text = (entity.get("attributes") or {}).get("lastRunTime")
    if isinstance(text, str) and text:
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if moment is not None:
            return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    updated = entity.get("updateTime")
    return datetime.fromtimestamp(updated / 1000, timezone.utc) if isinstance(updated, (int, float)) else None


def _key(entity: dict[str, Any]) -> Key:
    return entity["typeName"], entity["attributes"]["qualifiedName"]


def _referenced(entity: dict[str, Any], names: Iterable[str]) -> list[dict[str, Any]]:
    found = []
    for name in names:
        value = (entity.get("relationshipAttributes") or {}).get(name) or (entity.get("attributes") or {}).get(name)
        for item in value if isinstance(value, list) else [value] if isinstance(value, dict) else []:
            if isinstance(item, dict) and item.get("entityStatus", "ACTIVE") == "ACTIVE":
                found.append(item)
    return found


def plan_prune(processes: list[dict[str, Any]], placeholders: dict[str, dict[str, Any]], cutoff: datetime) -> PrunePlan:
    """Pure: which processes ran last before `cutoff`, and which of the placeholders they read or write no process
    that stays uses (`placeholders`: guid -> entity with relationship attributes)."""
    stale = {
        p["guid"]: p for p in processes if p.get("status", "ACTIVE") == "ACTIVE" and (last_run(p) or cutoff) < cutoff
    }
    pruned, kept = [], 0
    for _guid, placeholder in sorted(placeholders.items()):
        users = {item.get("guid") for item in _referenced(placeholder, ("inputToProcesses", "outputFromProcesses"))}
        if users and users <= set(stale):
            pruned.append(_key(placeholder))
        elif users & set(stale):
            kept += 1
    return PrunePlan(
        processes=tuple(sorted(_key(p) for p in stale.values())),
        placeholders=tuple(sorted(pruned)),
        kept_placeholders=kept,
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--older-than",
        type=float,
        required=True,
        metavar="DAYS",
        help="remove processes whose last run is more than DAYS days old",
    )
    parser.add_argument("--dry-run", action="store_true", help="list what would be removed, remove nothing")
    add_target_arguments(parser, catalog=True)


def run(args: argparse.Namespace) -> int:
    if args.older_than < 0:
        print("ol2purview prune: --older-than must be a number of days (0 or more)", file=sys.stderr)
        return 2
    settings = Settings.from_env()
    try:
        target = catalog_target(args, settings)
    except (NoCatalog, ValueError) as exc:
        print(f"ol2purview prune: {exc}", file=sys.stderr)
        return 2
    cutoff = datetime.now(timezone.utc) - timedelta(days=args.older_than)
    client = make_atlas_client(target, timeout=settings.catalog_timeout_seconds)
    runtime = Runtime(ledger_settings(args, settings), catalog_client=client)
    try:
        uploader = runtime.catalog_uploader()
        plan = _plan(uploader, runtime.run_state_store(), cutoff)
        verb = "would remove" if args.dry_run else "removing"
        print(
            f"{target.endpoint}: {verb} {len(plan.processes)} processes last run before {cutoff:%Y-%m-%d %H:%M} "
            f"UTC and {len(plan.placeholders)} placeholders only they used "
            f"({plan.kept_placeholders} placeholders stay: other processes use them)"
        )
        for type_name, name in (*plan.processes, *plan.placeholders):
            print(f"  {type_name}  {name}")
        if not args.dry_run and (plan.processes or plan.placeholders):
            report = uploader.delete([*plan.processes, *plan.placeholders])
            print(
                f"removed {len(report.deleted)} entities ({report.entities} with columns), {report.calls} catalog calls"
            )
    except (CatalogRejected, CatalogUnavailable, OSError) as exc:
        print(f"ol2purview prune: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr)
        return 1
    finally:
        runtime.close()
    return 0


def _plan(uploader: CatalogUploader, store: RunStateStore, cutoff: datetime) -> PrunePlan:
    """The processes the ledger holds, as the catalog has them; the placeholders the stale ones use that the ledger
    holds too."""
    calls = [0]
    processes = list(uploader.read(store.owned_of_types(sorted(PROCESS_TYPES)), calls).values())
    stale = [p for p in processes if (last_run(p) or cutoff) < cutoff]
    touched = {
        key
        for p in stale
        for item in _referenced(p, ("inputs", "outputs"))
        if item.get("typeName") in PLACEHOLDER_TYPES and isinstance(key := _object_key(item), tuple)
    }
    placeholders = {e["guid"]: e for e in uploader.read(sorted(store.owned(touched)), calls).values()}
    return plan_prune(processes, placeholders, cutoff)


def _object_key(item: dict[str, Any]) -> Key | None:
    name = (item.get("uniqueAttributes") or {}).get("qualifiedName")
    return (item["typeName"], name) if isinstance(name, str) else None
