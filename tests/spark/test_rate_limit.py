"""`--max-calls-per-second` holds for the whole job: every upload task (two on local[2]) gets a client limited to
its share of the rate, and every catalog call goes through it, counted at the embedded catalog's call counter. The
limiter's pacing itself (slots 1/rate apart, no bursts) is tested with a fake clock in test_runs_and_catalog_edge.py;
the rate a real job reaches is a benchmark's figure (bench/spark_backfill.py), never a test's."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import pytest

from tests.spark.events import spark_run, write_json_lines
from tests.support.spark_jobs import catalog_calls, job_for
from tools.spark.job import BackfillJob
from tools.spark.spark_job import run_spark

pytestmark = pytest.mark.spark

RATE = 12.0
RUNS = 24


@dataclass(frozen=True)
class ClientsNoted(BackfillJob):
    """The job, noting in `notes` (a file: the tasks run in Spark's Python workers) each client's share and the
    interval its limiter keeps between calls."""

    notes: str = ""

    def client(self, share: int = 1):
        client = super().client(share)
        with open(self.notes, "a", encoding="utf-8") as out:
            out.write(f"{share} {client._limiter.interval:.6f}\n")
        return client


def test_every_upload_task_gets_its_share_of_the_configured_call_rate(spark, catalog_factory, tmp_path: Path):
    source = write_json_lines(tmp_path / "events.jsonl", [e for n in range(RUNS) for e in spark_run(n)])
    catalog = catalog_factory()
    # 5 entities per run (application, 2 inputs, output, process): one run per bulk call, so ~3 calls per run
    plain = job_for(catalog, calls_per_second=RATE, catalog_bulk_size=5)
    notes = tmp_path / "clients.txt"
    job = ClientsNoted(**{f.name: getattr(plain, f.name) for f in fields(plain)}, notes=str(notes))
    report = run_spark(spark, [str(source)], job)

    total = catalog_calls(catalog)
    assert report.catalog_calls == total and total >= 70
    # the driver (its typedef calls, before any task) at the whole rate; then two upload tasks at once, each limited
    # to half of it: 2 / 12 s between its calls, 12 calls/s together
    assert sorted(notes.read_text().splitlines()) == [f"1 {1 / RATE:.6f}", f"2 {2 / RATE:.6f}", f"2 {2 / RATE:.6f}"]
