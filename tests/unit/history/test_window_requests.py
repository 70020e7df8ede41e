"""What a window query costs on Table storage, where `GET /api/ol2purview/lineage` runs in Azure: requests counted on
Azurite with azure-core's raw_request_hook. A query reads key ranges of the partitions it walks (a dataset's accesses,
a process's runs), so its cost follows the graph in the window, not how many runs the history holds; a dataset that
hundreds of processes read is cut short (`truncated`) by the store's bound on reads (issue #34: <= 50 requests at
depth 3 over 30 days, <= 200 for the worst hub at depth 1; bench/history.py measures both at 100,000 runs)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.history import SHARED, chain_record
from olparser.adapters.history_stores.table_store import TableHistoryStore
from olparser.history import Window, lineage_in_window
from olparser.history.model import ProcessRun
from tests.support.history_records import DAY, LAKE, T0, counted_table, dataset, record
from tests.support.table_requests import RequestCount

pytestmark = pytest.mark.azurite

DAYS = 35
READERS = 120  # processes that read the hub on the last day


@pytest.fixture
def counted_history(azurite):
    table, counted = counted_table(azurite.connection_string)
    store = TableHistoryStore(table, retention_days=3650)
    yield store, counted
    store.close()


def chain_runs() -> list:
    """A chain raw -> p0 -> d1 -> p1 -> d2 -> p2 -> d3 -> p3 -> gold, every process also reading the shared calendar,
    one run of each process a day for DAYS days; and READERS other processes reading the calendar on the last day."""
    steps = ["raw/orders", "chain/d1", "chain/d2", "chain/d3", "gold/orders"]
    runs = [
        record(
            f"run-{day}-{step}",
            T0 + day * DAY + step * 600,
            T0 + day * DAY + step * 600 + 300,
            inputs=(steps[step], "reference/calendar"),
            output=steps[step + 1],
            process=f"step{step}",
        )
        for day in range(DAYS)
        for step in range(4)
    ]
    last = T0 + (DAYS - 1) * DAY
    runs += [
        record(
            f"reader-{n}",
            last + n,
            last + n + 60,
            inputs=("reference/calendar",),
            output=f"marts/m{n}",
            process=f"reader{n}",
        )
        for n in range(READERS)
    ]
    return runs


def test_window_queries_cost_what_their_graph_costs_and_a_hub_is_cut_short(counted_history):
    store, counted = counted_history
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda r: store.record(r, now=T0 + DAYS * DAY), chain_runs()))
    until = T0 + DAYS * DAY
    gold = "https://contosolake.dfs.core.windows.net/gold/orders"
    calendar = "https://contosolake.dfs.core.windows.net/reference/calendar"

    counted.requests = 0
    answer = lineage_in_window(store, gold, Window(until - 30 * DAY, until), "upstream", 3)
    assert answer["truncated"] is None
    assert len({r["runId"] for p in answer["processes"] for r in p["runs"]}) == 3 * 30  # step3, step2, step1: 30 days
    # two key ranges per partition read (closed runs, open runs): the writes of gold, of d3 and of the calendar (one
    # hop up, nobody writes it), of d2; the runs of step3, step2, step1 (the longest run recorded: cached by `record`)
    assert counted.requests == 2 * 4 + 2 * 3

    counted.requests = 0
    hub = lineage_in_window(store, calendar, Window(until - DAY, until), "downstream", 1)
    assert hub["truncated"] == "more than 95 reads of the history"
    assert len(hub["processes"]) == 94  # each of them with its runs and what they wrote
    assert counted.requests == 2 + 94 * 2  # the calendar's reads, then two ranges per process read


def _table(azurite, counted: RequestCount | None = None):
    return counted_table(azurite.connection_string, counted=counted)[0]


def _rows(table) -> dict[tuple[str, str], dict]:
    return {(e["PartitionKey"], e["RowKey"]): dict(e) for e in table.list_entities()}


def test_seeding_writes_the_rows_record_writes(azurite):
    """`seed` (bench/history.py's way to hold 100,000 runs) writes what `record` writes, row for row: a closed run,
    an open (INCOMPLETE) one, a run of two processes with column lineage, two runs of one process."""
    column = ProcessRun(
        "databricks://h/notebooks/orders/processes/curated/totals",
        "databricks_process",
        "totals",
        (dataset("curated/orders"),),
        (dataset("curated/totals"),),
        column_mapping='[{"Source":"curated/orders","Sink":"curated/totals"}]',
    )
    records = [
        record("run-a", T0, T0 + 300),
        record("run-b", T0 + DAY, None, status="INCOMPLETE"),
        record(
            "run-c",
            T0 + 2 * DAY,
            T0 + 2 * DAY + 900,
            inputs=("raw/orders", "reference/calendar"),
            extra_processes=(column,),
        ),
        record("run-d", T0 + 3 * DAY, T0 + 3 * DAY + 60, process="other", output="curated/other"),
    ]
    recorded, seeded = _table(azurite), _table(azurite)
    with TableHistoryStore(recorded, retention_days=3650) as store:
        for r in records:
            store.record(r, now=T0 + 4 * DAY, keep_changes=False)
    with TableHistoryStore(seeded, retention_days=3650) as store:
        # partitions: 4 run-, 5 datasets, 3 processes, stats (each a transaction of its few rows)
        assert store.seed(records) == len({k[0] for k in _rows(recorded)}) - 1  # the stats row: written alone
        assert store.run("run-c") == records[2]
    assert _rows(seeded) == _rows(recorded)


def _seeded_chains(azurite, chains: int, days: int) -> tuple[TableHistoryStore, RequestCount, float]:
    """bench/history.py's history (chains of four steps, every step reading the shared calendar, one run of each a
    day), `chains` chains instead of 250 and `days` days instead of 100."""
    counted = RequestCount()
    store = TableHistoryStore(_table(azurite, counted), retention_days=3650)
    store.seed([chain_record(chain, step, day) for day in range(days) for chain in range(chains) for step in range(4)])
    return store, counted, T0 + days * DAY


@pytest.mark.parametrize(
    "title, root, chains, sizes, days, direction, depth, rows_per_read, requests, truncated",
    [
        # the writes of d4, d3, the calendar (nobody writes it), d2 and the runs of step3, step2, step1 (two key ranges
        # each); the longest run recorded is known from the seeding's own write (no read); 31 and 62 days of runs
        # (248 and 496)
        ("upstream, depth 3, 30 days", f"{LAKE}/chain1/d4", 2, (31, 62), 30, "upstream", 3, None, 2 * 7, None),
        # 24 chains: 96 processes read the calendar every day (bench/history.py: 1,000); its reads of the day, then the
        # runs of 94 of them; 2 and 4 days of runs (192 and 384)
        (
            "the hub, depth 1, 1 day",
            SHARED.qualified_name,
            24,
            (2, 4),
            1,
            "downstream",
            1,
            None,
            2 + 94 * 2,
            "more than 95 reads of the history",
        ),
        # a read holds at most one page per key range (here of 50 rows; bench/history.py: 1,000 of 30,000): the newest
        # 50 reads of the calendar, one page, then the runs of the 50 processes they name
        (
            "the hub, depth 1, 30 days, pages",
            SHARED.qualified_name,
            24,
            (2, 4),
            30,
            "downstream",
            1,
            50,
            2 + 50 * 2,
            "more than 50 rows of one dataset or process in the window (the newest kept)",
        ),
    ],
)
def test_a_window_query_costs_the_same_however_many_runs_lie_outside_its_window(
    azurite, title, root, chains, sizes, days, direction, depth, rows_per_read, requests, truncated
):
    """Issue #34: <= 50 requests at depth 3 over 30 days, <= 200 for the worst hub at depth 1, whatever the history
    holds: the same query over two sizes of the same history costs the same requests (bench/history.py measures
    them over 100,000 runs)."""
    counts = []
    for history_days in sizes:
        store, counted, last = _seeded_chains(azurite, chains, history_days)
        if rows_per_read is not None:
            store.max_rows_per_read = rows_per_read
        with store:
            counted.requests = 0
            answer = lineage_in_window(store, root, Window(last - days * DAY, last), direction, depth)
            counts.append(counted.requests)
            assert answer["truncated"] == truncated
            runs = {r["runId"] for p in answer["processes"] for r in p["runs"]}
            if truncated is None:
                assert len(runs) == 3 * 30  # step3, step2, step1: one a day
            else:
                assert len(answer["processes"]) == min(94, rows_per_read or 94)
    assert counts == [requests, requests]
