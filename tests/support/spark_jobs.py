"""`ol2purview spark` jobs for the tests, and a comparable view of a catalog (entities without guids and times, and
their lineage relations)."""

from __future__ import annotations

import json
from typing import Any

import requests

from olparser.settings import Settings
from tests.e2e.lineage_helpers import WORKSPACE_HOSTS_ENV, Atlas
from tests.support.rules import MAPPINGS_PATH
from tools.catalog import CatalogServer
from tools.spark.job import BackfillJob

VOLATILE = {
    "guid",
    "relationshipGuid",
    "createTime",
    "updateTime",
    "version",
    "createdBy",
    "updatedBy",
    "lastModifiedTS",
}
WORKSPACE_HOSTS = (tuple(WORKSPACE_HOSTS_ENV["DATABRICKS_WORKSPACE_HOSTS"].split("=", 1)),)


def job_for(catalog: CatalogServer | None, **settings: Any) -> BackfillJob:
    """A job writing to `catalog` (None: no catalog, dry runs) with the accelerator's workspace host and the tests'
    rules (unless `mappings_inline` gives others); its run history in the catalog's folder."""
    rate = settings.pop("calls_per_second", None)
    settings.setdefault("mappings_path", MAPPINGS_PATH)
    if catalog is not None:
        settings.setdefault("data_dir", catalog.db_path.parent / f"{catalog.db_path.stem}-data")
    base = Settings(
        atlas_endpoint=catalog.atlas_url if catalog else None, databricks_workspace_hosts=WORKSPACE_HOSTS, **settings
    )
    return BackfillJob.create(base, calls_per_second=rate)


def _stable(value: Any) -> Any:
    """Without guids, times and versions; lists of references in a canonical order (a catalog lists the other ends
    of a relationship in the order they were created)."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        items = [_stable(v) for v in value]
        if items and all(isinstance(i, dict) and "uniqueAttributes" in i for i in items):
            items.sort(key=lambda i: json.dumps(i, sort_keys=True))
        return items
    return value


def catalog_view(atlas_url: str) -> tuple[list[dict[str, Any]], set[tuple[str, str]]]:
    """Every ACTIVE entity without guids, times and versions (sorted by type and name), and every lineage relation
    of every process as (from qualifiedName, to qualifiedName)."""
    atlas = Atlas(atlas_url)
    entities = atlas.all_entities()
    relations: set[tuple[str, str]] = set()
    for entity in entities:
        if "lastRunId" in entity["attributes"]:
            relations |= atlas.lineage(entity["guid"], depth=1)
    return [_stable(e) for e in entities], relations


def catalog_calls(server: CatalogServer) -> int:
    return requests.get(f"{server.url}/_ol2purview/calls", timeout=10).json()["total"]
