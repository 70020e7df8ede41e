"""Helpers for the issue-5 end-to-end tests: replay through `ol2purview replay`, read the catalog through the Atlas API.

Everything here talks HTTP to real processes: the serve under test and its embedded catalog.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import requests

from tests.support.catalog_reads import as_the_connector_reads
from tests.support.repository import PROJECT_ROOT
from tests.support.shared_events import SHARED_OPENLINEAGE
from tools.functions_host.launcher import ServeHandle

EVENTS = SHARED_OPENLINEAGE / "events"
ACCELERATOR_EVENT = EVENTS / "accelerator__UnitTestColData_CompleteOlColMessage.json"
DATABRICKS_QUICKSTART_EVENT = EVENTS / "website-docs__quickstart_databricks_COMPLETE_0.12.0.json"
# The accelerator's cluster carries only its workspace id; this setting names its host (see README, settings).
WORKSPACE_ID = "3464153745686717"
WORKSPACE_HOST = f"adb-{WORKSPACE_ID}.17.azuredatabricks.net"
WORKSPACE_HOSTS_ENV = {"DATABRICKS_WORKSPACE_HOSTS": f"{WORKSPACE_ID}={WORKSPACE_HOST}"}
VOLATILE = ("createTime", "updateTime", "version", "createdBy", "updatedBy", "lastModifiedTS")
# One event at a time, in queue order (app settings overriding host.json, as in Azure): several runs of one
# application write the same process (one per output); the newest run's lineage stays, and sequential processing
# also makes the catalog's intermediate states (and so its call counts) repeatable.
SEQUENTIAL_ENV = {
    "AzureFunctionsJobHost__extensions__queues__batchSize": "1",
    "AzureFunctionsJobHost__extensions__queues__newBatchThreshold": "0",
}


def replay(serve: ServeHandle, *paths: Path, timeout: float = 300) -> str:
    """Send files, folders or JSON-lines files through `ol2purview replay` (the openlineage-python client); all must
    be accepted."""
    command = [sys.executable, "-m", "tools.cli", "replay", *map(str, paths), "--url", serve.url, f"--key={serve.key}"]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def write_events(folder: Path, *events: dict[str, Any]) -> Path:
    """Write events as 1.json, 2.json... for `replay` (natural order)."""
    folder.mkdir(parents=True, exist_ok=True)
    for number, event in enumerate(events, 1):
        (folder / f"{number}.json").write_text(json.dumps(event), encoding="utf-8")
    return folder


def send_and_wait(serve: ServeHandle, folder: Path, events: list[dict[str, Any]]) -> None:
    """Send these events through `ol2purview replay` (openlineage-python's HttpTransport) and wait until the worker
    has processed them."""
    replay(serve, write_events(folder, *events))
    serve.wait_until_processed()


def notebook_process(serve: ServeHandle, notebook: str, statement: str) -> dict[str, Any]:
    """The one `databricks_process` of a notebook's statement (`{notebook}/processes/{statement}/...`), read whole."""
    atlas = Atlas(serve.atlas_url)
    found = [
        e
        for e in atlas.all_entities()
        if e["typeName"] == "databricks_process"
        and e["attributes"]["qualifiedName"].startswith(f"{notebook}/processes/{statement}/")
    ]
    assert len(found) == 1, [e["attributes"]["qualifiedName"] for e in found]
    return atlas.entity("databricks_process", found[0]["attributes"]["qualifiedName"])


def load_event(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


class Atlas:
    """A few read calls of the Atlas v2 API (what Purview answers too)."""

    def __init__(self, atlas_url: str) -> None:
        self.url = atlas_url

    def all_entities(self) -> list[dict[str, Any]]:
        """Every active entity, full JSON, sorted by (typeName, qualifiedName)."""
        found = requests.post(f"{self.url}/search/basic", json={"query": "*", "limit": 1000}, timeout=30).json()
        guids = [e["guid"] for e in found.get("entities") or []]
        if not guids:
            return []
        body = requests.get(f"{self.url}/entity/bulk", params=[("guid", g) for g in guids], timeout=30).json()
        active = [as_the_connector_reads(e) for e in body["entities"] if e.get("status", "ACTIVE") == "ACTIVE"]
        return sorted(active, key=lambda e: (e["typeName"], e["attributes"]["qualifiedName"]))

    def keys(self) -> set[tuple[str, str]]:
        return {(e["typeName"], e["attributes"]["qualifiedName"]) for e in self.all_entities()}

    def dump(self) -> list[dict[str, Any]]:
        """All active entities without what changes on every write (times, versions) and without the catalog's
        internal relationship ids (a relationship dropped by one write and restored by the next gets a new one)."""
        return [
            _without_relationship_ids({k: v for k, v in entity.items() if k not in VOLATILE})
            for entity in self.all_entities()
        ]

    def entity(self, type_name: str, qualified_name: str) -> dict[str, Any]:
        response = requests.get(
            f"{self.url}/entity/uniqueAttribute/type/{type_name}",
            params={"attr:qualifiedName": qualified_name},
            timeout=10,
        )
        assert response.status_code == 200, (type_name, qualified_name, response.text)
        return as_the_connector_reads(response.json()["entity"])

    def lineage(self, guid: str, direction: str = "BOTH", depth: int = 3) -> set[tuple[str, str]]:
        """The lineage API's relations as (from qualifiedName, to qualifiedName)."""
        body = requests.get(
            f"{self.url}/lineage/{guid}", params={"direction": direction, "depth": depth}, timeout=10
        ).json()
        names = {guid: header["attributes"]["qualifiedName"] for guid, header in body["guidEntityMap"].items()}
        return {(names[r["fromEntityId"]], names[r["toEntityId"]]) for r in body["relations"]}


def refs(entity: dict[str, Any], attribute: str) -> list[str]:
    """qualifiedNames of an entity's relationship attribute (inputs, outputs, notebook...), sorted."""
    value = entity.get("relationshipAttributes", {}).get(attribute) or entity.get("attributes", {}).get(attribute)
    items = value if isinstance(value, list) else [value] if value else []
    return sorted(
        item["uniqueAttributes"]["qualifiedName"]
        if "uniqueAttributes" in item
        else item.get("displayText") or item["guid"]
        for item in items
    )


def _without_relationship_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_relationship_ids(v) for k, v in value.items() if k != "relationshipGuid"}
    if isinstance(value, list):
        return [_without_relationship_ids(v) for v in value]
    return value
