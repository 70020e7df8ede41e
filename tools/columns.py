"""`ol2purview columns QUALIFIED_NAME COLUMN`: where a column comes from and where it goes, across every process.

Works against any Atlas v2 endpoint or Purview through their public API only: it finds the dataset (by type and
qualifiedName, or by search), reads its dataset lineage (`GET /lineage/{guid}`), reads the processes in it
(`GET /entity/bulk?guid=`), and walks their column lineage with olparser.lineage.column_graph (columnLineageDetail
when present, else Purview's columnMapping). Exit codes: 0 answered, 1 catalog error, 2 usage, or a dataset or a
column the lineage does not know (with the nearest names, tools/suggest.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Protocol

import requests

from olparser.adapters.catalog import AtlasCatalogClient, CatalogRejected, CatalogUnavailable, make_atlas_client
from olparser.adapters.catalog.errors import CatalogHttpError
from olparser.jsontypes import JSON
from olparser.lineage.column_graph import DIRECTIONS, ColumnGraph, ColumnTrace, process_from_entity
from olparser.settings import Settings

from .catalog_options import add_target_arguments, catalog_target
from .suggest import catalog_dataset_names, offered

LINEAGE_DIRECTION = {"up": "INPUT", "down": "OUTPUT", "both": "BOTH"}
ENTITIES_PER_READ = 100
DEFAULT_DEPTH = 10


class NotFound(Exception):
    """The dataset is not in the catalog, or the name is ambiguous without --type."""


class LineageReader(Protocol):
    """What the command needs from a catalog: three public Atlas reads."""

    def find_dataset(self, qualified_name: str, type_name: str | None) -> JSON: ...

    def lineage(self, guid: str, direction: str, depth: int) -> JSON: ...

    def entities(self, guids: list[str]) -> list[JSON]: ...


@dataclass
class AtlasLineageReader:
    """LineageReader over the connector's Atlas client (Purview or any Atlas, with retries' error types)."""

    client: AtlasCatalogClient
    purview: bool

    def find_dataset(self, qualified_name: str, type_name: str | None) -> JSON:
        if type_name:
            found = self.client.find_entities(type_name, [qualified_name])
        else:
            found = [hit for hit in self._search(qualified_name) if hit.get("qualifiedName") == qualified_name]
        # A hit names its type (typeName, or entityType in a search answer).
        types = sorted({f.get("typeName") or f.get("entityType") for f in found})  # type: ignore[type-var]
        if not found:
            names = catalog_dataset_names(self.client) if not self.purview else []
            raise NotFound(
                f"no {type_name or 'entity'} with qualifiedName {qualified_name}{offered(qualified_name, names)}"
            )
        if len(found) > 1:
            raise NotFound(
                f"{qualified_name} names entities of several types ({', '.join(map(str, types))}): pick one with --type"
            )
        hit = found[0]
        return {"guid": hit.get("guid") or hit.get("id"), "typeName": types[0]}

    def _search(self, qualified_name: str) -> list[JSON]:
        """Entities whose qualifiedName may be this one: Purview's search/query, or Atlas's basic search."""
        if self.purview:
            base = self.client.endpoint_url.removesuffix("/atlas/v2")
            body = self.client._post_http(
                base + "/search/query",
                json={  # noqa: SLF001 - the client's own session
                    "keywords": None,
                    "limit": 50,
                    "filter": {"attributeName": "qualifiedName", "operator": "eq", "attributeValue": qualified_name},
                },
            ).body
            return list((body or {}).get("value") or [])
        body = self.client._post_http(
            self.client.endpoint_url + "/search/basic",
            json={  # noqa: SLF001
                "typeName": "DataSet",
                "query": qualified_name,
                "limit": 100,
                "excludeDeletedEntities": True,
            },
        ).body
        return [
            {**e, "qualifiedName": (e.get("attributes") or {}).get("qualifiedName")}
            for e in (body or {}).get("entities") or []
        ]

    def lineage(self, guid: str, direction: str, depth: int) -> JSON:
        return self.client.get_entity_lineage(guid, depth=depth, width=-1, direction=direction) or {}

    def entities(self, guids: list[str]) -> list[JSON]:
        found: list[JSON] = []
        for start in range(0, len(guids), ENTITIES_PER_READ):
            body = self.client.get_entity(
                guid=guids[start : start + ENTITIES_PER_READ], ignoreRelationships=True, minExtInfo=True
            )
            found += (body or {}).get("entities") or []
        return found


def column_trace(
    reader: LineageReader, qualified_name: str, column: str, type_name: str | None, direction: str, depth: int
) -> tuple[ColumnGraph, ColumnTrace]:
    """The column graph of the processes that the dataset's lineage reaches, walked from (dataset, column)."""
    dataset = reader.find_dataset(qualified_name, type_name)
    lineage = reader.lineage(dataset["guid"], LINEAGE_DIRECTION[direction], depth)
    guids = [g for g in lineage.get("guidEntityMap") or {} if g != dataset["guid"]]
    processes = [
        process_from_entity(e)
        for e in reader.entities(guids)
        if "inputs" in (e.get("attributes") or {}) or "outputs" in (e.get("attributes") or {})
    ]
    graph = ColumnGraph(processes)
    known = graph.columns_of(qualified_name)
    if known and column not in known:  # a misspelled column: say so, with the names meant, rather than answer nothing
        raise NotFound(f"no column lineage names column {column} of {qualified_name}{offered(column, known)}")
    return graph, graph.trace(qualified_name, column, direction, depth)


