"""A boundary fake of the catalog for the runner's unit tests: the uploader's two calls with Atlas's semantics kept
where the runner depends on them (an update keeps attributes it leaves out; an existing scanner-owned dataset is not
rewritten; deleting a dataset deletes its columns). Each upload with something to write costs 1 call, each delete 1.
The end-to-end tests run the same runner against the embedded catalog over HTTP."""

from __future__ import annotations

import copy
import threading
from typing import Any, Callable, Iterable

from olparser.lineage.plan import DeleteReport, UploadReport

Key = tuple[str, str]


def _key(entity: dict[str, Any]) -> Key:
    return entity["typeName"], entity["attributes"]["qualifiedName"]


def _refs(value: Any) -> Any:
    """Object ids as (typeName, qualifiedName); placeholder guids dropped."""
    if isinstance(value, dict) and "uniqueAttributes" in value:
        return value["typeName"], value["uniqueAttributes"]["qualifiedName"]
    if isinstance(value, list):
        return [_refs(v) for v in value]
    return value


class Rejected(Exception):
    """What the uploader raises for a 4xx (CatalogRejected), with Atlas's error code."""

    def __init__(self, error_code: str) -> None:
        super().__init__(error_code)
        self.error_code = error_code


def _references(plan) -> set[Key]:
    found: set[Key] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if "uniqueAttributes" in value and "typeName" in value:
                found.add((value["typeName"], value["uniqueAttributes"]["qualifiedName"]))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for entity in plan.entities:
        walk(entity.get("attributes"))
    return found


class FakeCatalog:
    def __init__(self) -> None:
        self.entities: dict[Key, dict[str, Any]] = {}
        self.calls = 0
        self.uploads: list[Any] = []
        self.fail_deletes = 0  # the next N deletes raise
        self.during_upload: Callable[[], None] | None = None  # runs inside the next upload (a concurrent writer)
        self.missing: set[Key] = set()  # referenced entities that are not there (an upload naming one fails)
        self._lock = threading.RLock()  # one request at a time, as a server would apply them

    def upload(self, plan, *, refresh: bool = True) -> UploadReport:
        hook, self.during_upload = self.during_upload, None
        if hook is not None:
            hook()
        with self._lock:
            return self._upload(plan)

    def _upload(self, plan) -> UploadReport:
        self.calls += 1
        self.uploads.append(plan)
        if self.missing & _references(plan):  # a reference to an entity that is not there: Atlas's 404
            raise Rejected("ATLAS-404-00-00A")
        created = tuple(_key(e) for e in (*plan.external_datasets, *plan.entities) if _key(e) not in self.entities)
        for entity in plan.external_datasets:
            self.entities.setdefault(
                _key(entity), {"typeName": entity["typeName"], "attributes": _refs(copy.deepcopy(entity["attributes"]))}
            )
        for entity in plan.entities:
            stored = self.entities.setdefault(_key(entity), {"typeName": entity["typeName"], "attributes": {}})
            stored["attributes"].update({k: _refs(v) for k, v in entity["attributes"].items()})
            if entity.get("relationshipAttributes"):
                stored["relationshipAttributes"] = {k: _refs(v) for k, v in entity["relationshipAttributes"].items()}
        return UploadReport(calls=1, created=created)

    def delete(self, keys: Iterable[Key]) -> DeleteReport:
        with self._lock:
            return self._delete(keys)

    def _delete(self, keys: Iterable[Key]) -> DeleteReport:
        self.calls += 1
        if self.fail_deletes:
            self.fail_deletes -= 1
            raise ConnectionError("catalog down")
        keys = set(keys)
        for key in list(self.entities):
            parent = self.entities[key].get("relationshipAttributes", {}).get("dataset")
            if key in keys or (key[0] == "openlineage_column" and parent in keys):
                del self.entities[key]
        return DeleteReport(calls=1)

    def state(self) -> dict[Key, dict[str, Any]]:
        """Everything held, comparable between two catalogs."""
        return copy.deepcopy(self.entities)

    def keys(self, type_name: str | None = None) -> list[Key]:
        return sorted(k for k in self.entities if type_name is None or k[0] == type_name)
