"""What the run history costs: writing a run (calls to Azure Table storage and ms, on Azurite and in SQLite) and
window queries over 100,000 recorded runs, the same runs and queries on both stores side by side (ms, the reads of
the store the walk made, and the requests to Table storage), each with its floor timed in the same run: as many
one-row key lookups of the same store (a primary-key SELECT of the same SQLite file, a point read of the same Azurite)
as the query made reads or requests. Medians. Run as `.venv/bin/python -m bench history` (`--docs` writes the rows
into docs/explanation/benchmarks.md; BENCH_HISTORY_RUNS=2000 for a quick look).

SQLite is loaded run by run (`record`); Table storage is seeded with `TableHistoryStore.seed`, the store's own rows
written in entity-group transactions of 100 rows of one partition on 2 threads (`record` costs about 12 requests a
run: hours for 100,000 runs on Azurite). Azurite answers a query by filtering every entity of the table (LokiJS), so
its query requests slow as the table grows, where Table storage reads a key range of one partition.

The write figures are for the runner's whole use of the history per run: `record` (what it wrote), then the process
summaries looked at twice (for the fingerprint, then again under the process lock, each time as the record left
them), then `refreshed` once the catalog shows the counts, as olparser/pipeline/run_writer.py does.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from bench import report
from olparser.history import Window, lineage_in_window
from olparser.history.model import DatasetRef, ProcessRun, RunFacts, RunRecord

RUNS = int(os.environ.get("BENCH_HISTORY_RUNS", "100000"))
WRITES = 60
# each: d0 -> p0 -> d1 -> p1 -> d2 -> p2 -> d3 -> p3 -> d4, every process reading a shared input too; one run of each
# process a day (RUNS // (CHAINS * 4) days); BENCH_HISTORY_CHAINS=25 keeps the hub over the bounds with 10x fewer runs
CHAINS = int(os.environ.get("BENCH_HISTORY_CHAINS", "250"))
DAY = 86400.0
T0 = 1_772_409_600.0  # 2026-03-02
LAKE = "https://contosolake.dfs.core.windows.net"
ADLS = "azure_datalake_gen2_path"
SHARED = DatasetRef(f"{LAKE}/reference/calendar", ADLS)


def chain_record(
    chain: int,
    step: int,
    day: int,
    *,
    run_id: str | None = None,
    start: float | None = None,
    end: float | None = -1.0,
    status: str = "COMPLETE",
) -> RunRecord:
    """Run `day` of process `step` of chain `chain`: reads its chain's dataset `step` and the shared calendar."""
    begin = start if start is not None else T0 + day * DAY + chain * 7 + step * 600
    finish = begin + 300 if end == -1.0 else end
    source, target = (DatasetRef(f"{LAKE}/chain{chain}/d{n}", ADLS) for n in (step, step + 1))
    process = (
        f"databricks://adb-1.2.azuredatabricks.net/notebooks/etl/chain{chain}/processes/step{step}/"
        f"{target.qualified_name}"
    )
    facts = RunFacts(
        run_id or str(uuid.UUID(int=(chain << 40) + (step << 32) + day)),
        f"ns/chain{chain}.step{step}",
        f"databricks://adb-1.2.azuredatabricks.net/notebooks/etl/chain{chain}",
        "databricks_notebook",
        begin,
        finish,
        status,
        {"user": "etl@contoso.com", "clusterId": "0101-123456-abcdefgh"},
    )
    return RunRecord(
        facts, (ProcessRun(process, "databricks_process", f"step{step}", tuple(sorted((source, SHARED))), (target,)),)
    )


