"""A backfill on Spark writes exactly what the live path writes.

Every real sequence and every event of ../shared/openlineage goes once through `ol2purview serve` on its defaults
(Azurite queues, the worker, the embedded catalog, events archived under the data folder) with openlineage-python as
the sender, one event at a time in queue order; the templates that are not valid OpenLineage are refused there. The
same files then go through `spark backfill` on local[2] into a fresh embedded catalog, and so does the archive that
serve wrote: both catalogs must equal serve's, entity for entity and relation for relation.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.lineage_helpers import SEQUENTIAL_ENV, WORKSPACE_HOSTS_ENV
from tests.support.catalog_compare import assert_same_catalog
from tests.support.repository import PROJECT_ROOT
from tests.support.shared_events import SHARED_OPENLINEAGE, sequence_folders
from tests.support.spark_jobs import catalog_view, job_for
from tools.functions_host.launcher import ServeHandle, start_serve
from tools.spark.spark_job import run_spark

pytestmark = [pytest.mark.spark, pytest.mark.e2e, pytest.mark.azurite]

SOURCES = (*sequence_folders(), SHARED_OPENLINEAGE / "events")
EVENTS_READ = 86  # 37 in the sequences, 49 in events/ (one file holds an array of 9)
REFUSED = {
    "400 $.eventTime is required but missing": 29,
    "400 $ is not an OpenLineage event: expected run and job (RunEvent), job (JobEvent) or dataset (DatasetEvent)": 10,
    "400 $.producer is required but missing": 2,
}


def replay_all(serve: ServeHandle, *paths: Path) -> str:
    """Send everything through `ol2purview replay` (openlineage-python); refusals are expected for the templates."""
    command = [sys.executable, "-m", "tools.cli", "replay", *map(str, paths), "--url", serve.url, f"--key={serve.key}"]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> ServeHandle:
    """serve on its default storage (Azurite) with every shared event replayed and processed, then stopped."""
    serve = start_serve(
        tmp_path_factory.mktemp("serve"),
        key=secrets.token_urlsafe(16),
        storage="azurite",
        env={**WORKSPACE_HOSTS_ENV, **SEQUENTIAL_ENV, "DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0"},
    )
    try:
        replay_all(serve, *SOURCES)
        serve.wait_until_processed(timeout=300)
        serve.view = catalog_view(serve.atlas_url)  # type: ignore[attr-defined]
    finally:
        assert serve.stop() == 0, serve.output()
    return serve


def test_backfill_of_the_shared_files_equals_the_live_path(served, spark, catalog_factory):
    catalog = catalog_factory()
    report = run_spark(spark, [str(p) for p in SOURCES], job_for(catalog))

    assert_same_catalog(catalog_view(catalog.atlas_url), served.view)
    assert (report.tally.events_read, dict(report.tally.refused)) == (EVENTS_READ, REFUSED)
    # the Dataproc sequence's two DROP TABLEs are no processes (lifecycleStateChange DROP, no input: issue 35)
    assert (report.processes_planned, report.processes_written, report.processes_unchanged) == (10, 10, 0)


def test_backfill_of_the_archive_that_serve_wrote_equals_the_live_path(served, spark, catalog_factory):
    archive = served.data_dir / "archive"
    archived = sorted(archive.rglob("*.json.gz"))
    assert archived and all(len(p.relative_to(archive).parts) == 5 for p in archived)  # yyyy/mm/dd/hh/<sha>.json.gz
    catalog = catalog_factory()
    report = run_spark(spark, [str(archive)], job_for(catalog))

    assert_same_catalog(catalog_view(catalog.atlas_url), served.view)
    assert report.tally.events_read == len(archived)
    assert dict(report.tally.refused) == {}
