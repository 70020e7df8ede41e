"""What a run costs in Azure Table storage: the requests the runner makes to the run-state table and the run-history
table together, counted on Azurite with azure-core's raw_request_hook (each request is billed, and each is 5-20 ms on
Azure: sequential, they are the latency of a run). Issue #34 sets the ceilings: <= 15 requests per new run, <= 3 per
replayed message, <= 2 per unchanged streaming micro-batch. The figures before the change (same scenarios, this
test's counting) are in the comments.

Every scenario runs after a warm-up run of the same job (its process, job and datasets are known: the usual case),
with the catalog a boundary fake that answers at once: only the stores' requests are counted."""

from __future__ import annotations

import copy
import re
import uuid
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import unquote

import pytest

from olparser.adapters.history_stores.table_store import TableHistoryStore
from olparser.adapters.run_state.table_store import TableRunStateStore
from olparser.lineage import LineageOptions
from olparser.pipeline import LineagePipeline, RunStatus, WritePolicy
from tests.support import databricks_runs as dr
from tests.unit.pipeline.fake_catalog import FakeCatalog
from tools.samples.databricks import event_time

pytestmark = pytest.mark.azurite

NOW = 1_800_000_000.0


class Counted:
    """The Table requests made since the last `take()`, per table; `last`: what the last `take()` counted, one line per
    request (method, partition and row, or the partitions of a batch), for the assertions' messages."""

    def __init__(self) -> None:
        self.requests: dict[str, int] = {"runs": 0, "history": 0}
        self.listed: list[str] = []
        self.last = ""

    def hook(self, table: str):
        def count(request: Any) -> None:
            self.requests[table] += 1
            http = request.http_request
            body = http.body if isinstance(http.body, (str, bytes)) else b""
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
            batch = re.findall(r"^(\w+) \S*PartitionKey='([^']{1,12})", unquote(text), re.M)
            self.listed.append(f"{table} {http.method} {unquote(http.url.rsplit('/', 1)[-1])[16:96]} {batch or ''}")

        return count

    def take(self) -> dict[str, int]:
        taken, self.requests = self.requests, {"runs": 0, "history": 0}
        self.last, self.listed = "\n".join(self.listed), []
        return taken


class DiesOnce(FakeCatalog):
    """The worker dies in its first upload (after the claims, before the commit); the message comes back."""

    died = False

    def upload(self, plan, *, refresh: bool = True):
        if not self.died:
            self.died = True
            raise ConnectionError("worker killed")
        return super().upload(plan, refresh=refresh)


@pytest.fixture
def counted(azurite, engine):
    from azure.data.tables import TableServiceClient

    counts = Counted()
    suffix = uuid.uuid4().hex[:12]
    runs = TableServiceClient.from_connection_string(azurite.connection_string, raw_request_hook=counts.hook("runs"))
    history = TableServiceClient.from_connection_string(
        azurite.connection_string, raw_request_hook=counts.hook("history")
    )
    store = TableRunStateStore(runs.create_table_if_not_exists(f"runs{suffix}"), ttl_seconds=7 * 86400)
    history_store = TableHistoryStore(history.create_table_if_not_exists(f"hist{suffix}"), retention_days=36500)
    yield counts, store, history_store
    store.close()
    history_store.close()


def pipeline_of(store, history, engine, catalog=None) -> LineagePipeline:
    return LineagePipeline(
        store,
        engine,
        LineageOptions(),
        catalog or FakeCatalog(),
        WritePolicy(environment_wait_seconds=0),
        clock=lambda: NOW,
        sleep=lambda _: None,
        history=history,
    )


def warm(pipeline: LineagePipeline, counts: Counted) -> None:
    """Run 1 of the orders notebook, in order: its process, job, application and datasets are then known."""
    for event in dr.events(dr.orders_run(1)):
        pipeline.process(event, now=NOW)
    counts.take()


