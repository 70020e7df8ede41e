"""The chaos test (issue 25): scaled out, with duplicates, any order and crashed workers, the catalog still ends as
in-order processing leaves it.

`ol2purview serve --no-worker` takes the events; three `ol2purview worker` processes on its storage process them.
The corpus is the real Spark sequences and Databricks samples of ../shared plus generated Databricks notebook runs
(re-runs that drop inputs, two statements writing one output, runs without a Spark job, lost COMPLETEs, failures),
and the tasks of an ETL job passing temporary datasets with a run of two outputs (tests/temporary_runs.py).
Every event is sent once or twice, in a shuffled order, by 8 threads, each with openlineage-python's HttpTransport as
a producer would. Once a third of the deliveries is processed, two workers are killed with SIGKILL and replaced;
their messages come back after their lease. When the queue is empty and the timer's sweep has run, every active
entity (type, qualifiedName, attributes; relationships such as a process's inputs, outputs and notebook; the
columnMapping attribute) and every lineage relation must equal what processing the same corpus in emission order,
in-process, gives.

Two stores: Azure's (Azurite started by serve, RUN_STATE_STORE=table) and the local one (SQLite queues and run state
in the one data folder the workers share). DATABRICKS_ENVIRONMENT_WAIT_SECONDS=0: a COMPLETE processed before its
RUNNING is written at once, then corrected.

The seed is random on every run and printed (`chaos seed N`); CHAOS_SEED=N replays that corpus and order (the kills
depend on timing). CHAOS_SCALE=N multiplies the generated runs (default 1; bench/chaos.py runs larger ones).
"""

from __future__ import annotations

import copy
import os
import random
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from olparser.adapters import operations
from olparser.adapters.runtime import Runtime
from olparser.runs.store import TOMBSTONE_SECONDS
from olparser.settings import Settings
from tests.property.scenarios import (
    INPUT_CHOICES,
    LAST_ENDING,
    NOTEBOOKS,
    REAL_SOURCES,
    STATEMENTS,
    WORKSPACE_HOSTS,
    generated_run,
)
from tests.support import databricks_runs as dr
from tests.support import temporary_runs as tr
from tests.support.order_worker import catalog_content, in_order
from tests.support.rules import MAPPINGS_PATH
from tests.support.tiers import SLOW_TEST_TIMEOUT
from tests.support.waiting import wait_until
from tools.functions_host.launcher import ServeHandle, WorkerHandle, start_serve, start_worker
from tools.replay import DEFAULT_ENDPOINT, make_transport

SEED = int(os.environ.get("CHAOS_SEED") or random.SystemRandom().randrange(2**32))
SCALE = int(os.environ.get("CHAOS_SCALE") or 1)
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.timeout(SLOW_TEST_TIMEOUT * SCALE),
]  # CHAOS_SCALE=N: N times the runs and the time
RUNS_PER_OUTPUT = 8  # generated runs that write one output table
OUTPUTS_PER_SCALE = 2  # output tables per unit of CHAOS_SCALE
SENDERS = 8
WORKERS = 3
KILLED = 2
LEASE_SECONDS = 5  # a killed worker's messages come back after this (`worker --lease`)
CHAOS_ENV = {
    "DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0",
    # runs that never complete are due 1 s after their last event, and the timer runs once, at the end (`sweep`):
    # its abandoned-deletion retry (TOMBSTONE_SECONDS after a deletion stalled) must not be what repairs the catalog
    "INCOMPLETE_RUN_SECONDS": "1",
    "LINEAGE_TIMER_SCHEDULE": "0 0 0 1 1 *",
    "DATABRICKS_WORKSPACE_HOSTS": ",".join(f"{workspace}={host}" for workspace, host in WORKSPACE_HOSTS),
    # a failed message is retried after 1 s instead of host.json's 30 s (an app setting overrides host.json)
    "AzureFunctionsJobHost__extensions__queues__visibilityTimeout": "00:00:01",
}
STORES = {"table": "azurite", "sqlite": "embedded"}  # RUN_STATE_STORE: the queue storage it runs with


