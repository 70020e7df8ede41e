"""The catalog's content, and the catalog in-order processing writes, for the order tests."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import requests

from olparser.adapters import operations
from olparser.adapters.runtime import Runtime
from olparser.settings import Settings
from tests.property.scenarios import WORKSPACE_HOSTS
from tests.support.rules import MAPPINGS_PATH
from tools.catalog import CatalogServer

FAR_FUTURE = time.time() + 2 * 3600  # every held (60 s) or incomplete (3,600 s) run is due, none expired (7 days)


VOLATILE = {
    "guid",
    "createTime",
    "updateTime",
    "version",
    "createdBy",
    "updatedBy",
    "lastModifiedTS",
    "relationshipGuid",
    "relationshipStatus",
    "relationshipType",
    "relationshipAttributes",
    "displayText",
    "entityStatus",
}


def _settings(folder: Path, atlas_url: str, hold: int) -> Settings:
    return Settings(
        data_dir=folder,
        atlas_endpoint=atlas_url,
        databricks_workspace_hosts=WORKSPACE_HOSTS,
        databricks_environment_wait_seconds=hold,
        incomplete_run_seconds=3600,
        mappings_path=MAPPINGS_PATH,
    )


def _by_key(value: Any, names: dict[str, tuple[str, str]]) -> Any:
    """Object ids and headers as (typeName, qualifiedName), everything the catalog adds on its own left out."""
    if isinstance(value, dict):
        if "guid" in value and value["guid"] in names:
            return names[value["guid"]]
        return {k: _by_key(v, names) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):  # a relationship to a deleted entity is history, not lineage
        items = [
            _by_key(v, names)
            for v in value
            if not (isinstance(v, dict) and "DELETED" in (v.get("entityStatus"), v.get("relationshipStatus")))
        ]
        return sorted(items, key=repr) if all(isinstance(i, tuple) for i in items) else items
    return value


def catalog_content(atlas_url: str) -> dict[str, Any]:
    """Every active entity (attributes and relationships by key) and every lineage relation around each process."""
    guids: list[str] = []
    while True:
        page = requests.post(
            f"{atlas_url}/search/basic", json={"query": "*", "limit": 1000, "offset": len(guids)}, timeout=30
        ).json()["entities"]
        guids += [e["guid"] for e in page or []]
        if len(page or []) < 1000:
            break
    if not guids:
        return {"entities": {}, "lineage": set()}
    body = requests.get(f"{atlas_url}/entity/bulk", params=[("guid", g) for g in guids], timeout=30).json()
    active = [e for e in body["entities"] if e.get("status", "ACTIVE") == "ACTIVE"]
    names = {e["guid"]: (e["typeName"], e["attributes"]["qualifiedName"]) for e in active}
    entities = {}
    for entity in active:
        relationships = {k: _by_key(v, names) for k, v in (entity.get("relationshipAttributes") or {}).items()}
        entities[names[entity["guid"]]] = {
            "attributes": _by_key(entity["attributes"], names),
            "relationships": {k: v for k, v in relationships.items() if v not in (None, [])},
        }
    lineage = set()
    for entity in active:
        if entity["typeName"].endswith("_process"):
            graph = requests.get(
                f"{atlas_url}/lineage/{entity['guid']}", params={"direction": "BOTH", "depth": 1}, timeout=30
            ).json()
            keys = {g: (h["typeName"], h["attributes"]["qualifiedName"]) for g, h in graph["guidEntityMap"].items()}
            lineage |= {(keys[r["fromEntityId"]], keys[r["toEntityId"]]) for r in graph["relations"]}
    return {"entities": entities, "lineage": lineage}


def in_order(events: list[dict[str, Any]], hold: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder, CatalogServer(Path(folder) / "catalog.db") as catalog:
        runtime = Runtime(_settings(Path(folder), catalog.atlas_url, hold))
        try:
            for event in events:
                operations.process_event(runtime, event)
            operations.write_due_runs(runtime, now=FAR_FUTURE)
        finally:
            runtime.close()
        return catalog_content(catalog.atlas_url)