def render_text(graph: ColumnGraph, trace: ColumnTrace) -> str:
    """A person's view: one line per column edge, upstream first (farthest last), then downstream."""
    qualified_name, column = trace.root
    lines = [
        f"Column lineage of {qualified_name} . {column}  ({trace.direction}, "
        f"{'any depth' if not trace.depth else f'depth {trace.depth}'})"
    ]
    for title, sign in (("upstream", -1), ("downstream", 1)):
        if (sign < 0 and trace.direction == "down") or (sign > 0 and trace.direction == "up"):
            continue
        edges = [e for e in trace.edges if sign * trace.distances.get(e.target if sign > 0 else e.source, 0) > 0]
        edges.sort(key=lambda e: (abs(trace.distances[e.target if sign > 0 else e.source]), e.target, e.source))
        lines.append(f"{title}: {len(edges)} edge(s)")
        for e in edges:
            far = trace.distances[e.target if sign > 0 else e.source]
            process = graph.processes.get(e.process)
            via = process.name or process.qualified_name if process else e.process
            kind = " [indirect]" if e.indirect else ""
            whole = " (whole dataset)" if e.dataset_level else ""
            lines.append(
                f"  {far:+d}  {e.source[0]} . {e.source[1]}  --{e.label}-->  {e.target[0]} . "
                f"{e.target[1]}{whole}{kind}  via {via}"
            )
        if not edges:
            lines.append("  (none)")
    indirect = trace.indirect_only_datasets()
    if indirect:
        lines.append("datasets that influence it only indirectly: " + ", ".join(indirect))
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qualified_name", metavar="QUALIFIED_NAME", help="the dataset's qualifiedName")
    parser.add_argument(
        "column",
        metavar="COLUMN",
        help="the column name, as the lineage writes it (`*` and expressions such as `sum(x)` are names too)",
    )
    parser.add_argument("--type", dest="type_name", help="the dataset's type (default: found by search)")
    parser.add_argument("--direction", choices=DIRECTIONS, default="both", help="default: both")
    parser.add_argument(
        "--depth", type=int, default=DEFAULT_DEPTH, help=f"process hops to follow (default {DEFAULT_DEPTH})"
    )
    parser.add_argument("--json", action="store_true", help="print the graph as JSON (datasets, columns, edges)")
    parser.add_argument("--password", help="basic-auth password (default: ATLAS_PASSWORD, which `ps` does not show)")
    add_target_arguments(parser, catalog=True)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    if args.depth < 0:
        print("ol2purview columns: --depth must be 0 (no limit) or more", file=sys.stderr)
        return 2
    try:
        target = catalog_target(args, settings)
    except ValueError as exc:
        print(f"ol2purview columns: {exc}", file=sys.stderr)
        return 2
    client = make_atlas_client(target, timeout=settings.catalog_timeout_seconds)
    reader = AtlasLineageReader(client, purview=target.kind == "purview")
    try:
        graph, trace = column_trace(
            reader, args.qualified_name, args.column, args.type_name, args.direction, args.depth
        )
    except NotFound as exc:
        print(f"ol2purview columns: {exc}", file=sys.stderr)
        return 2
    except (CatalogHttpError, CatalogRejected, CatalogUnavailable, requests.RequestException) as exc:
        print(f"ol2purview columns: the catalog answered an error: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
    print(json.dumps(graph.trace_json(trace), indent=2) if args.json else render_text(graph, trace))
    return 0