def generated_runs(rng: random.Random, outputs: int) -> list[dict[str, Any]]:
    """RUNS_PER_OUTPUT notebook runs for each of `outputs` tables (curated/orders, then curated/orders_1...)."""
    events: list[dict[str, Any]] = []
    for table in range(outputs):
        output = dr.Dataset("dbfs", "/mnt/curated/orders" + (f"_{table}" if table else ""), dr.CURATED_ORDERS.columns)
        for index in range(RUNS_PER_OUTPUT):
            events += generated_run(
                1000 + table * RUNS_PER_OUTPUT + index,
                minutes=10 * rng.randint(0, 5),
                inputs=tuple(rng.sample(INPUT_CHOICES, rng.randint(0, 3))),
                statement=rng.choice(STATEMENTS),
                running=rng.random() < 0.5,
                notebook=rng.choice(NOTEBOOKS),
                ending=rng.randint(0, LAST_ENDING),
                may_fail=index > 0,
                output=output,
            )
    return events


def corpus(rng: random.Random, scale: int) -> list[dict[str, Any]]:
    """Every event, in emission order: the real sources, the generated runs, then the tasks of ETL jobs passing
    temporary datasets (whose readers may be processed before their writers, on another worker) and a run with two
    outputs (tests/temporary_runs.py)."""
    real = [copy.deepcopy(event) for name in sorted(REAL_SOURCES) for event in REAL_SOURCES[name]]
    temporary = [
        event
        for job in range(scale)
        for event in (*tr.etl_chain(f"chaos-{job}"), *tr.two_outputs(f"chaos-split-{job}"))
    ]
    return real + generated_runs(rng, OUTPUTS_PER_SCALE * scale) + temporary


def deliveries(rng: random.Random, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every event once or twice (a producer's retry, a queue's redelivery), shuffled."""
    copies = [event for event in events for _ in range(rng.randint(1, 2))]
    rng.shuffle(copies)
    return copies


class Senders:
    """SENDERS threads, each with its own openlineage-python HttpTransport, taking the next delivery until none is
    left; `statuses` are the answers (an error raises in the sender and is kept in `errors`)."""

    def __init__(self, serve: ServeHandle, events: list[dict[str, Any]]) -> None:
        self._serve = serve
        self._events = iter(events)
        self._lock = threading.Lock()
        self.statuses: list[int] = []
        self.errors: list[str] = []
        self._threads = [threading.Thread(target=self._send, name=f"sender-{n}") for n in range(SENDERS)]

    def start(self) -> "Senders":
        for thread in self._threads:
            thread.start()
        return self

    def _next(self) -> dict[str, Any] | None:
        with self._lock:
            return next(self._events, None)

    def _send(self) -> None:
        transport = make_transport(
            self._serve.url, DEFAULT_ENDPOINT, self._serve.key, gzip=False, timeout=30, retries=5
        )
        try:
            while (event := self._next()) is not None:
                status = transport.emit(event).status_code
                with self._lock:
                    self.statuses.append(status)
        except Exception as error:  # noqa: BLE001 - reported by the test
            self.errors.append(f"{type(error).__name__}: {error}")

    def sent(self) -> int:
        with self._lock:
            return len(self.statuses)

    def join(self, timeout: float) -> None:
        for thread in self._threads:
            thread.join(timeout)


def start_workers(serve: ServeHandle, storage: str, env: dict[str, str], count: int) -> list[WorkerHandle]:
    with ThreadPoolExecutor(count) as pool:
        return list(
            pool.map(lambda _: start_worker(serve, storage, env, ("--lease", str(LEASE_SECONDS))), range(count))
        )


def sweep(serve: ServeHandle, store: str) -> None:
    """One tick of the timer on the workers' storage and catalog, once every incomplete run is due (1 s after its
    last event) and long before a stalled deletion counts as abandoned (TOMBSTONE_SECONDS)."""
    settings = Settings(
        data_dir=serve.data_dir,
        atlas_endpoint=serve.atlas_url,
        run_state_store=store,
        storage_connection=serve.storage_connection,
        databricks_workspace_hosts=WORKSPACE_HOSTS,
        databricks_environment_wait_seconds=0,
        incomplete_run_seconds=1,
        mappings_path=MAPPINGS_PATH,
    )
    runtime = Runtime(settings)
    try:
        report = operations.write_due_runs(runtime, now=time.time() + 2)
    finally:
        runtime.close()
    assert report.failed == 0, report


def differences(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """What differs between two `catalog_content`s, one line each (values cut to 300 characters)."""
    lines = [f"missing {key}" for key in sorted(expected["entities"].keys() - got["entities"].keys())]
    lines += [f"extra {key}" for key in sorted(got["entities"].keys() - expected["entities"].keys())]
    for key in sorted(expected["entities"].keys() & got["entities"].keys()):
        for part in ("attributes", "relationships"):
            want, have = expected["entities"][key][part], got["entities"][key][part]
            lines += [
                f"{key} {part}.{name}: in order {want.get(name)!r:.300}, after chaos {have.get(name)!r:.300}"
                for name in sorted(want.keys() | have.keys())
                if want.get(name) != have.get(name)
            ]
    lines += [f"lineage missing {relation}" for relation in sorted(expected["lineage"] - got["lineage"])]
    lines += [f"lineage extra {relation}" for relation in sorted(got["lineage"] - expected["lineage"])]
    return lines


def problems_logged(*handles: WorkerHandle) -> list[str]:
    """ERROR and WARNING lines of the workers' logs (shown with a failure)."""
    return [
        line
        for handle in handles
        for line in handle.output().splitlines()
        if " ERROR " in line or " WARNING " in line or line.startswith("Traceback")
    ]


