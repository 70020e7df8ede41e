"""Builders for catalog unit tests: a store with its type catalog, and entity JSON for blobs and processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.catalog.mutations import upsert_entities
from tools.catalog.store import CatalogStore
from tools.catalog.typedefs import TypeCatalog
from tools.catalog.views import render_entity

BLOB = "https://acct.blob.core.windows.net/raw"


class Catalog:
    def __init__(self, path: Path) -> None:
        self.store = CatalogStore(path)
        self.types = TypeCatalog(self.store)

    def upsert(self, *entities: dict, referred: dict | None = None) -> dict:
        body: dict[str, Any] = {"entities": list(entities)}
        if referred is not None:
            body["referredEntities"] = referred
        with self.store.write() as session:
            return upsert_entities(session, self.types.registry, body, "tester")

    def get(self, guid: str) -> dict:
        with self.store.read() as session:
            row = session.entity(guid)
            assert row is not None
            return render_entity(session, self.types.registry, row)


def blob(guid: str, name: str, **attributes: Any) -> dict:
    return {
        "typeName": "azure_blob_path",
        "guid": guid,
        "attributes": {"qualifiedName": f"{BLOB}/{name}", "name": name, **attributes},
    }


def process(guid: str, name: str, inputs: list | None, outputs: list | None, where: str = "attributes") -> dict:
    entity: dict[str, Any] = {
        "typeName": "Process",
        "guid": guid,
        "attributes": {"qualifiedName": f"proc://{name}", "name": name},
    }
    refs = {k: v for k, v in (("inputs", inputs), ("outputs", outputs)) if v is not None}
    if where == "attributes":
        entity["attributes"].update(refs)
    else:
        entity["relationshipAttributes"] = refs
    return entity
