"""`ol2purview serve --no-worker` keeps accepting while `ol2purview worker`, a separate process on the same storage
and catalog, does the processing; the worker can stop (or be replaced) without losing queued events."""

from __future__ import annotations

import signal

import pytest

from tests.e2e.lineage_helpers import Atlas, replay
from tests.support.azurite_fixture import require_azurite
from tests.support.shared_events import sequence_folders
from tools.functions_host.launcher import start_worker

pytestmark = pytest.mark.e2e

CLL = next((f for f in sequence_folders() if f.name == "compat-tests__CLL"), None)  # None without ../shared
CLL_PROCESS = (
    "spark_process",
    "spark://testColumnLevelLineage/open_lineage_integration_create_table/processes/"
    "execute_create_hive_table_as_select_command.default_tbl1/file:/tmp/cll_test/default.tbl1",
)


@pytest.mark.parametrize("storage", ["embedded", pytest.param("azurite", marks=pytest.mark.azurite)])
def test_events_wait_in_the_queue_until_a_worker_processes_them(serve_factory, storage):
    if storage == "azurite":
        require_azurite()
    serve = serve_factory(key="k", storage=storage, worker=False)
    replay(serve, CLL)
    status = serve.status()
    assert status["worker"] is None
    assert status["queues"]["lineage-events"]["approximateCount"] == 9
    assert Atlas(serve.atlas_url).keys() == set()  # nothing processed yet

    worker = start_worker(serve, storage)
    try:
        serve.wait_until_processed(timeout=60)
        assert CLL_PROCESS in Atlas(serve.atlas_url).keys()
    finally:
        assert worker.stop(signal.SIGTERM) == 0, worker.output()
    assert "ol2purview worker: stopped (9 succeeded, 0 failed, 0 poisoned)" in worker.output()
    assert "ready: worker" in worker.output()
