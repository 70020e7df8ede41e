"""`ol2purview requeue`: move poison (dead-letter) messages back onto the lineage queue, so that they are processed
again once their cause (a mapping rule, the catalog) is fixed.

    ol2purview requeue --all
    ol2purview requeue --run-id 0190a1b2-... --dry-run
    ol2purview requeue --id <message or envelope id> --connection "UseDevelopmentStorage=true"

Which storage: --connection or --embedded when given; else AzureWebJobsStorage; else the storage of the
`ol2purview serve` running on the data folder (it records it in `<data>/serve.json`); else Azurite on its default
ports (UseDevelopmentStorage=true).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from azure.storage.queue import ExponentialRetry

from olparser.adapters.delivery.queues import (
    AzureQueueService,
    QueueService,
    SqliteQueueService,
    check_queue_name,
    embedded_queue_path,
    poison_queue_name,
)
from olparser.settings import Settings

from .catalog_options import add_target_arguments, data_dir
from .functions_host.state import RunningHost
from .requeue_messages import Selection, requeue

DEVELOPMENT_STORAGE = "UseDevelopmentStorage=true"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    settings = Settings.from_env()
    parser.add_argument(
        "--queue",
        default=settings.lineage_queue,
        help=f"the lineage queue; poison messages are read from '<queue>-poison' "
        f"(default: LINEAGE_QUEUE or {settings.lineage_queue})",
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--all", action="store_true", help="move every poison message")
    which.add_argument(
        "--id", nargs="+", metavar="ID", default=[], help="move these messages (poison queue message id or envelope id)"
    )
    which.add_argument(
        "--run-id", nargs="+", metavar="RUNID", default=[], help="move the messages of these OpenLineage runs"
    )
    parser.add_argument("--dry-run", action="store_true", help="only print what would be moved")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--connection",
        metavar="STR",
        help="Azure Storage connection string (default: AzureWebJobsStorage, else "
        f"{DEVELOPMENT_STORAGE}, i.e. Azurite on its default ports)",
    )
    where.add_argument(
        "--embedded",
        action="store_true",
        help="use the embedded SQLite queues in OL2PURVIEW_DATA_DIR instead of Azure Storage",
    )
    add_target_arguments(parser)  # --data: the data folder of the running `ol2purview serve`


def storage_choice(args: argparse.Namespace, settings: Settings) -> tuple[str, str]:
    """("embedded", data folder) or ("connection", connection string), and nothing is opened yet."""
    folder = data_dir(args) if args.data else settings.data_dir
    if args.embedded:
        return "embedded", str(folder)
    if args.connection or settings.storage_connection:
        return "connection", args.connection or settings.storage_connection or ""
    running = RunningHost.find(folder)
    if running is not None and running.storage_mode == "embedded":
        return "embedded", str(folder)
    if running is not None and running.storage_connection:
        return "connection", running.storage_connection
    return "connection", DEVELOPMENT_STORAGE


def queue_service(args: argparse.Namespace, settings: Settings) -> QueueService:
    kind, where = storage_choice(args, settings)
    if kind == "embedded":
        return SqliteQueueService(embedded_queue_path(Path(where)))
    # An operator waiting at a prompt: a few quick retries, then a clear error (the command is safe to run again).
    # Fractions of a second: the SDK annotates these as int but computes the backoff with floats.
    backoff: dict[str, Any] = {"initial_backoff": 0.5, "increment_base": 1.5, "random_jitter_range": 0.5}
    retry = ExponentialRetry(retry_total=2, **backoff)
    return AzureQueueService(where, retry_policy=retry)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    try:
        check_queue_name(args.queue)
        check_queue_name(poison_queue_name(args.queue))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    selection = Selection(everything=args.all, ids=frozenset(args.id), run_ids=frozenset(args.run_id))
    try:
        service = queue_service(args, settings)
        poison = service.queue(poison_queue_name(args.queue))
        target = service.queue(args.queue)
        moved = requeue(poison, target, selection, dry_run=args.dry_run)
    except Exception as exc:  # unreachable storage, bad connection string: say so without a stack trace
        print(
            f"error: could not requeue from {poison_queue_name(args.queue)}: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}",
            file=sys.stderr,
        )
        if storage_choice(args, settings) == ("connection", DEVELOPMENT_STORAGE):
            print(
                "no `ol2purview serve` is running on the data folder and AzureWebJobsStorage is not set, so this "
                "tried Azurite on its default ports: start `ol2purview serve` (or pass --data DIR, --connection, "
                "--embedded)",
                file=sys.stderr,
            )
        return 1
    verb = "would move" if args.dry_run else "moved"
    for item in moved:
        print(
            f"{verb} {item.poison_message_id} envelope={item.envelope_id or '-'} runId={item.run_id or '-'} "
            f"eventType={item.event_type or '-'}"
        )
    print(f"{verb} {len(moved)} message(s) from {poison_queue_name(args.queue)} to {args.queue}")
    return 0
