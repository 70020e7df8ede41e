"""What a window query costs on Table storage, where `GET /api/ol2purview/lineage` runs in Azure: requests counted on
Azurite with azure-core's raw_request_hook. A query reads key ranges of the partitions it walks (a dataset's accesses,
a process's runs), so its cost follows the graph in the window, not how many runs the history holds; a dataset that
hundreds of processes read is cut short (`truncated`) by the store's bound on reads (issue #34: <= 50 requests at
depth 3 over 30 days, <= 200 for the worst hub at depth 1; bench/history.py measures both at 100,000 runs)."""
from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from olparser.history import Window, lineage_in_window
from olparser.adapters.history_stores.table_store import TableHistoryStore
from tests.unit.history.conftest import DAY, T0, record

pytestmark = pytest.mark.azurite

DAYS = 35
READERS = 120  # processes that read the hub on the last day


class Counted:
    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, request: Any) -> None:
        self.requests += 1


@pytest.fixture
def counted_history(azurite):
    from azure.data.tables import TableServiceClient

    counted = Counted()
    service = TableServiceClient.from_connection_string(azurite.connection_string, raw_request_hook=counted)
    store = TableHistoryStore(service.create_table_if_not_exists(f"hist{uuid.uuid4().hex[:12]}"), retention_days=3650)
    yield store, counted
    store.close()


def chain_runs() -> list:
    """A chain raw -> p0 -> d1 -> p1 -> d2 -> p2 -> d3 -> p3 -> gold, every process also reading the shared calendar,
    one run of each process a day for DAYS days; and READERS other processes reading the calendar on the last day."""
    steps = ["raw/orders", "chain/d1", "chain/d2", "chain/d3", "gold/orders"]
    runs = [record(f"run-{day}-{step}", T0 + day * DAY + step * 600, T0 + day * DAY + step * 600 + 300,
                   inputs=(steps[step], "reference/calendar"), output=steps[step + 1], process=f"step{step}")
            for day in range(DAYS) for step in range(4)]
    last = T0 + (DAYS - 1) * DAY
    runs += [record(f"reader-{n}", last + n, last + n + 60, inputs=("reference/calendar",), output=f"marts/m{n}",
                    process=f"reader{n}") for n in range(READERS)]
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
