"""Fixtures: the embedded catalog on a free port, driven by the official Apache Atlas Python client (`apache-atlas`,
basic auth) and by Microsoft's Purview Data Map SDK (`azure-purview-datamap`, a fake token over plain HTTP).

Every test gets a fresh catalog, so the call counter shows exactly the routes that test's client used (`Calls`,
tests/support/catalog_clients.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from apache_atlas.client.base_client import AtlasClient
from azure.purview.datamap import DataMapClient

from tests.support.catalog_clients import PASSWORD, USER, AllowPlainHttp, FakeCredential
from tools.catalog import CatalogServer


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[CatalogServer]:
    server = CatalogServer(tmp_path / "catalog.sqlite", user=USER, password=PASSWORD).start()
    yield server
    server.stop()


@pytest.fixture
def open_catalog(tmp_path: Path) -> Iterator[CatalogServer]:
    """Without basic auth: the Purview SDK sends a bearer token, which the embedded catalog does not check."""
    server = CatalogServer(tmp_path / "catalog.sqlite").start()
    yield server
    server.stop()


@pytest.fixture
def atlas(catalog: CatalogServer) -> AtlasClient:
    return AtlasClient(catalog.url, (USER, PASSWORD))


@pytest.fixture
def datamap(open_catalog: CatalogServer) -> DataMapClient:
    return DataMapClient(open_catalog.url, FakeCredential(), per_call_policies=[AllowPlainHttp()], retry_total=0)
