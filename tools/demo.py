"""`ol2purview demo`: load the demo's sample data (tools/samples/demo.py) into the `ol2purview serve` running on the
data folder, so that every feature has something to show, and print what to open and try next.

It writes a lake folder under `<data>/demo/lake` and registers it as Purview's scanner would (`ol2purview catalog
scan`), sends a week of notebook runs dated relative to now through the serve's endpoint (`ol2purview replay`, the
openlineage-python client), waits until the serve has processed them, and writes Unity Catalog system-table rows
(JSON lines) under `<data>/demo/system-tables` for `ol2purview spark system-lineage`. Running it again sends the same
runs (the same run ids) at new times: nothing is duplicated. Exit codes: 0 loaded, 1 a step failed, 2 no serve.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import requests

from .catalog_options import add_target_arguments, data_dir
from .exit_codes import FAILED, OK, USAGE
from .functions_host.state import RunningHost, kept_function_key
from .samples import demo
from .samples.delivery import write_jsonl
from .samples.system_tables import HOST, WORKSPACE, write_json_lines

STATUS_PATH = "/admin/ol2purview/status"
PROCESSED_WITHIN = 120.0  # seconds the serve gets to process the demo's events before the demo says so and ends


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)


def write_lake(folder: Path) -> Path:
    for relative, content in demo.lake_files().items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return folder


def _processed(running: RunningHost, data: Path) -> bool:
    """Whether the serve's queue is empty and nothing is in flight (asked with its kept master key)."""
    key = kept_function_key(running.url, data, which="masterKey")
    try:
        status = requests.get(
            running.url.rstrip("/") + STATUS_PATH, headers={"x-functions-key": key or ""}, timeout=10
        ).json()
    except (requests.RequestException, ValueError):
        return False
    waiting = sum(queue.get("approximateCount", 0) for queue in (status.get("queues") or {}).values())
    return waiting == 0 and not (status.get("worker") or {}).get("inFlight")


def run(args: argparse.Namespace) -> int:
    from .cli import main as ol2purview

    data = data_dir(args)
    running = RunningHost.find(data)
    if running is None:
        print(
            f"ol2purview demo: no `ol2purview serve` is running on {data}: start it first (`make run` in another "
            "terminal), or pass --data DIR of the running serve",
            file=sys.stderr,
        )
        return USAGE
    folder = data / "demo"
    now = datetime.now(timezone.utc)
    lake = write_lake(folder / "lake" / demo.CONTAINER)
    print(f"== a lake folder, scanned as Purview's ADLS scanner would: {lake}", flush=True)
    if (
        ol2purview(
            [
                "catalog",
                "scan",
                str(lake),
                "--account",
                demo.ACCOUNT,
                "--container",
                demo.CONTAINER,
                "--data",
                str(data),
            ]
        )
        != OK
    ):
        return FAILED
    (folder / "events").mkdir(parents=True, exist_ok=True)
    events = write_jsonl(folder / "events" / "runs.jsonl", demo.demo_events(now))
    print(f"== a week of notebook runs, sent to {running.url}: {events}", flush=True)
    if ol2purview(["replay", str(events), "--data", str(data)]) != OK:
        return FAILED
    table_rows, column_rows = demo.system_table_rows(now)
    system = folder / "system-tables"
    write_json_lines(table_rows, system / "table_lineage")
    write_json_lines(column_rows, system / "column_lineage")
    print(
        f"== Unity Catalog system-table rows: {system} ({len(table_rows)} table lineage rows, {len(column_rows)} "
        "column lineage rows)",
        flush=True,
    )
    deadline = time.monotonic() + PROCESSED_WITHIN
    while not _processed(running, data):
        if time.monotonic() > deadline:
            print(
                f"ol2purview demo: the serve has not processed the runs within {PROCESSED_WITHIN:.0f} s: see "
                "`ol2purview status`",
                file=sys.stderr,
            )
            return FAILED
        time.sleep(0.2)
    print(next_steps(running, data, system))
    return OK


def next_steps(running: RunningHost, data: Path, system: Path) -> str:
    page = running.catalog_page or "the catalog page the serve printed"
    sales = (
        f"https://{demo.ACCOUNT}.dfs.core.windows.net/{demo.CONTAINER}/sales/Year={{Year}}/Month={{Month}}/"
        "{SparkPartitions}"
    )
    data_flag = "" if data.resolve() == Path(".data").resolve() else f" --data {data}"
    return "\n".join(
        [
            "",
            f"demo loaded. Open {page} and search `sales`: the resource set the runs write, linked to the scanned",
            "assets they read. Its lineage, then the Time window bar: last run, 7 days (seven runs, one failed; the run",
            "started 20 minutes ago has not ended: it is written as INCOMPLETE an hour after its last event).",
            "",
            "Try next (after `. .venv/bin/activate`):",
            f"  ol2purview history '{sales}' --since -7d{data_flag}",
            f"  ol2purview columns '{sales}' amount --direction up{data_flag}",
            f"  qn-tester --namespace {demo.SFTP} --name /exports/orders.csv --explain   # the placeholder: no rule yet",
            f"  ol2purview spark remap --report {data / 'demo' / 'remap'}{data_flag}   # after adding a rule (needs Java)",
            f"  ol2purview spark system-lineage --table-lineage {system / 'table_lineage'} --column-lineage "
            f"{system / 'column_lineage'} --workspace {WORKSPACE}={HOST} --report {data / 'demo' / 'system-lineage'}"
            f"{data_flag}   # needs Java",
            f"  ol2purview status{data_flag}",
        ]
    )
