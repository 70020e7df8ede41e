"""`--max-calls-per-second` holds for the whole job: two upload tasks on local[2], each at half the rate, measured
at the embedded catalog's call counter."""
from __future__ import annotations

import threading
import time

import pytest

from tests.spark.conftest import catalog_calls, job_for
from tests.spark.events import spark_run, write_json_lines
from tools.spark.spark_job import run_spark

pytestmark = pytest.mark.spark

RATE = 12.0
RUNS = 24


def test_the_catalog_sees_the_configured_call_rate(spark, catalog_factory, tmp_path):
    source = write_json_lines(tmp_path / "events.jsonl", [e for n in range(RUNS) for e in spark_run(n)])
    catalog = catalog_factory()
    # 5 entities per run (application, 2 inputs, output, process): one run per bulk call, so ~3 calls per run
    job = job_for(catalog, calls_per_second=RATE, catalog_bulk_size=5)
    samples: list[tuple[float, int]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append((time.monotonic(), catalog_calls(catalog)))
            done.wait(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        report = run_spark(spark, [str(source)], job)
    finally:
        done.set()
        sampler.join()

    total = catalog_calls(catalog)
    assert report.catalog_calls == total and total >= 70
    # the steady part: from the 10% to the 90% call (the driver's typedef calls and the tasks' start are before it)
    first = next(s for s in samples if s[1] >= total * 0.1)
    last = next(s for s in samples if s[1] >= total * 0.9)
    measured = (last[1] - first[1]) / (last[0] - first[0])
    # Never above the rate; and the two tasks together reach it (one task alone would give half). Below it only by
    # what a loaded machine costs the tasks (each call is a real HTTP request).
    assert RATE * 0.75 <= measured <= RATE * 1.10, (measured, total)
