"""Purview's collections on the embedded catalog: the account API, where each entity is, and who may write there.

Account API (`api-version=2019-11-01-preview`, at the root and under `/account/`, as Purview serves it):
`GET /account/collections` lists them (`{"value": [...], "count"}`), `GET|PUT|DELETE /account/collections/{name}`.
The root collection is named after the catalog's account name and always exists; a collection's id is its `name`,
`friendlyName` defaults to it, `parentCollection.referenceName` is required (except for the root) and must exist.
A collection that holds entities or child collections cannot be deleted (409).

Entities (Data Map API 2023-09-01): `POST .../entity[/bulk]?collectionId=` creates new entities in that collection
and moves the existing ones the request sends there ("the collection where entities will be moved to"); without
it new entities land in the root and existing ones stay. `POST /datamap/api/entity/moveTo?collectionId=` moves
`{"entityGuids": [...]}`. Every entity answer carries `collectionId` (read-only: a `collectionId` in a request body
is ignored). The discovery query filters on `{"collectionId": name}`.

Permissions: with `curator_of` set (`ol2purview catalog --curator-of finance,lineage-team`), the caller is a Data
Curator of those collections only (inherited by their sub-collections, as in Purview); writing an entity elsewhere —
creating, updating, deleting or moving it out of or into a collection — answers 403 with Atlas's UNAUTHORIZED_ACCESS
body, rolling the whole request back. `None` (the default) allows everything.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Iterable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from olparser.jsontypes import JSON

from . import errors
from .account import account_error, api_version_problem
from .store import CatalogStore, Session, now_ms

DEFAULT_ACCOUNT_NAME = "ol2purview"
COLLECTIONS_API_VERSIONS = ("2019-11-01-preview", "2022-03-01-preview")
_SETTING = "collections"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,35}$")


class Permissions:
    """Which collections the caller may write (None: all). Changed at run time by the control endpoint (a grant)."""

    def __init__(self, curator_of: Iterable[str] | None = None) -> None:
        self._lock = threading.Lock()
        self._curator_of = None if curator_of is None else frozenset(curator_of)

    @property
    def curator_of(self) -> frozenset[str] | None:
        with self._lock:
            return self._curator_of

    def set(self, curator_of: Iterable[str] | None) -> None:
        with self._lock:
            self._curator_of = None if curator_of is None else frozenset(curator_of)


def parse_curator_of(text: str | None) -> list[str] | None:
    """`--curator-of finance,lineage-team` -> the names; empty or None -> None (everything allowed)."""
    if not text:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    for name in names:
        if not _NAME.match(name):
            raise ValueError(f"--curator-of: {name!r} is not a collection name (letters, digits, '-', '_')")
    return names


class CollectionTree:
    """The account's collections as stored (plain JSON by name), with the root; read inside a store session."""

    def __init__(self, account_name: str, stored: dict[str, JSON] | None) -> None:
        self.root = account_name
        self.by_name: dict[str, JSON] = {account_name: _root_collection(account_name), **(stored or {})}

    @classmethod
    def of(cls, session: Session, account_name: str) -> "CollectionTree":
        return cls(account_name, session.account_setting(_SETTING))

    def save(self, session: Session) -> None:
        session.save_account_setting(_SETTING, {k: v for k, v in self.by_name.items() if k != self.root})

    def ancestors(self, name: str) -> list[str]:
        """`name` and every collection above it, up to the root."""
        chain: list[str] = []
        while name and name not in chain and name in self.by_name:
            chain.append(name)
            name = ((self.by_name[name].get("parentCollection") or {}).get("referenceName")) or ""
        return chain

    def require(self, name: str) -> str:
        if name not in self.by_name:
            raise errors.AtlasError(404, "ATLAS-404-00-010", f"collection {name} is not found in account {self.root}")
        return name


def check_write(tree: CollectionTree, permissions: Permissions | None, collection: str, user: str) -> None:
    """403 unless the caller is a Data Curator of `collection` or a collection above it."""
    allowed = permissions.curator_of if permissions is not None else None
    if allowed is None or set(tree.ancestors(collection)) & allowed:
        return
    raise errors.forbidden(
        f"{user} is not authorized to perform write on collection {collection} of account {tree.root}"
    )


def _root_collection(account_name: str) -> JSON:
    return {
        "name": account_name,
        "friendlyName": account_name,
        "description": "The root collection.",
        "collectionProvisioningState": "Succeeded",
    }


