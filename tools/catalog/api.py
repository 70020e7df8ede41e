"""The Atlas v2 REST endpoints (mounted under /api/atlas/v2): thin handlers over the typedef catalog and the store."""

from __future__ import annotations

import json
import re
from typing import Any, Callable, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from olparser.jsontypes import JSON

from . import business_import, classifications, errors, glossary
from .business_metadata import update_behaviour
from .collections import DEFAULT_ACCOUNT_NAME, CollectionTree, Permissions, Placement
from .lineage import entity_lineage, next_page
from .mutations import (
    delete_entities,
    move_entities,
    partial_update,
    upsert_entities,
    write_business_attributes,
)
from .relationships import create_relationship, delete_relationship, get_relationship, update_relationship
from .search import autocomplete, basic_search, basic_search_parameters, purview_query, suggest
from .store import CatalogStore, Session
from .typedefs import TypeCatalog
from .typeregistry import KEY_BY_CATEGORY, typedefs_from_payload
from .views import full_header, render_entity

T = TypeVar("T")
_INDEXED_ATTR = re.compile(r"^attr_([^:]*):(.+)$")  # Atlas accepts any text as the index: attr_0:, attr_N:, attr_x:


async def read_json(request: Request) -> Any:
    body = await request.body()
    if not body:
        return None
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise errors.invalid_parameters(f"the request body is not valid JSON ({exc.msg} at char {exc.pos})") from None
    except UnicodeDecodeError as exc:  # bytes that are not UTF-8 (a ValueError without `msg` and `pos`)
        raise errors.invalid_parameters(f"the request body is not valid JSON (not UTF-8 at byte {exc.start})") from None


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "false").lower() == "true"


