"""Fixtures: a catalog on a free port over a fresh SQLite file, and pyapacheatlas clients for it."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from pyapacheatlas.auth import BasicAuthentication
from pyapacheatlas.core import AtlasClient

from olparser.adapters.runtime import Runtime
from olparser.settings import Settings
from tests.support.catalog_server import PASSWORD, USER
from tests.support.rules import MAPPINGS_PATH
from tools.catalog import CatalogServer


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "catalog.sqlite"


@pytest.fixture
def catalog(db_path: Path) -> Iterator[CatalogServer]:
    server = CatalogServer(db_path, user=USER, password=PASSWORD).start()
    yield server
    server.stop()


@pytest.fixture
def open_catalog(db_path: Path) -> Iterator[CatalogServer]:
    """A catalog without basic auth, as `ol2purview serve` starts it."""
    server = CatalogServer(db_path).start()
    yield server
    server.stop()


@pytest.fixture
def client(catalog: CatalogServer) -> AtlasClient:
    return AtlasClient(
        endpoint_url=catalog.atlas_url, authentication=BasicAuthentication(USER, PASSWORD), requests_timeout=10
    )


@pytest.fixture
def runtime(open_catalog: CatalogServer, tmp_path: Path) -> Iterator[Runtime]:
    """The live path's parts (runner, resolver, uploader) over the open catalog, with the shipped rules and no wait
    for a Databricks run's environment."""
    rt = Runtime(
        Settings(
            data_dir=tmp_path / "data",
            atlas_endpoint=open_catalog.atlas_url,
            mappings_path=MAPPINGS_PATH,
            databricks_environment_wait_seconds=0,
        )
    )
    yield rt
    rt.close()