@pytest.mark.parametrize("store", [pytest.param("table", marks=pytest.mark.azurite), "sqlite"])
def test_scaled_out_workers_killed_midway_leave_the_in_order_catalog(store, tmp_path: Path):
    started = time.monotonic()
    rng = random.Random(SEED)
    ordered = corpus(rng, SCALE)
    delivered = deliveries(rng, ordered)
    print(
        f"\nchaos seed {SEED} (CHAOS_SEED={SEED} replays it), scale {SCALE}, store {store}: {len(ordered)} events, "
        f"{len(delivered)} deliveries"
    )
    expected = in_order(ordered, hold=0)

    env = {**CHAOS_ENV, "RUN_STATE_STORE": store}
    serve = start_serve(tmp_path / "chaos", env=env, storage=STORES[store], worker=False)
    workers = start_workers(serve, STORES[store], env, WORKERS)
    everyone = list(workers)
    try:
        senders = Senders(serve, delivered).start()
        wait_until(
            lambda: (
                senders.sent() - serve.status()["queues"]["lineage-events"]["approximateCount"] >= len(delivered) // 3
            ),
            timeout=120,
            interval=0.05,
            what="a third of the deliveries processed",
        )
        for victim in workers[:KILLED]:
            victim.process.send_signal(signal.SIGKILL)
            assert victim.process.wait(10) == -signal.SIGKILL
        killed_at = (senders.sent(), serve.status()["queues"]["lineage-events"]["approximateCount"])
        replacements = start_workers(serve, STORES[store], env, KILLED)
        everyone += replacements
        workers = workers[KILLED:] + replacements
        senders.join(120)
        assert senders.errors == []
        assert senders.statuses == [200] * len(delivered)
        # a worker killed while deleting leaves tombstones that other writers wait for (at most TOMBSTONE_SECONDS)
        status = serve.wait_until_processed(timeout=TOMBSTONE_SECONDS + 120 * SCALE)
        sweep(serve, store)
        got = catalog_content(serve.atlas_url)
    finally:
        for worker in workers:
            worker.stop()
        serve.stop()
    elapsed = time.monotonic() - started
    print(
        f"chaos seed {SEED}, store {store}: killed {KILLED} of {WORKERS} workers with {killed_at[0]} sent and "
        f"{killed_at[1]} waiting; {len(got['entities'])} entities, {len(got['lineage'])} lineage relations; "
        f"{elapsed:.1f} s"
    )
    assert status["queues"]["lineage-events"]["poisonCount"] == 0, problems_logged(*everyone)
    assert expected["entities"] and expected["lineage"]
    found = differences(expected, got)
    print(
        "\n".join(["differences from in-order processing:", *found, "worker problems:", *problems_logged(*everyone)])
        if found
        else "no difference from in-order processing"
    )
    assert found == [], (
        f"chaos seed {SEED} (store {store}): {len(found)} differences from in-order processing",
        found[:40],
        problems_logged(*everyone)[-40:],
    )
