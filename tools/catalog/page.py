"""The lineage page's own read-only routes (not part of the Atlas API, so not counted as catalog calls):

- `GET /_ol2purview/page/search?q=TEXT` — assets by name or qualifiedName, columns grouped under their dataset;
- `GET /_ol2purview/page/columns?guid=G` — a dataset's columns, from its schema (column entities) and from the
  column lineage of the processes next to it;
- `GET /_ol2purview/page/column-lineage?guid=G&column=C[&direction=up|down|both][&depth=N]` — the column graph
  (olparser.lineage.column_graph) over the processes that the dataset lineage reaches;
- `GET /_ol2purview/page/governance?guid=G` — an entity's classifications (its own and those propagated to it, each
  with the entity it comes from), labels and glossary terms (each with its glossary);
- `GET /_ol2purview/page/history/status`, `.../history/lineage?qualifiedName=&since=&until=&direction=&depth=`,
  `.../history/runs/{runId}` — the run history of the running `ol2purview serve`, asked by this server with the
  function key (tools/catalog/history_link.py), so that the page can draw lineage in a time window.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from olparser.jsontypes import JSON
from olparser.lineage.column_graph import DIRECTIONS, ColumnGraph, DatasetRef, ProcessColumns

from . import classifications, errors, glossary
from .history_link import HistoryLink
from .lineage import INPUTS, OUTPUTS, entity_lineage
from .store import CatalogStore, EntityRow, Session
from .typedefs import TypeCatalog
from .typeregistry import TypeRegistry
from .views import display_text, entity_header, labels_of, meanings_of

T = TypeVar("T")
MAX_SEARCH_HITS = 200
_LINEAGE_DIRECTION = {"up": "INPUT", "down": "OUTPUT", "both": "BOTH"}


def _ref(row: EntityRow) -> DatasetRef:
    return DatasetRef(row.qualified_name, row.type_name, row.guid, row.name or "")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


PAGE_BUSINESS_METADATA = "ol2purview"  # the business metadata whose attributes the page shows as attributes


def shown_attributes(row: EntityRow) -> JSON:
    """An entity's attributes as the page reads them: its attributes, plus what it keeps as business attributes of
    the group `ol2purview` (the run metadata of a process on a type the connector must not change), never over a
    real attribute. static/app.js `shownAttributes` does the same for the details panel."""
    kept = (row.extra.get("businessAttributes") or {}).get(PAGE_BUSINESS_METADATA) or {}
    return {**kept, **row.attributes}


def processes_near(
    session: Session, registry: TypeRegistry, guid: str, direction: str, depth: int
) -> list[ProcessColumns]:
    """The processes that the dataset lineage of `guid` reaches, with their inputs, outputs and column lineage."""
    lineage = entity_lineage(session, registry, guid, _LINEAGE_DIRECTION[direction], depth)
    rows = session.entities(list(lineage["guidEntityMap"]))
    guids = [g for g, row in rows.items() if registry.is_a(row.type_name, "Process")]
    ends: dict[str, dict[str, list[str]]] = {g: {INPUTS: [], OUTPUTS: []} for g in guids}
    for relationship_type in (INPUTS, OUTPUTS):
        for r in session.relationships_at(1, relationship_type, guids):
            ends[r.end1_guid][relationship_type].append(r.end2_guid)
    others = session.entities({g for e in ends.values() for side in e.values() for g in side} - set(rows))
    rows.update(others)
    processes = []
    for g in guids:
        row = rows[g]
        attributes = shown_attributes(row)
        active = {
            side: tuple(_ref(rows[d]) for d in ends[g][side] if d in rows and rows[d].status == "ACTIVE")
            for side in (INPUTS, OUTPUTS)
        }
        processes.append(
            ProcessColumns(
                g,
                row.qualified_name,
                row.type_name,
                row.name or "",
                active[INPUTS],
                active[OUTPUTS],
                _text(attributes.get("columnMapping")),
                _text(attributes.get("columnLineageDetail")),
            )
        )
    return processes


def _dataset(session: Session, registry: TypeRegistry, guid: str) -> EntityRow:
    row = session.entity(guid)
    if row is None:
        raise errors.instance_guid_not_found(guid)
    if not registry.is_a(row.type_name, "DataSet"):
        raise errors.invalid_parameters(f"{guid} is a {row.type_name}, not a dataset: columns belong to datasets")
    return row


def schema_columns(session: Session, registry: TypeRegistry, row: EntityRow) -> list[str]:
    """Names of the column entities the dataset contains (its `columns` relationship attribute)."""
    entity_type = registry.entity_type(row.type_name)
    if entity_type is None or "columns" not in entity_type.references:
        return []
    reference = entity_type.references["columns"][0]
    linked = session.relationships_at(reference.end, reference.relationship_type, [row.guid])
    others = session.entities([r.end2_guid if reference.end == 1 else r.end1_guid for r in linked])
    return sorted({o.name or o.qualified_name for o in others.values() if o.status == "ACTIVE"})


def dataset_columns(session: Session, registry: TypeRegistry, guid: str) -> JSON:
    row = _dataset(session, registry, guid)
    from_schema = schema_columns(session, registry, row)
    graph = ColumnGraph(processes_near(session, registry, guid, "both", 1))
    from_lineage = graph.columns_of(row.qualified_name)
    columns = [
        {"name": name, "inSchema": name in from_schema, "inLineage": name in from_lineage}
        for name in sorted(set(from_schema) | set(from_lineage))
    ]
    return {"dataset": entity_header(row), "columns": columns}


def column_lineage(
    session: Session, registry: TypeRegistry, guid: str, column: str, direction: str, depth: int
) -> JSON:
    if direction not in DIRECTIONS:
        raise errors.invalid_parameters(f"direction must be one of {', '.join(DIRECTIONS)}, got '{direction}'")
    if depth < 0:
        raise errors.invalid_parameters(f"depth must be 0 (no limit) or more, got {depth}")
    row = _dataset(session, registry, guid)
    graph = ColumnGraph(processes_near(session, registry, guid, direction, depth))
    return graph.trace_json(graph.trace(row.qualified_name, column, direction, depth))


def _parent(session: Session, registry: TypeRegistry, row: EntityRow) -> EntityRow | None:
    """The dataset a column entity belongs to: the container end of one of its relationships."""
    for r in session.relationships_of(row.guid):
        definition = registry.get(r.type_name) or {}
        for mine, other, other_guid in ((2, 1, r.end1_guid), (1, 2, r.end2_guid)):
            if (r.end2_guid if mine == 2 else r.end1_guid) != row.guid:
                continue
            if (definition.get(f"endDef{other}") or {}).get("isContainer"):
                parent = session.entity(other_guid)
                if parent is not None and parent.status == "ACTIVE":
                    return parent
    return None


def grouped_search(session: Session, registry: TypeRegistry, text: str) -> JSON:
    """Assets matching `text`; a matching column is listed under its dataset (the dataset listed even when only its
    columns match)."""
    rows = session.search(None, text.strip().strip("*") or None)
    groups: dict[str, JSON] = {}
    for row in rows[:MAX_SEARCH_HITS]:
        parent = _parent(session, registry, row) if "column" in row.type_name.lower() else None
        if parent is None:
            groups.setdefault(row.guid, {"entity": entity_header(row), "columns": []})
            continue
        group = groups.setdefault(parent.guid, {"entity": entity_header(parent), "columns": [], "matchedBy": "column"})
        group["columns"].append(entity_header(row))
    return {"count": len(rows), "shown": min(len(rows), MAX_SEARCH_HITS), "groups": list(groups.values())}


def governance(session: Session, guid: str) -> JSON:
    """What governs an entity, as the details panel shows it: its classifications (its own first, then those
    propagated to it, each with `from`, the entity it comes from), its labels, and the glossary terms assigned to it
    (each with its glossary's name)."""
    row = session.entity(guid)
    if row is None:
        raise errors.instance_guid_not_found(guid)
    carried = classifications.of_entities(session, [row])[guid]
    sources = session.entities({c["entityGuid"] for c in carried} - {guid})
    meanings = meanings_of(session, [guid])[guid]
    terms = session.entities([m["termGuid"] for m in meanings])

    def source(c: JSON) -> JSON | None:
        found = sources.get(c["entityGuid"])
        if found is None:
            return None
        return {"guid": found.guid, "typeName": found.type_name, "name": display_text(found)}

    def glossary_name(term_guid: str) -> str | None:
        anchor = glossary.anchor_of(session, terms[term_guid]) if term_guid in terms else None
        return anchor[1].name if anchor else None

    return {
        "classifications": [
            {"typeName": c["typeName"], "attributes": c.get("attributes") or {}, "from": source(c)} for c in carried
        ],
        "labels": labels_of(row),
        "terms": [
            {"guid": m["termGuid"], "name": m["displayText"], "glossary": glossary_name(m["termGuid"])}
            for m in meanings
        ],
    }


def _int(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name) or ""
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise errors.invalid_parameters(f"'{name}' must be an integer, got '{raw}'") from None


def _required(request: Request, name: str) -> str:
    value = request.query_params.get(name)
    if not value:
        raise errors.invalid_parameters(f"give ?{name}=...")
    return value


def history_routes(link: HistoryLink | None) -> list[Route]:
    """The run history's routes (503 saying why when there is no link or no running serve)."""

    async def status(request: Request) -> Response:
        if link is None:
            return JSONResponse({"available": False, "reason": "this catalog was started without a data folder"})
        return JSONResponse(await run_in_threadpool(link.status))

    async def lineage(request: Request) -> Response:
        params = dict(request.query_params)
        found = await run_in_threadpool(link.lineage, params) if link else (503, {"errorMessage": "no run history"})
        return JSONResponse(found[1], status_code=found[0])

    async def run(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        found = await run_in_threadpool(link.run, run_id) if link else (503, {"errorMessage": "no run history"})
        return JSONResponse(found[1], status_code=found[0])

    return [
        Route("/_ol2purview/page/history/status", status, methods=["GET"]),
        Route("/_ol2purview/page/history/lineage", lineage, methods=["GET"]),
        Route("/_ol2purview/page/history/runs/{run_id}", run, methods=["GET"]),
    ]


def page_routes(store: CatalogStore, types: TypeCatalog) -> list[Route]:
    async def read(work: Callable[[Session, TypeRegistry], T]) -> T:
        registry = types.registry

        def run() -> T:
            with store.read() as session:
                return work(session, registry)

        return await run_in_threadpool(run)

    async def search(request: Request) -> Response:
        text = request.query_params.get("q", "")
        return JSONResponse(await read(lambda s, r: grouped_search(s, r, text)))

    async def columns(request: Request) -> Response:
        guid = _required(request, "guid")
        return JSONResponse(await read(lambda s, r: dataset_columns(s, r, guid)))

    async def lineage(request: Request) -> Response:
        guid, column = _required(request, "guid"), _required(request, "column")
        direction = request.query_params.get("direction", "both")
        depth = _int(request, "depth", 0)
        return JSONResponse(await read(lambda s, r: column_lineage(s, r, guid, column, direction, depth)))

    async def governed(request: Request) -> Response:
        guid = _required(request, "guid")
        return JSONResponse(await read(lambda s, r: governance(s, guid)))

    return [
        Route("/_ol2purview/page/search", search, methods=["GET"]),
        Route("/_ol2purview/page/columns", columns, methods=["GET"]),
        Route("/_ol2purview/page/column-lineage", lineage, methods=["GET"]),
        Route("/_ol2purview/page/governance", governed, methods=["GET"]),
    ]
