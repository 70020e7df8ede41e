"""Fixtures for `ol2purview spark`: one local Spark (`local[2]`) for the whole test session, embedded catalogs on
free ports. The jobs and a comparable view of a catalog: tests/support/spark_jobs.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tools.catalog import CatalogServer


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The test session's one SparkSession on local[2] (tables in a temporary warehouse, not the project folder)."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        message = "Java is not installed (make test installs openjdk-17-jre-headless)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {message}", pytrace=False)
        pytest.skip(message)
    from tools.spark.spark_job import spark_session

    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = spark_session(
        "local[2]", "ol2purview-tests", progress=False, config={"spark.sql.warehouse.dir": str(warehouse)}
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def catalog_factory(tmp_path: Path) -> Iterator[Callable[[], CatalogServer]]:
    """Fresh embedded catalogs (stopped after the test)."""
    started: list[CatalogServer] = []

    def start() -> CatalogServer:
        server = CatalogServer(tmp_path / f"catalog{len(started)}.sqlite").start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