class CountingHook:
    """Counts the HTTP requests a Table client makes (azure-core's raw_request_hook)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: Any) -> None:
        self.calls += 1


def write_costs(store: Any, calls: Callable[[], int]) -> dict[str, tuple[float, float]]:
    """Median (calls, ms) per run for: a new run, the same run again (a replay), and a run whose start and status
    became known later (INCOMPLETE, then COMPLETE with its START)."""
    results: dict[str, list[tuple[int, float]]] = {"new run": [], "replay": [], "replaced": []}

    def measure(kind: str, record: RunRecord) -> None:
        before, started = calls(), time.perf_counter()
        changed = store.record(record, now=T0 + 10 * DAY)
        names = [p.qualified_name for p in record.processes]
        store.process_summaries(names, recorded=record.run_id)  # the first look, for the fingerprint
        store.process_summaries(names, recorded=record.run_id)  # the look under the process lock
        store.refreshed(record.run_id, changed)  # after the catalog write: its processes show their counts
        results[kind].append((calls() - before, (time.perf_counter() - started) * 1e3))

    for n in range(WRITES):
        record = chain_record(n % CHAINS, n % 4, n // CHAINS)
        measure("new run", record)
        measure("replay", record)
        incomplete = chain_record(
            n % CHAINS, n % 4, 50 + n // CHAINS, run_id=f"late-{n}", end=None, status="INCOMPLETE"
        )
        store.record(incomplete, now=T0 + 60 * DAY)
        complete = chain_record(
            n % CHAINS, n % 4, 50 + n // CHAINS, run_id=f"late-{n}", start=incomplete.facts.start - 30
        )
        measure("replaced", complete)
    return {
        kind: (statistics.median(c for c, _ in samples), statistics.median(ms for _, ms in samples))
        for kind, samples in results.items()
    }


def bench_writes() -> None:
    from azure.data.tables import TableServiceClient

    from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore
    from olparser.adapters.history_stores.table_store import TableHistoryStore
    from tools.azurite import start_azurite

    with tempfile.TemporaryDirectory() as folder:
        with SqliteHistoryStore(Path(folder) / "history.sqlite3", retention_days=36500) as sqlite_store:
            costs = write_costs(sqlite_store, lambda: 0)
        for kind, (_, ms) in costs.items():
            print(f"history write, SQLite, {kind} (2 reads, 1 write, 1 process): median {ms:.2f} ms")
        with start_azurite(Path(folder) / "azurite") as azurite:
            hook = CountingHook()
            service = TableServiceClient.from_connection_string(azurite.connection_string, raw_request_hook=hook)
            table = service.create_table_if_not_exists(f"bench{uuid.uuid4().hex[:12]}")
            with TableHistoryStore(table, retention_days=36500) as table_store:
                costs = write_costs(table_store, lambda: hook.calls)
        for kind, (calls, ms) in costs.items():
            print(f"history write, Table storage (Azurite), {kind}: median {calls:.0f} calls, {ms:.1f} ms")


def window_cases(last: float) -> list[tuple[str, str, Window, str, int, int]]:
    """(title, root, window, direction, depth, target requests on Table storage)."""
    chain = min(17, CHAINS - 1)
    return [
        ("upstream, depth 3, 30 days", f"{LAKE}/chain{chain}/d4", Window(last - 30 * DAY, last), "upstream", 3, 50),
        (
            "both, depth 3, 7 days, from the middle",
            f"{LAKE}/chain{chain}/d2",
            Window(last - 7 * DAY, last),
            "both",
            3,
            50,
        ),
        (
            "worst hub: downstream of the input every process reads, depth 1, 1 day",
            SHARED.qualified_name,
            Window(last - DAY, last),
            "downstream",
            1,
            200,
        ),
        (
            "worst hub: downstream of the input every process reads, depth 1, 30 days",
            SHARED.qualified_name,
            Window(last - 30 * DAY, last),
            "downstream",
            1,
            200,
        ),
    ]


class CountingReader:
    """A history store whose reads the walk makes are counted (SQLite has no requests to count)."""

    READS = ("dataset_accesses", "process_runs", "newest_access", "run")

    def __init__(self, store: Any) -> None:
        self.store, self.reads = store, 0

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.store, name)
        if name not in self.READS:
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.reads += 1
            return found(*args, **kwargs)

        return counted


def query_costs(
    store: Any, calls: Callable[[], int], root: str, window: Window, direction: str, depth: int, repeats: int
) -> tuple[float, int, dict]:
    """Median ms of `repeats` queries, the most requests one made (the first reads the longest run recorded, then
    cached for a minute), and the answer."""
    samples, answer, requests = [], {}, 0
    for _ in range(repeats):
        before, began = calls(), time.perf_counter()
        answer = lineage_in_window(store, root, window, direction, depth)
        samples.append((time.perf_counter() - began) * 1e3)
        requests = max(requests, calls() - before)
    return statistics.median(samples), requests, answer


def floor_ms(lookup: Callable[[], object], count: int, repeats: int) -> float:
    """Median ms of `count` one-row key lookups (the plainest reads of the same store), `repeats` rounds."""
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        for _ in range(max(count, 1)):
            lookup()
        samples.append((time.perf_counter() - began) * 1e3)
    return statistics.median(samples)


def bench_window() -> None:
    """The same RUNS recorded runs in SQLite and in Table storage (Azurite), the same window queries on both, each
    with its floor: as many one-row key lookups of the same store as the query made reads (SQLite) or requests
    (Table storage), timed in the same run."""
    from azure.data.tables import TableServiceClient

    from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore
    from olparser.adapters.history_stores.table_store import TableHistoryStore
    from tools.azurite import start_azurite

    days = max(RUNS // (CHAINS * 4), 1)
    last = T0 + days * DAY
    records = [chain_record(chain, step, day) for day in range(days) for chain in range(CHAINS) for step in range(4)]
    # Azurite in memory: its disk mode saves the whole database every 5 s, which stalls it for seconds at this size
    with tempfile.TemporaryDirectory() as folder, start_azurite(Path(folder) / "azurite", in_memory=True) as azurite:
        sqlite_store = SqliteHistoryStore(Path(folder) / "history.sqlite3", retention_days=36500)
        started = time.perf_counter()
        for record in records:
            sqlite_store.record(record, now=last)
        loaded = time.perf_counter() - started
        print(
            f"SQLite: recorded {sqlite_store.count_runs():,} runs ({CHAINS * 4} processes x {days} days) in "
            f"{loaded:.0f} s ({loaded / len(records) * 1e3:.2f} ms a run), "
            f"{(Path(folder) / 'history.sqlite3').stat().st_size / 1e6:.0f} MB",
            flush=True,
        )
        hook = CountingHook()
        service = TableServiceClient.from_connection_string(azurite.connection_string, raw_request_hook=hook)
        table_store = TableHistoryStore(
            service.create_table_if_not_exists(f"bench{uuid.uuid4().hex[:12]}"), retention_days=36500
        )
        started = time.perf_counter()
        transactions = table_store.seed(records)  # the store's own rows, 100 to a transaction, on 2 threads
        seeded = time.perf_counter() - started
        print(
            f"Table storage (Azurite): seeded {len(records):,} runs in {seeded:.0f} s ({transactions:,} "
            f"entity-group transactions, {hook.calls:,} requests)",
            flush=True,
        )
        one_run = records[-1].run_id
        keys = table_store._run_keys(one_run)

        def sqlite_lookup() -> object:
            query = "SELECT digest FROM history_runs WHERE run_id = ?"
            return sqlite_store._connection().execute(query, (one_run,)).fetchone()

        def table_lookup() -> object:
            return table_store.table.get_entity(keys["PartitionKey"], keys["RowKey"], select=["digest"])

        for title, root, window, direction, depth, target in window_cases(last):
            counting = CountingReader(sqlite_store)
            sqlite_ms, reads, answer = query_costs(
                counting, lambda counting=counting: counting.reads, root, window, direction, depth, 15
            )
            table_ms, requests, table_answer = query_costs(
                table_store, lambda: hook.calls, root, window, direction, depth, 3
            )
            sqlite_floor = floor_ms(sqlite_lookup, reads, 15)
            table_floor = floor_ms(table_lookup, requests, 3)
            runs = {r["runId"] for p in table_answer["processes"] for r in p["runs"]}
            same = (
                "the same answer as SQLite"
                if table_answer == answer
                else "ANSWERS DIFFER"
                if not table_answer["truncated"]
                else f"cut short: {table_answer['truncated']}"
            )
            cut = f", cut short: {answer['truncated']}" if answer["truncated"] else ""
            print(
                f"window query over {len(records):,} runs, {title}: SQLite median {sqlite_ms:.1f} ms in {reads} "
                f"reads{cut} (floor {sqlite_floor:.2f} ms); Table storage median {table_ms:.1f} ms in {requests} "
                f"requests, target <= {target} (floor {table_floor:.1f} ms; {len(table_answer['datasets'])} "
                f"datasets, {len(table_answer['processes'])} processes, {len(runs)} runs; {same})",
                flush=True,
            )
            report.record(
                __name__,
                f"window query over {len(records):,} recorded runs, {title}, Table storage (Azurite)",
                table_ms,
                "ms",
                table_floor,
                f"{requests} one-row point reads of the same Azurite",
                detail=f"{requests} requests (target ≤ {target}), "
                + ("the same answer as SQLite" if table_answer == answer else "cut short")
                + f"; {len(records):,} runs seeded in {seeded:.0f} s",
            )
            report.record(
                __name__,
                f"window query over {len(records):,} recorded runs, {title}, SQLite",
                sqlite_ms,
                "ms",
                sqlite_floor,
                f"{reads} one-row key lookups of the same file",
                detail=f"{reads} reads" + (", cut short" if answer["truncated"] else ""),
            )
        sqlite_store.close()
        table_store.close()


def main() -> None:
    bench_writes()
    bench_window()


if __name__ == "__main__":
    main()
