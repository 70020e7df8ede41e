"""Fixtures: the embedded catalog on a free port, driven by the official Apache Atlas Python client (`apache-atlas`,
basic auth) and by Microsoft's Purview Data Map SDK (`azure-purview-datamap`, a fake token over plain HTTP).

Every test gets a fresh catalog, so the call counter shows exactly the routes that test's client used.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests
from apache_atlas.client.base_client import AtlasClient
from azure.core.credentials import AccessToken
from azure.core.pipeline import PipelineRequest
from azure.core.pipeline.policies import SansIOHTTPPolicy
from azure.purview.datamap import DataMapClient

from tools.catalog import CatalogServer

USER, PASSWORD = "steward", "client-suite-pw"
LAKE = "https://contosolake.dfs.core.windows.net/raw"
HOST = "adb-1234567890123456.7.azuredatabricks.net"
# the built-in relationship defs of the scanner types and of Purview's Databricks model, in the order the catalog
# lists them
SCANNER_RELATIONSHIPS = [
    "hive_table_columns",
    "azure_sql_table_columns",
    "databricks_metastore_catalogs",
    "databricks_catalog_schemas",
    "databricks_schema_tables",
    "databricks_schema_views",
    "databricks_table_columns",
    "databricks_view_columns",
    "fabric_lake_warehouse_tables",
    "fabric_lakehouse_table_columns",
    "AtlasGlossaryTermAnchor",  # the glossary's: a term in its glossary, a term assigned to an entity
    "AtlasGlossarySemanticAssignment",
    "databricks_workspace_hive_metastore",
    "databricks_workspace_notebooks",
    "databricks_workspace_jobs",
    "databricks_job_job_tasks",
    "databricks_notebook_notebook_tasks",
    "databricks_runnable_processes",
]
TIME_FIELDS = frozenset({"createTime", "updateTime", "create_time", "update_time"})


class FakeCredential:
    """An azure-core TokenCredential that hands out a fixed token (the embedded catalog does not check tokens)."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken("fake-purview-token", int(time.time()) + 3600)


class AllowPlainHttp(SansIOHTTPPolicy):
    """Lets the SDK's BearerTokenCredentialPolicy send its token over http:// (azure-core refuses unless the
    request context says `enforce_https=False`, the same switch as the per-call keyword)."""

    def on_request(self, request: PipelineRequest) -> None:
        request.context["enforce_https"] = False


class Calls:
    """The catalog's call counter: which Atlas routes a test's client used."""

    def __init__(self, server: CatalogServer) -> None:
        self.url = server.url + "/_ol2purview/calls"
        self.auth = (USER, PASSWORD)

    def routes(self) -> dict[str, int]:
        return requests.get(self.url, auth=self.auth, timeout=10).json()["byRoute"]

    def reset(self) -> None:
        requests.post(self.url + "/reset", auth=self.auth, timeout=10).raise_for_status()


def without_times(value: Any) -> Any:
    """The value with every createTime/updateTime (set by the server clock) replaced by "<time>"; ints only."""
    if isinstance(value, dict):
        return {
            k: ("<time>" if k in TIME_FIELDS and isinstance(v, int) else without_times(v)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


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
