"""What the run history costs: writing a run (calls to Azure Table storage and ms, on Azurite and in SQLite) and
window queries over 100,000 recorded runs, the same runs and queries on both stores side by side (ms, and the
requests to Table storage). Medians. Run as `.venv/bin/python -m bench history` (BENCH_HISTORY_RUNS=2000 for a quick
look; loading 100,000 runs into Azurite takes a while).

The write figures are for the runner's whole use of the history per run: `record` (what it wrote), then the process
summaries read twice (for the fingerprint, then again under the process lock), as olparser/pipeline.py does.
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
CHAINS = 250  # each: d0 -> p0 -> d1 -> p1 -> d2 -> p2 -> d3 -> p3 -> d4, every process reading a shared input too
DAY = 86400.0
T0 = 1_772_409_600.0  # 2026-03-02
LAKE = "https://contosolake.dfs.core.windows.net"
ADLS = "azure_datalake_gen2_path"
SHARED = DatasetRef(f"{LAKE}/reference/calendar", ADLS)


def chain_record(chain: int, step: int, day: int, *, run_id: str | None = None, start: float | None = None,
                 end: float | None = -1.0, status: str = "COMPLETE") -> RunRecord:
    """Run `day` of process `step` of chain `chain`: reads its chain's dataset `step` and the shared calendar."""
    begin = start if start is not None else T0 + day * DAY + chain * 7 + step * 600
    finish = begin + 300 if end == -1.0 else end
    source, target = (DatasetRef(f"{LAKE}/chain{chain}/d{n}", ADLS) for n in (step, step + 1))
    process = f"databricks://adb-1.2.azuredatabricks.net/notebooks/etl/chain{chain}/processes/step{step}/" \
              f"{target.qualified_name}"
    facts = RunFacts(run_id or str(uuid.UUID(int=(chain << 40) + (step << 32) + day)), f"ns/chain{chain}.step{step}",
                     f"databricks://adb-1.2.azuredatabricks.net/notebooks/etl/chain{chain}", "databricks_notebook",
                     begin, finish, status, {"user": "etl@contoso.com", "clusterId": "0101-123456-abcdefgh"})
    return RunRecord(facts, (ProcessRun(process, "databricks_process", f"step{step}", tuple(sorted((source, SHARED))),
                                        (target,)),))


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
        store.record(record, now=T0 + 10 * DAY)
        names = [p.qualified_name for p in record.processes]
        store.process_summaries(names)
        store.process_summaries(names)
        results[kind].append((calls() - before, (time.perf_counter() - started) * 1e3))

    for n in range(WRITES):
        record = chain_record(n % CHAINS, n % 4, n // CHAINS)
        measure("new run", record)
        measure("replay", record)
        incomplete = chain_record(n % CHAINS, n % 4, 50 + n // CHAINS, run_id=f"late-{n}", end=None,
                                  status="INCOMPLETE")
        store.record(incomplete, now=T0 + 60 * DAY)
        complete = chain_record(n % CHAINS, n % 4, 50 + n // CHAINS, run_id=f"late-{n}",
                                start=incomplete.facts.start - 30)
        measure("replaced", complete)
    return {kind: (statistics.median(c for c, _ in samples), statistics.median(ms for _, ms in samples))
            for kind, samples in results.items()}


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


def window_cases(last: float) -> list[tuple[str, str, Window, str, int]]:
    return [("upstream, depth 3, 7 days", f"{LAKE}/chain17/d4", Window(last - 7 * DAY, last), "upstream", 3),
            ("upstream, depth 3, 30 days", f"{LAKE}/chain17/d4", Window(last - 30 * DAY, last), "upstream", 3),
            ("both, depth 3, 7 days, from the middle", f"{LAKE}/chain17/d2", Window(last - 7 * DAY, last), "both", 3),
            ("downstream of the shared input, depth 1, 1 day", SHARED.qualified_name, Window(last - DAY, last),
             "downstream", 1)]


def query_costs(store: Any, calls: Callable[[], int], root: str, window: Window, direction: str, depth: int,
                repeats: int) -> tuple[float, int, dict]:
    """Median ms of `repeats` queries, the requests of one (0 on SQLite), and the answer."""
    samples, answer, requests = [], {}, 0
    for _ in range(repeats):
        before, began = calls(), time.perf_counter()
        answer = lineage_in_window(store, root, window, direction, depth)
        samples.append((time.perf_counter() - began) * 1e3)
        requests = calls() - before
    return statistics.median(samples), requests, answer


def bench_window() -> None:
    """The same RUNS recorded runs in SQLite and in Table storage (Azurite), the same window queries on both."""
    from concurrent.futures import ThreadPoolExecutor

    from azure.data.tables import TableServiceClient

    from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore
    from olparser.adapters.history_stores.table_store import TableHistoryStore
    from tools.azurite import start_azurite

    days = max(RUNS // (CHAINS * 4), 1)
    last = T0 + days * DAY
    records = [chain_record(chain, step, day) for day in range(days) for chain in range(CHAINS) for step in range(4)]
    with tempfile.TemporaryDirectory() as folder, start_azurite(Path(folder) / "azurite") as azurite:
        sqlite_store = SqliteHistoryStore(Path(folder) / "history.sqlite3", retention_days=36500)
        started = time.perf_counter()
        for record in records:
            sqlite_store.record(record, now=last)
        loaded = time.perf_counter() - started
        print(f"SQLite: recorded {sqlite_store.count_runs():,} runs ({CHAINS * 4} processes x {days} days) in "
              f"{loaded:.0f} s ({loaded / len(records) * 1e3:.2f} ms a run), "
              f"{(Path(folder) / 'history.sqlite3').stat().st_size / 1e6:.0f} MB", flush=True)
        hook = CountingHook()
        service = TableServiceClient.from_connection_string(azurite.connection_string, raw_request_hook=hook)
        table_store = TableHistoryStore(service.create_table_if_not_exists(f"bench{uuid.uuid4().hex[:12]}"),
                                        retention_days=36500)
        started = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:  # as scaled-out workers record them
            list(pool.map(lambda record: table_store.record(record, now=last), records))
        loaded = time.perf_counter() - started
        print(f"Table storage (Azurite): recorded {len(records):,} runs in {loaded:.0f} s, {hook.calls:,} requests",
              flush=True)
        for title, root, window, direction, depth in window_cases(last):
            sqlite_ms, _, answer = query_costs(sqlite_store, lambda: 0, root, window, direction, depth, 15)
            table_ms, requests, table_answer = query_costs(table_store, lambda: hook.calls, root, window, direction,
                                                           depth, 5)
            runs = {r["runId"] for p in answer["processes"] for r in p["runs"]}
            same = ("same answer" if table_answer == answer else "ANSWERS DIFFER" if not table_answer["truncated"]
                    else f"Table storage's cut short: {table_answer['truncated']}")
            cut = f", cut short: {answer['truncated']}" if answer["truncated"] else ""
            print(f"window query over {len(records):,} runs, {title}: SQLite median {sqlite_ms:.1f} ms, Table storage "
                  f"median {table_ms:.1f} ms in {requests} requests ({len(answer['datasets'])} datasets, "
                  f"{len(answer['processes'])} processes, {len(runs)} runs{cut}; {same})", flush=True)
            report.record(__name__, f"window query over {len(records):,} recorded runs, {title}, Table storage "
                          "(Azurite)", table_ms, "ms", sqlite_ms, "the same query on SQLite",
                          detail=f"{requests} requests{', cut short' if table_answer['truncated'] else ''}")
        sqlite_store.close()
        table_store.close()


def main() -> None:
    bench_writes()
    bench_window()


if __name__ == "__main__":
    main()