def _int_param(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise errors.invalid_lineage_params(name, raw) from None


def _category_filter(request: Request) -> str | None:
    """Atlas's `?type=entity|relationship|enum|struct|classification|business_metadata` typedef filter."""
    wanted = request.query_params.get("type")
    if not wanted:
        return None
    category = wanted.upper()
    if category not in KEY_BY_CATEGORY:
        raise errors.invalid_parameters(f"type must be one of {', '.join(k.lower() for k in KEY_BY_CATEGORY)}")
    return category


class AtlasApi:
    def __init__(
        self,
        store: CatalogStore,
        types: TypeCatalog,
        user: str,
        account_name: str = DEFAULT_ACCOUNT_NAME,
        permissions: Permissions | None = None,
    ) -> None:
        self.store = store
        self.types = types
        self.user = user
        self.account_name = account_name
        self.permissions = permissions

    def _placement(self, session: Session, request: Request | None = None) -> Placement:
        """Where this write puts entities (`?collectionId=` on entity creation), and who may write where."""
        target = request.query_params.get("collectionId") if request is not None else None
        return Placement(CollectionTree.of(session, self.account_name), self.permissions, self.user, target or None)

    def _writer(self, session: Session) -> classifications.Writer:
        """Who writes an entity's classifications or labels in this write, and where they may."""
        return classifications.Writer(session, self.types.registry, self.user, self._placement(session))

    async def _read(self, work: Callable[[Session], T]) -> T:
        def run() -> T:
            with self.store.read() as session:
                return work(session)

        return await run_in_threadpool(run)

    async def _write(self, work: Callable[[Session], T]) -> T:
        def run() -> T:
            with self.store.write() as session:
                return work(session)

        return await run_in_threadpool(run)

    def _entity_json(self, session: Session, guid: str, ignore_relationships: bool) -> JSON:
        row = session.entity(guid)
        if row is None:
            raise errors.instance_guid_not_found(guid)
        return render_entity(session, self.types.registry, row, ignore_relationships)

    def _unique_guid(self, session: Session, type_name: str, qualified_name: str) -> str | None:
        registry = self.types.registry
        row = session.active_entity([type_name, *registry.subtypes(type_name)], qualified_name)
        return row.guid if row else None

    def _unique_attribute(self, request: Request) -> tuple[str, str]:
        type_name = request.path_params["type_name"]
        if not self.types.registry.is_entity_type(type_name):
            raise errors.unknown_type(type_name)
        for key, value in request.query_params.items():
            if key.startswith("attr:"):
                if key != "attr:qualifiedName":
                    raise errors.unique_attribute_invalid(type_name, key[5:])
                return type_name, value
        raise errors.invalid_parameters("give the unique attribute as attr:qualifiedName=...")

    # --- types -----------------------------------------------------------------------------------------------
    async def typedefs(self, request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse(self.types.all(_category_filter(request)))
        payload = await read_json(request)
        if request.method == "POST":
            return JSONResponse(await run_in_threadpool(self.types.create, payload, self.user))
        if request.method == "PUT":
            return JSONResponse(await run_in_threadpool(self.types.update, payload, self.user))
        names = [d["name"] for d in typedefs_from_payload(payload)]
        await run_in_threadpool(self.types.delete, names)
        return Response(status_code=204)

    async def typedef_headers(self, request: Request) -> Response:
        return JSONResponse(self.types.headers(_category_filter(request)))

    async def typedef_by_name(self, request: Request) -> Response:
        category, name = request.path_params["category"], request.path_params["name"]
        if request.method == "DELETE":
            self.types.find(category, name=name)
            await run_in_threadpool(self.types.delete, [name])
            return Response(status_code=204)
        return JSONResponse(self.types.find(category, name=name))

    async def typedef_by_guid(self, request: Request) -> Response:
        return JSONResponse(self.types.find(request.path_params["category"], guid=request.path_params["guid"]))

    # --- entities --------------------------------------------------------------------------------------------
    async def entity_bulk(self, request: Request) -> Response:
        if request.method == "POST":
            return await self._upsert(request, await read_json(request))
        guids = request.query_params.getlist("guid")
        if not guids:
            raise errors.invalid_parameters("give at least one guid=...")
        if request.method == "DELETE":
            return JSONResponse(
                await self._write(
                    lambda s: delete_entities(s, guids, self.user, self._placement(s), self.types.registry)
                )
            )
        ignore = _flag(request, "ignoreRelationships")
        return JSONResponse(
            await self._read(
                lambda s: {
                    "referredEntities": {},  # AtlasEntitiesWithExtInfo, as Purview answers it
                    "entities": [self._entity_json(s, g, ignore) for g in dict.fromkeys(guids)],
                }
            )
        )

    async def _upsert(self, request: Request, body: object, single: bool = False) -> Response:
        """POST /entity (`single`) and /entity/bulk, with `?collectionId=` and `?businessAttributeUpdateBehavior=`."""
        registry = self.types.registry
        behaviour = update_behaviour(request.query_params.get("businessAttributeUpdateBehavior"))
        return JSONResponse(
            await self._write(
                lambda s: upsert_entities(
                    s, registry, body, self.user, self._placement(s, request), behaviour, full_created_headers=single
                )
            )
        )

    async def entity_single(self, request: Request) -> Response:
        body = await read_json(request)
        if not isinstance(body, dict) or not isinstance(body.get("entity"), dict):
            raise errors.invalid_parameters("the body must be an AtlasEntityWithExtInfo: {\"entity\": {...}}")
        return await self._upsert(request, body, single=True)

    async def entity_business_metadata(self, request: Request) -> Response:
        """POST|DELETE /entity/guid/{guid}/businessmetadata[/{name}]: 204 (Atlas's EntityREST, the Data Map API)."""
        guid, name = request.path_params["guid"], request.path_params.get("name")
        body = await read_json(request)
        if name is not None:  # the attributes of one business metadata: {"<attribute>": value}
            if body is not None and not isinstance(body, dict):
                raise errors.invalid_parameters('the body must be an object of attributes: {"<attribute>": value}')
            body = {name: body or {}}
        mode = "remove" if request.method == "DELETE" else "replace" if _flag(request, "isOverwrite") else "merge"
        registry = self.types.registry
        await self._write(
            lambda s: write_business_attributes(s, registry, guid, body, self.user, mode, self._placement(s))
        )
        return Response(status_code=204)

    async def entity_move(self, request: Request) -> Response:
        """POST /entity/moveTo?collectionId= (Data Map API): `{"entityGuids": [...]}` into that collection."""
        target = request.query_params.get("collectionId")
        if not target:
            raise errors.invalid_parameters("give the collection to move to as ?collectionId=<collection name>")
        body = await read_json(request)
        guids = body.get("entityGuids") if isinstance(body, dict) else None
        return JSONResponse(await self._write(lambda s: move_entities(s, guids, self._placement(s, request))))

    async def entity_by_guid(self, request: Request) -> Response:
        guid = request.path_params["guid"]
        if request.method == "DELETE":
            return JSONResponse(
                await self._write(
                    lambda s: delete_entities(s, [guid], self.user, self._placement(s), self.types.registry)
                )
            )
        if request.method == "PUT":  # partial update of one attribute: ?name=<attribute>, the body is its value
            name = request.query_params.get("name")
            if not name:
                raise errors.invalid_parameters("give the attribute to update as ?name=<attribute>")
            body = await request.body()
            value = await read_json(request) if body else None
            registry = self.types.registry

            def update(session: Session) -> JSON:
                row = session.entity(guid)
                if row is None:
                    raise errors.instance_guid_not_found(guid)
                entity_type = registry.entity_type(row.type_name)
                if entity_type is None or (name not in entity_type.attributes and name not in entity_type.references):
                    raise errors.unknown_attribute(name, row.type_name)
                entity = {"typeName": row.type_name, "guid": guid, "attributes": {name: value}}
                return partial_update(session, registry, guid, {"entity": entity}, self.user, self._placement(session))

            return JSONResponse(await self._write(update))
        ignore = _flag(request, "ignoreRelationships")
        return JSONResponse(
            await self._read(lambda s: {"entity": self._entity_json(s, guid, ignore), "referredEntities": {}})
        )

    def _found_guid(self, session: Session, type_name: str, qualified_name: str) -> str:
        guid = self._unique_guid(session, type_name, qualified_name)
        if guid is None:
            raise errors.instance_by_unique_attribute_not_found(type_name, qualified_name)
        return guid

    async def entity_by_unique_attribute(self, request: Request) -> Response:
        type_name, qualified_name = self._unique_attribute(request)
        ignore = _flag(request, "ignoreRelationships")
        found = self._found_guid
        if request.method == "DELETE":
            return JSONResponse(
                await self._write(
                    lambda s: delete_entities(
                        s, [found(s, type_name, qualified_name)], self.user, self._placement(s), self.types.registry
                    )
                )
            )
        if request.method == "PUT":
            body = await read_json(request)
            registry = self.types.registry
            return JSONResponse(
                await self._write(
                    lambda s: partial_update(
                        s, registry, found(s, type_name, qualified_name), body, self.user, self._placement(s)
                    )
                )
            )
        return JSONResponse(
            await self._read(
                lambda s: {
                    "entity": self._entity_json(s, found(s, type_name, qualified_name), ignore),
                    "referredEntities": {},
                }
            )
        )

    async def entity_header_by_unique_attribute(self, request: Request) -> Response:
        type_name, qualified_name = self._unique_attribute(request)
        return JSONResponse(
            await self._read(lambda s: self._header_json(s, self._found_guid(s, type_name, qualified_name)))
        )

    def _header_json(self, session: Session, guid: str) -> JSON:
        row = session.entity(guid)
        if row is None:
            raise errors.instance_guid_not_found(guid)
        return full_header(session, row)

    async def entity_header(self, request: Request) -> Response:
        guid = request.path_params["guid"]
        return JSONResponse(await self._read(lambda s: self._header_json(s, guid)))

    async def entities_by_unique_attributes(self, request: Request) -> Response:
        type_name = request.path_params["type_name"]
        if not self.types.registry.is_entity_type(type_name):
            raise errors.unknown_type(type_name)
        indexed = []
        for key, value in request.query_params.multi_items():
            match = _INDEXED_ATTR.match(key)
            if match:
                if match.group(2) != "qualifiedName":
                    raise errors.unique_attribute_invalid(type_name, match.group(2))
                indexed.append(value)
        if not indexed:
            raise errors.invalid_parameters("give unique attributes as attr_0:qualifiedName=...&attr_1:...")
        ignore = _flag(request, "ignoreRelationships")

        def lookup(session: Session) -> JSON:
            guids = [self._unique_guid(session, type_name, qn) for qn in indexed]
            found = [self._entity_json(session, g, ignore) for g in dict.fromkeys(g for g in guids if g)]
            return {"referredEntities": {}, "entities": found} if found else {}

        return JSONResponse(await self._read(lookup))

    # --- classifications and labels ---------------------------------------------------------------------------
    def _entity_guid(self, request: Request) -> Callable[[Session], str]:
        """How a request names its entity: /entity/guid/{guid}/… or /entity/uniqueAttribute/type/{t}/…?attr:…"""
        if "guid" in request.path_params:
            guid = request.path_params["guid"]
            return lambda session: guid
        type_name, qualified_name = self._unique_attribute(request)
        return lambda session: self._found_guid(session, type_name, qualified_name)

    async def entity_classifications(self, request: Request) -> Response:
        """GET (AtlasClassifications: own and propagated), POST (add) and PUT (update) …/classifications."""
        target = self._entity_guid(request)
        if request.method == "GET":

            def listed(session: Session) -> JSON:
                guid = target(session)
                row = session.entity(guid)
                if row is None:
                    raise errors.instance_guid_not_found(guid)
                found = classifications.of_entities(session, [row])[guid]
                return {
                    "list": found,
                    "startIndex": 0,
                    "pageSize": len(found),
                    "totalCount": len(found),
                    "sortType": "NONE",
                }

            return JSONResponse(await self._read(listed))
        body = await read_json(request)
        mode = "add" if request.method == "POST" else "update"
        await self._write(lambda s: classifications.write(self._writer(s), target(s), body, mode))
        return Response(status_code=204)

    async def entity_classification(self, request: Request) -> Response:
        """GET and DELETE …/classification/{name}: one classification of the entity (its own one first)."""
        target, name = self._entity_guid(request), request.path_params["name"]
        if request.method == "DELETE":
            await self._write(lambda s: classifications.remove(self._writer(s), target(s), name))
            return Response(status_code=204)

        def one(session: Session) -> JSON:
            guid = target(session)
            row = session.entity(guid)
            if row is None:
                raise errors.instance_guid_not_found(guid)
            found = [
                c for c in classifications.of_entities(session, [row])[guid] if c["typeName"].lower() == name.lower()
            ]
            if not found:
                raise errors.classification_error("unknown", name)
            return next((c for c in found if c["entityGuid"] == guid), found[0])

        return JSONResponse(await self._read(one))

    async def classify_entities(self, request: Request) -> Response:
        """POST /entity/bulk/classification: one classification on several entities."""
        body = await read_json(request)
        await self._write(lambda s: classifications.add_to_entities(self._writer(s), body))
        return Response(status_code=204)

    async def set_classifications(self, request: Request) -> Response:
        """POST /entity/bulk/setClassifications: what each entity's classifications became, one line per action."""
        body = await read_json(request)
        return JSONResponse(await self._write(lambda s: classifications.set_classifications(self._writer(s), body)))

    async def entity_labels(self, request: Request) -> Response:
        """POST (set), PUT (add) and DELETE (remove) …/labels: 204."""
        target, body = self._entity_guid(request), await read_json(request)
        mode = {"POST": "set", "PUT": "add", "DELETE": "remove"}[request.method]
        await self._write(lambda s: classifications.write_labels(self._writer(s), target(s), body, mode))
        return Response(status_code=204)

    # --- the glossary -------------------------------------------------------------------------------------------
    def _page(self, request: Request) -> tuple[int, int]:
        limit, offset = _int_param(request, "limit", -1), _int_param(request, "offset", 0)
        if offset < 0:
            raise errors.invalid_parameters("offset must be 0 or more")
        return limit, offset

    async def glossaries(self, request: Request) -> Response:
        """GET (list, ?limit=&offset=&sort=ASC|DESC) and POST (create) /glossary."""
        if request.method == "GET":
            limit, offset = self._page(request)
            descending = request.query_params.get("sort", "ASC").upper() == "DESC"
            return JSONResponse(await self._read(lambda s: glossary.list_glossaries(s, limit, offset, descending)))
        body = await read_json(request)
        return JSONResponse(await self._write(lambda s: glossary.create_glossary(self._writer(s), body)))

    async def _glossary_object(
        self,
        request: Request,
        get: Callable[[Session, str], JSON],
        update: Callable[[classifications.Writer, str, object], JSON],
        delete: Callable[[classifications.Writer, str], None],
    ) -> Response:
        """GET, PUT (200 with what it became) and DELETE (204) of the glossary or term `{guid}`."""
        guid = request.path_params["guid"]
        if request.method == "GET":
            return JSONResponse(await self._read(lambda s: get(s, guid)))
        if request.method == "DELETE":
            await self._write(lambda s: delete(self._writer(s), guid))
            return Response(status_code=204)
        body = await read_json(request)
        return JSONResponse(await self._write(lambda s: update(self._writer(s), guid, body)))

    async def glossary_by_guid(self, request: Request) -> Response:
        """/glossary/{guid}: deleting a glossary deletes its terms (none of which may be assigned)."""
        return await self._glossary_object(
            request, glossary.get_glossary, glossary.update_glossary, glossary.delete_glossary
        )

    async def glossary_terms(self, request: Request) -> Response:
        """GET /glossary/{guid}/terms and …/terms/headers."""
        guid, (limit, offset) = request.path_params["guid"], self._page(request)
        terms = await self._read(lambda s: glossary.list_terms(s, guid, limit, offset))
        if request.url.path.endswith("/headers"):
            terms = [
                {"termGuid": t["guid"], "displayText": t["name"], "relationGuid": t["anchor"]["relationGuid"]}
                for t in terms
            ]
        return JSONResponse(terms)

    async def create_terms(self, request: Request) -> Response:
        """POST /glossary/term (one) and /glossary/terms (a list)."""
        body = await read_json(request)
        if request.url.path.endswith("/terms"):
            if not isinstance(body, list) or not body:
                raise errors.bad_request("glossaryTerm(s) is null/empty")
            return JSONResponse(await self._write(lambda s: [glossary.create_term(self._writer(s), t) for t in body]))
        return JSONResponse(await self._write(lambda s: glossary.create_term(self._writer(s), body)))

    async def term_by_guid(self, request: Request) -> Response:
        """/glossary/term/{guid}: a term assigned to entities cannot be deleted."""
        return await self._glossary_object(request, glossary.get_term, glossary.update_term, glossary.delete_term)

    async def term_assignments(self, request: Request) -> Response:
        """GET, POST (assign) and DELETE (dissociate) /glossary/terms/{guid}/assignedEntities."""
        guid = request.path_params["guid"]
        if request.method == "GET":
            return JSONResponse(await self._read(lambda s: glossary.assigned_entities(s, guid)))
        body = await read_json(request)
        work = glossary.assign if request.method == "POST" else glossary.dissociate
        await self._write(lambda s: work(self._writer(s), guid, body))
        return Response(status_code=204)

    # --- lineage and search ----------------------------------------------------------------------------------
    async def lineage(self, request: Request) -> Response:
        guid = request.path_params["guid"]
        direction = request.query_params.get("direction", "BOTH")
        depth = _int_param(request, "depth", 3)
        width = _int_param(request, "width", -1)
        registry = self.types.registry
        return JSONResponse(await self._read(lambda s: entity_lineage(s, registry, guid, direction, depth, width)))

    async def lineage_by_unique_attribute(self, request: Request) -> Response:
        type_name, qualified_name = self._unique_attribute(request)
        direction = request.query_params.get("direction", "BOTH")
        depth = _int_param(request, "depth", 3)
        width = _int_param(request, "width", -1)
        registry = self.types.registry
        return JSONResponse(
            await self._read(
                lambda s: entity_lineage(
                    s, registry, self._found_guid(s, type_name, qualified_name), direction, depth, width
                )
            )
        )

    async def lineage_next(self, request: Request) -> Response:
        """GET /lineage/{guid}/next?direction=&offset=&limit= (the Data Map's lineage paging)."""
        guid, registry = request.path_params["guid"], self.types.registry
        direction = request.query_params.get("direction")
        if not direction:
            raise errors.invalid_lineage_params("direction", None)
        offset = _int_param(request, "offset", 0)
        limit = _int_param(request, "limit", 0) if request.query_params.get("limit") else None  # none: no paging
        return JSONResponse(await self._read(lambda s: next_page(s, registry, guid, direction, offset, limit)))

    async def business_metadata_template(self, request: Request) -> Response:
        """GET /entity/businessmetadata/import/template: the header line of an import file."""
        return Response(business_import.TEMPLATE, media_type="application/octet-stream")

    async def business_metadata_import(self, request: Request) -> Response:
        """POST /entity/businessmetadata/import (multipart/form-data, part `file`): a BulkImportResult."""
        name, content = business_import.uploaded_file(request.headers.get("content-type", ""), await request.body())
        return JSONResponse(await self._write(lambda s: business_import.import_file(self._writer(s), name, content)))

    async def search_basic(self, request: Request) -> Response:
        body = (
            await read_json(request)
            if request.method == "POST"
            else basic_search_parameters(request.query_params.multi_items())
        )
        registry = self.types.registry
        return JSONResponse(await self._read(lambda s: basic_search(s, registry, body)))

    async def search_suggest(self, request: Request) -> Response:
        body = await read_json(request)
        registry = self.types.registry
        return JSONResponse(await self._read(lambda s: suggest(s, registry, body)))

    async def search_autocomplete(self, request: Request) -> Response:
        body = await read_json(request)
        registry = self.types.registry
        return JSONResponse(await self._read(lambda s: autocomplete(s, registry, body)))

    # --- relationships -----------------------------------------------------------------------------------------
    async def relationship(self, request: Request) -> Response:
        body = await read_json(request)
        registry = self.types.registry
        work = create_relationship if request.method == "POST" else update_relationship
        return JSONResponse(await self._write(lambda s: work(s, registry, body, self.user)))

    async def relationship_by_guid(self, request: Request) -> Response:
        guid = request.path_params["guid"]
        if request.method == "DELETE":
            await self._write(lambda s: delete_relationship(s, guid, self.user, self.types.registry))
            return Response(status_code=204)
        extended = _flag(request, "extendedInfo")
        registry = self.types.registry
        return JSONResponse(await self._read(lambda s: get_relationship(s, registry, guid, extended)))

    async def search_query(self, request: Request) -> Response:
        body = await read_json(request)
        registry = self.types.registry
        return JSONResponse(await self._read(lambda s: purview_query(s, registry, body)))

    def router(self) -> Router:
        return Router(
            routes=[
                Route("/types/typedefs", self.typedefs, methods=["GET", "POST", "PUT", "DELETE"]),
                Route("/types/typedefs/headers", self.typedef_headers, methods=["GET"]),
                Route("/types/{category}/name/{name}", self.typedef_by_name, methods=["GET", "DELETE"]),
                Route("/types/{category}/guid/{guid}", self.typedef_by_guid, methods=["GET"]),
                Route("/entity/bulk", self.entity_bulk, methods=["GET", "POST", "DELETE"]),
                Route("/entity", self.entity_single, methods=["POST"]),
                Route("/entity/moveTo", self.entity_move, methods=["POST"]),
                Route("/entity/guid/{guid}", self.entity_by_guid, methods=["GET", "PUT", "DELETE"]),
                Route("/entity/guid/{guid}/header", self.entity_header, methods=["GET"]),
                Route("/entity/bulk/classification", self.classify_entities, methods=["POST"]),
                Route("/entity/bulk/setClassifications", self.set_classifications, methods=["POST"]),
                *[
                    route
                    for base in ("/entity/guid/{guid}", "/entity/uniqueAttribute/type/{type_name}")
                    for route in (
                        Route(f"{base}/classifications", self.entity_classifications, methods=["GET", "POST", "PUT"]),
                        Route(f"{base}/classification/{{name}}", self.entity_classification, methods=["GET", "DELETE"]),
                        Route(f"{base}/labels", self.entity_labels, methods=["POST", "PUT", "DELETE"]),
                    )
                ],
                Route(
                    "/entity/guid/{guid}/businessmetadata", self.entity_business_metadata, methods=["POST", "DELETE"]
                ),
                Route(
                    "/entity/guid/{guid}/businessmetadata/{name}",
                    self.entity_business_metadata,
                    methods=["POST", "DELETE"],
                ),
                Route(
                    "/entity/uniqueAttribute/type/{type_name}",
                    self.entity_by_unique_attribute,
                    methods=["GET", "PUT", "DELETE"],
                ),
                Route(
                    "/entity/uniqueAttribute/type/{type_name}/header",
                    self.entity_header_by_unique_attribute,
                    methods=["GET"],
                ),
                Route(
                    "/entity/bulk/uniqueAttribute/type/{type_name}", self.entities_by_unique_attributes, methods=["GET"]
                ),
                Route("/glossary", self.glossaries, methods=["GET", "POST"]),
                Route("/glossary/term", self.create_terms, methods=["POST"]),
                Route("/glossary/terms", self.create_terms, methods=["POST"]),
                Route("/glossary/term/{guid}", self.term_by_guid, methods=["GET", "PUT", "DELETE"]),
                Route(
                    "/glossary/terms/{guid}/assignedEntities", self.term_assignments, methods=["GET", "POST", "DELETE"]
                ),
                Route("/glossary/{guid}", self.glossary_by_guid, methods=["GET", "PUT", "DELETE"]),
                Route("/glossary/{guid}/terms", self.glossary_terms, methods=["GET"]),
                Route("/glossary/{guid}/terms/headers", self.glossary_terms, methods=["GET"]),
                Route("/lineage/uniqueAttribute/type/{type_name}", self.lineage_by_unique_attribute, methods=["GET"]),
                Route("/lineage/{guid}", self.lineage, methods=["GET"]),
                Route("/lineage/{guid}/next", self.lineage_next, methods=["GET"]),
                Route("/entity/businessmetadata/import/template", self.business_metadata_template, methods=["GET"]),
                Route("/entity/businessmetadata/import", self.business_metadata_import, methods=["POST"]),
                Route("/relationship", self.relationship, methods=["POST", "PUT"]),
                Route("/relationship/guid/{guid}", self.relationship_by_guid, methods=["GET", "DELETE"]),
                Route("/search/basic", self.search_basic, methods=["GET", "POST"]),
                Route("/search/query", self.search_query, methods=["POST"]),
                Route("/search/advanced", self.search_query, methods=["POST"]),
                Route("/search/suggest", self.search_suggest, methods=["POST"]),
                Route("/search/autocomplete", self.search_autocomplete, methods=["POST"]),
            ],
            redirect_slashes=False,
        )
