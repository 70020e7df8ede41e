"""Fixtures: a catalog on a free port over a fresh SQLite file, and pyapacheatlas clients for it."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import requests
from pyapacheatlas.auth import BasicAuthentication
from pyapacheatlas.core import AtlasClient

from tools.catalog import CatalogServer

USER, PASSWORD = "atlas-user", "s3cret-pw"


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


def calls_since_reset(catalog: CatalogServer) -> dict[str, int]:
    """The catalog's calls by route since the last reset, then reset."""
    counted = requests.get(f"{catalog.url}/_ol2purview/calls", timeout=10).json()["byRoute"]
    requests.post(f"{catalog.url}/_ol2purview/calls/reset", timeout=10).raise_for_status()
    return counted


@pytest.fixture
def client(catalog: CatalogServer) -> AtlasClient:
    return AtlasClient(
        endpoint_url=catalog.atlas_url, authentication=BasicAuthentication(USER, PASSWORD), requests_timeout=10
    )
