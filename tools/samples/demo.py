"""The demo's data, built by the project's own sample builders, dated relative to now: what `ol2purview demo` loads
into a running `ol2purview serve` so that every feature has something to show (no file from outside the repository).

- **A lake folder** (`lake_files`): the container `silver` of the storage account `contosolake` as Spark leaves it:
  a Spark output folder (`orders/part-...` with `_SUCCESS`), a partitioned one (`sales/Year=.../Month=.../part-...`),
  another input (`customers`) and a single file. `ol2purview catalog scan` registers it as Purview's ADLS scanner
  would: resource sets and a path.
- **A week of notebook runs** (`demo_events`): the notebook `/Repos/demo/daily_sales` reads `orders` and
  `customers` and writes `sales`, once a day for a week and three hours ago; the run four days ago failed, and one
  started twenty minutes ago has not ended. The notebook `/Repos/demo/landing` copies `/exports/orders.csv` from an
  SFTP server into `orders`: no mapping rule knows `sftp://` (a placeholder, the case for a new rule and
  `ol2purview spark remap`).
- **Unity Catalog system-table rows** (`system_table_rows`): a notebook that builds `main.sales.daily_revenue` from
  `main.sales.orders` on three days, with column lineage, older than `spark system-lineage`'s default lag.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from . import databricks as runs
from .system_tables import row

ACCOUNT, CONTAINER = "contosolake", "silver"
LAKE = f"abfss://{CONTAINER}@{ACCOUNT}.dfs.core.windows.net"  # how Spark names the container (ADLS Gen2)
SFTP = "sftp://files.contoso.com"  # a namespace the shipped rules do not map
DEMO_NAMESPACE = uuid.UUID("0d3e7a52-5b8c-4f0e-9d61-2b7c8e4f1a90")  # run ids: uuid5 of the run's name in this space
DAILY_SALES, LANDING = "/Repos/demo/daily_sales", "/Repos/demo/landing"
UC_NOTEBOOK = "1234567890"  # the notebook id of the system-table rows
_PART = "part-{n:05d}-5f2a9c1e-8b7d-4e3a-9c6f-1d2e3f4a5b6c-c000.snappy.parquet"  # Spark's data file names


def lake_files() -> dict[str, bytes]:
    """Path (relative to the container's root) -> contents, as Spark jobs leave them."""
    files = {f"orders/{_PART.format(n=n)}": b"PAR1" * (64 + n) for n in range(3)}
    files["orders/_SUCCESS"] = b""
    files.update({f"customers/{_PART.format(n=n)}": b"PAR1" * 32 for n in range(2)})
    for month in ("10", "11"):
        files.update({f"sales/Year=2026/Month={month}/{_PART.format(n=n)}": b"PAR1" * 48 for n in range(2)})
    files["readme.md"] = b"# silver\nCleaned data of the demo.\n"
    return files


def _run_id(name: str) -> str:
    return str(uuid.uuid5(DEMO_NAMESPACE, name))


def _daily_sales(started: datetime, name: str) -> runs.NotebookRun:
    return runs.NotebookRun(
        run_id=_run_id(name),
        started=started,
        statement="execute_insert_into_hadoop_fs_relation_command.sales",
        inputs=(
            runs.Dataset(LAKE, "/orders", ("id", "customer", "amount")),
            runs.Dataset(LAKE, "/customers", ("customer", "region")),
        ),
        output=runs.Dataset(LAKE, "/sales", ("id", "region", "amount")),
        notebook=DAILY_SALES,
        column_lineage=(
            runs.ColumnEdge("id", 0, "id"),
            runs.ColumnEdge("amount", 0, "amount"),
            runs.ColumnEdge("region", 1, "region"),
        ),
        mounts=None,
        user="ana@contoso.com",
        offsets=(0.0, 5.0, 95.0),
    )


def demo_events(now: datetime) -> list[dict[str, Any]]:
    """Every event of the demo's runs, in emission order per run, dated relative to `now`."""
    events: list[dict[str, Any]] = []
    for days in range(6, 0, -1):
        run_events = runs.events(_daily_sales(now - timedelta(days=days, hours=2), f"daily_sales-{days}d"))
        if days == 4:  # that day the notebook failed
            run_events[-1]["eventType"] = "FAIL"
        events += run_events
    events += runs.events(_daily_sales(now - timedelta(hours=3), "daily_sales-3h"))
    events += runs.events(_daily_sales(now - timedelta(minutes=20), "daily_sales-running"))[:2]  # no end yet
    landing = runs.NotebookRun(
        run_id=_run_id("landing-1d"),
        started=now - timedelta(days=1, hours=3),
        statement="execute_insert_into_hadoop_fs_relation_command.orders",
        inputs=(runs.Dataset(SFTP, "/exports/orders.csv", ("id", "customer", "amount")),),
        output=runs.Dataset(LAKE, "/orders", ("id", "customer", "amount")),
        notebook=LANDING,
        mounts=None,
        user="ana@contoso.com",
        column_lineage=tuple(runs.ColumnEdge(c, 0, c) for c in ("id", "customer", "amount")),
    )
    return events + runs.events(landing)


def system_table_rows(now: datetime) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(table_lineage rows, column_lineage rows): a notebook run on each of three days, a day or more ago."""
    table, column = [], []
    orders, revenue = f"{LAKE}/uc/orders", f"{LAKE}/uc/daily_revenue"
    for days in (3, 2, 1):
        time = (now - timedelta(days=days)).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        entity = ("NOTEBOOK", UC_NOTEBOOK, f"demo-run-{days}")
        common: dict[str, Any] = {
            "entity": entity,
            "notebook": UC_NOTEBOOK,
            "source": "main.sales.orders",
            "source_path": orders,
            "target": "main.sales.daily_revenue",
            "target_path": revenue,
        }
        table.append(row(time, record=f"demo-t{days}", **common))
        column += [
            row(time, record=f"demo-c{days}-{source}", columns=(source, target), **common)
            for source, target in (("amount", "revenue"), ("order_date", "day"))
        ]
    return table, column