def test_a_new_run_and_its_replay(counted, engine):
    counts, store, history = counted
    pipeline = pipeline_of(store, history, engine)
    warm(pipeline, counts)
    # START, RUNNING (environment-properties), COMPLETE as openlineage-spark emits them (tools/samples/databricks.py)
    start, running, complete = dr.events(dr.orders_run(2, dr.T0 + timedelta(hours=1)))
    statuses = [pipeline.process(event, now=NOW).status for event in (start, running, complete)]
    assert statuses == [RunStatus.WAITING, RunStatus.WAITING, RunStatus.WRITTEN]
    new_run = counts.take()
    assert new_run == {"runs": 9, "history": 6}, (
        counts.last
    )  # before: 10 + 6 (the process's writers row read before its change: now as this instance last wrote it, the
    # change conditional on it), 10 + 8 (no purge row; the counts under the process lock as the record left them),
    # 11 + 8, 14 + 8 (30 + 14 before #34's first part)

    assert pipeline.process(complete, now=NOW).status == RunStatus.UNCHANGED  # the queue delivers it once more
    assert counts.take() == {"runs": 1, "history": 2}, counts.last  # before: 1 + 2 (the run's row; history: the run's
    # row and its process's summary)


def test_an_unchanged_streaming_micro_batch(counted, engine):
    counts, store, history = counted
    pipeline = pipeline_of(store, history, engine)
    warm(pipeline, counts)
    start, running, _ = dr.events(replace(dr.orders_run(2, dr.T0 + timedelta(hours=1)), job_type=True))
    for event in (start, running):
        # Structured Streaming: the job's `jobType` facet says STREAMING (JobTypeJobFacet.json, processingType
        # "STREAMING or BATCH"); each micro-batch sends the run's RUNNING again, later, with the same datasets
        event["job"]["facets"]["jobType"]["processingType"] = "STREAMING"
    pipeline.process(start, now=NOW)
    pipeline.process(running, now=NOW)
    counts.take()
    batch = copy.deepcopy(running)
    batch["eventTime"] = event_time(dr.T0 + timedelta(hours=1, seconds=40))
    assert pipeline.process(batch, now=NOW + 40).status == RunStatus.WAITING
    assert counts.take() == {"runs": 1, "history": 0}, counts.last  # before: 1 + 0 (the run's row)


def test_a_run_that_drops_a_process(counted, engine):
    counts, store, history = counted
    pipeline = pipeline_of(store, history, engine)
    warm(pipeline, counts)
    _, running, complete = dr.events(dr.orders_run(2, dr.T0 + timedelta(hours=1)))
    # its COMPLETE first (no environment yet: the interim databricks_shell process), then the RUNNING that carries
    # the environment: the plan moves to the notebook's process and drops the interim one (released, deleted)
    pipeline.process(complete, now=NOW)
    counts.take()
    outcome = pipeline.process(running, now=NOW)
    assert (outcome.status, outcome.deleted) == (RunStatus.WRITTEN, 5)
    assert counts.take() == {"runs": 27, "history": 12}, (
        counts.last
    )  # before: 28 + 12, 28 + 14, 30 + 14 (35 + 15 (the 5 released heads read
    # again before their deletion; the history row marked complete apart from `refreshed`; then the due rows))


def test_a_worker_that_dies_in_its_upload(counted, engine):
    counts, store, history = counted
    catalog = DiesOnce()
    pipeline = pipeline_of(store, history, engine, catalog)
    catalog.died = True
    warm(pipeline, counts)
    catalog.died = False
    start, running, complete = dr.events(dr.orders_run(2, dr.T0 + timedelta(hours=1)))
    pipeline.process(start, now=NOW)
    pipeline.process(running, now=NOW)
    with pytest.raises(ConnectionError):
        pipeline.process(complete, now=NOW)
    died = counts.take()
    assert pipeline.process(complete, now=NOW, redelivered=True).status == RunStatus.WRITTEN
    assert died == {"runs": 7, "history": 5}, counts.last  # before: 8 + 5, 8 + 7, 9 + 7 (9 + 9)
    # the redelivery: the history's row, left incomplete (no purge row says its rows are all written), is written
    # again with its rows, idempotently (its process partition read first: the run is in it already); before:
    # 7 + 8 (the process's writers row read), 7 + 5 (the purge row read instead), 8 + 5, 10 + 5
    assert counts.take() == {"runs": 6, "history": 8}, counts.last