class CollectionsApi:
    """The collections routes of the account API."""

    def __init__(self, store: CatalogStore, account_name: str) -> None:
        self.store = store
        self.account_name = account_name

    def _tree(self) -> CollectionTree:
        with self.store.read() as session:
            return CollectionTree.of(session, self.account_name)

    async def collections(self, request: Request) -> Response:
        refused = api_version_problem(request, COLLECTIONS_API_VERSIONS)
        if refused is not None:
            return refused
        tree = await run_in_threadpool(self._tree)
        values = list(tree.by_name.values())
        return JSONResponse({"value": values, "count": len(values)})

    async def collection(self, request: Request) -> Response:
        refused = api_version_problem(request, COLLECTIONS_API_VERSIONS)
        if refused is not None:
            return refused
        name = request.path_params["name"]
        if request.method == "GET":
            tree = await run_in_threadpool(self._tree)
            if name not in tree.by_name:
                return account_error(404, "CollectionNotFound", f"Collection {name} is not found.")
            return JSONResponse(tree.by_name[name])
        if request.method == "DELETE":
            return await run_in_threadpool(self._delete, name)
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError as exc:
            return account_error(400, "BadRequest", f"the body is not valid JSON ({exc})")
        return await run_in_threadpool(self._put, name, body)

    def _put(self, name: str, body: object) -> Response:
        if not _NAME.match(name):
            return account_error(
                400,
                "InvalidCollectionName",
                f"Collection name {name!r} is invalid: 1-36 letters, "
                "digits, '-' or '_', starting with a letter or digit.",
            )
        if not isinstance(body, dict):
            return account_error(400, "BadRequest", "the body must be a JSON object (friendlyName, parentCollection)")
        with self.store.write() as session:
            tree = CollectionTree.of(session, self.account_name)
            if name == tree.root:
                return account_error(400, "BadRequest", "the root collection cannot be changed")
            parent = (
                (body.get("parentCollection") or {}).get("referenceName")
                if isinstance(body.get("parentCollection"), dict)
                else None
            )
            if not isinstance(parent, str) or not parent:
                return account_error(
                    400,
                    "BadRequest",
                    "parentCollection.referenceName is required (the name of "
                    f"the parent collection; the root is {tree.root})",
                )
            if parent not in tree.by_name:
                return account_error(400, "ParentCollectionNotFound", f"Parent collection {parent} is not found.")
            if name in tree.ancestors(parent):
                return account_error(400, "BadRequest", f"collection {name} cannot be placed under itself")
            friendly = body.get("friendlyName")
            if friendly is not None and not isinstance(friendly, str):
                return account_error(400, "BadRequest", "friendlyName must be a string")
            previous = tree.by_name.get(name) or {}
            when = now_ms()
            stored = {
                "name": name,
                "friendlyName": friendly or previous.get("friendlyName") or name,
                "description": body.get("description", previous.get("description")),
                "parentCollection": {"type": "CollectionReference", "referenceName": parent},
                "collectionProvisioningState": "Succeeded",
                "systemData": {
                    "createdAt": (previous.get("systemData") or {}).get("createdAt", when),
                    "lastModifiedAt": when,
                },
            }
            tree.by_name[name] = stored
            tree.save(session)
        return JSONResponse(stored)

    def _delete(self, name: str) -> Response:
        with self.store.write() as session:
            tree = CollectionTree.of(session, self.account_name)
            if name == tree.root:
                return account_error(400, "BadRequest", "the root collection cannot be deleted")
            if name not in tree.by_name:
                return Response(status_code=204)
            children = sorted(
                n for n, c in tree.by_name.items() if ((c.get("parentCollection") or {}).get("referenceName")) == name
            )
            if children:
                return account_error(
                    409, "CollectionNotEmpty", f"Collection {name} has child collections: {', '.join(children)}."
                )
            if session.count_entities_in_collection(name):
                return account_error(409, "CollectionNotEmpty", f"Collection {name} still holds assets.")
            del tree.by_name[name]
            tree.save(session)
        return Response(status_code=204)

    def routes(self, prefixes: Iterable[str]) -> list[Route]:
        routes: list[Route] = []
        for prefix in prefixes:
            routes += [
                Route(prefix + "/collections", self.collections, methods=["GET"]),
                Route(prefix + "/collections/{name}", self.collection, methods=["GET", "PUT", "DELETE"]),
            ]
        return routes

    def router(self, prefixes: Iterable[str]) -> Router:
        return Router(routes=self.routes(prefixes), redirect_slashes=False)


class Placement:
    """Where one write request puts entities, and the permission check for each entity it writes."""

    def __init__(
        self, tree: CollectionTree, permissions: Permissions | None, user: str, target: str | None = None
    ) -> None:
        self.tree = tree
        self.permissions = permissions
        self.user = user
        self.target = tree.require(target) if target else None

    def of_new(self) -> str:
        """The collection of an entity the request creates (checked)."""
        collection = self.target or self.tree.root
        check_write(self.tree, self.permissions, collection, self.user)
        return collection

    def of_existing(self, current: str | None) -> str:
        """The collection of an entity the request writes: where it is, or the request's target (both checked)."""
        current = current or self.tree.root
        check_write(self.tree, self.permissions, current, self.user)
        if self.target and self.target != current:
            check_write(self.tree, self.permissions, self.target, self.user)
            return self.target
        return current
