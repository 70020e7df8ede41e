"""A worker killed between its upload and its commit, while another worker committed the run's newer plan: the dead
worker's older upload landed last, so the catalog is older than the plan the store records. Its message comes back
(dequeue count 2) and must repair the catalog, although the run's fingerprint says "unchanged". Found by the chaos
test (tests/e2e/test_chaos.py, CHAOS_SEED=11 on SQLite: the CLL process kept lastRunRowsWritten None, in order 0)."""

from __future__ import annotations

import pytest

from tests.support import databricks_runs as dr
from tests.support.pipelines import NOTEBOOK, STATEMENT, _cll, make_pipeline
from tests.support.stores import same_store_elsewhere
from tests.unit.pipeline.fake_catalog import FakeCatalog

CLL_PROCESS = (
    "spark_process",
    "spark://testColumnLevelLineage/open_lineage_integration_create_table/processes/"
    "execute_create_hive_table_as_select_command.default_tbl1/file:/tmp/cll_test/default.tbl1",
)

ORDERS_PROCESS = (
    "databricks_process",
    f"{NOTEBOOK}/processes/{STATEMENT}/https://contosolake.dfs.core.windows.net/curated/orders",
)


class Killed(BaseException):
    """The worker process dies (SIGKILL): nothing after this point of its code runs."""


class DiesAtCommit:
    """The store as a worker sees it that is killed right before its commit."""

    def __init__(self, store) -> None:
        self._store = store

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def commit(self, *args, **kwargs):
        raise Killed()


def test_a_redelivered_event_repairs_an_upload_that_a_killed_worker_landed_after_the_newer_commit(
    shared_dir, store, engine
):
    catalog = FakeCatalog()
    start, running, running_with_statistics, complete = _cll(shared_dir, 5, 6, 7, 8)
    first = make_pipeline(store, engine, catalog)
    assert [first.process(e).status for e in (start, running)] == ["waiting", "waiting"]

    dying = make_pipeline(DiesAtCommit(same_store_elsewhere(store)), engine, catalog)
    other = make_pipeline(same_store_elsewhere(store), engine, catalog)
    # the dying worker uploads the COMPLETE's plan (no output statistics yet); inside its upload the other worker
    # merges the RUNNING that carries them, uploads and commits; the dying worker's upload lands after, then it dies
    catalog.during_upload = lambda: other.process(running_with_statistics)
    with pytest.raises(Killed):
        dying.process(complete)
    assert catalog.entities[CLL_PROCESS]["attributes"]["lastRunRowsWritten"] is None  # older than the store says

    replacement = make_pipeline(same_store_elsewhere(store), engine, catalog)
    assert replacement.process(complete).status == "unchanged"  # a first delivery trusts the fingerprint
    assert catalog.entities[CLL_PROCESS]["attributes"]["lastRunRowsWritten"] is None
    assert replacement.process(complete, redelivered=True).status == "written"  # the killed worker's message again
    assert (
        catalog.entities[CLL_PROCESS]["attributes"]["lastRunRowsWritten"],
        catalog.entities[CLL_PROCESS]["attributes"]["lastRunBytesWritten"],
    ) == (0, 0)


def test_a_redelivered_older_run_gives_back_the_process_its_killed_worker_uploaded_over_a_newer_run(store, engine):
    catalog = FakeCatalog()
    first = make_pipeline(store, engine, catalog)
    for event in dr.events(dr.orders_run(1)):
        first.process(event)
    older = dr.events(dr.orders_run(2, dr.T0.replace(hour=9), inputs=(dr.RAW_ORDERS, dr.KAFKA_PAYMENTS)))
    for event in older[:2]:
        first.process(event)
    dying = make_pipeline(DiesAtCommit(same_store_elsewhere(store)), engine, catalog)
    other = make_pipeline(same_store_elsewhere(store), engine, catalog)
    # the dying worker takes run 2 (older) for the process's newest writer; inside its upload the other worker writes
    # run 3 (newer) whole; the dying worker's upload lands after, then it dies before its commit
    newer = dr.events(dr.orders_run(3, dr.T0.replace(hour=10), inputs=(dr.RAW_ORDERS,)))
    catalog.during_upload = lambda: [other.process(event) for event in newer]
    with pytest.raises(Killed):
        dying.process(older[2])
    assert catalog.entities[ORDERS_PROCESS]["attributes"]["lastRunId"] == dr.run_id(2)  # over run 3's

    replacement = make_pipeline(same_store_elsewhere(store), engine, catalog)
    outcome = replacement.process(older[2], redelivered=True)  # the killed worker's message again
    assert (outcome.status, outcome.superseded) == ("superseded", 1)  # run 3 is newer: run 2 does not upload it
    assert catalog.entities[ORDERS_PROCESS]["attributes"]["lastRunId"] == dr.run_id(3)  # written again from run 3
    assert sorted(q for _, q in catalog.entities[ORDERS_PROCESS]["attributes"]["inputs"]) == [
        "https://contosolake.dfs.core.windows.net/raw/orders"
    ]
