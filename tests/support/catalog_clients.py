"""The client suite's catalog login, its expected relationship defs, and what the official clients need against the
embedded catalog: a fake token credential, plain HTTP for the Data Map SDK, the catalog's call counter, and answers
without the server clock's times."""

from __future__ import annotations

import time
from typing import Any

import requests
from azure.core.credentials import AccessToken
from azure.core.pipeline import PipelineRequest
from azure.core.pipeline.policies import SansIOHTTPPolicy

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
