"""Column-level lineage across processes: which columns feed a column, and which it feeds, transitively.

Pure: plain data in, plain data out, no I/O. The lineage page's server route (which reads the embedded catalog),
`ol2purview columns` (which reads any Atlas or Purview through its public API) and the run history's lineage in a
time window (olparser.history, one `ProcessColumns` per run of a process) all turn processes into `ProcessColumns`
and ask a `ColumnGraph`.

Where the edges come from, per process:
- `columnLineageDetail` (written by ol2purview, a JSON string
  `{"dataset": [input fields affecting the whole output], "fields": [{"field": sink column, "inputFields": [{"field",
  "qualifiedName", "transformations": [{"type", "subtype", ...}], ...}]}]}`) when present and readable: every
  DIRECT and INDIRECT dependency with its transformations; `dataset` entries become edges to the whole output
  (column `*`), shown as indirect influences.
- otherwise Purview's `columnMapping` (`[{"DatasetMapping": {"Source", "Sink"}, "ColumnMapping": [{"Source",
  "Sink"}]}]`, as other tools write it): DIRECT edges without a subtype. A dataset `Source` of `*` means every input.

Column names are opaque text (`sum(x)`, `a.b`, spaces): matched exactly. The column `*` stands for every column of
its dataset: an edge into `(D, *)` feeds every column of D; `(S, *) -> (D, *)` passes each column through under its
own name. A walk visits each (dataset, column) once per direction, so cycles end; depth counts process hops.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from olparser.jsontypes import JSON

ALL_COLUMNS = "*"
DIRECTIONS = ("up", "down", "both")


@dataclass(frozen=True)
class DatasetRef:
    qualified_name: str
    type_name: str = ""
    guid: str = ""
    name: str = ""


@dataclass(frozen=True)
class ProcessColumns:
    """What one process says about columns (its attributes as stored in the catalog)."""

    guid: str
    qualified_name: str
    type_name: str
    name: str
    inputs: tuple[DatasetRef, ...] = ()
    outputs: tuple[DatasetRef, ...] = ()
    column_mapping: str | None = None
    column_lineage_detail: str | None = None


@dataclass(frozen=True)
class Transformation:
    type: str  # DIRECT or INDIRECT
    subtype: str = ""  # IDENTITY, TRANSFORMATION, AGGREGATION; JOIN, FILTER, GROUP_BY, SORT, WINDOW, CONDITIONAL
    description: str = ""
    masking: bool = False

    @property
    def label(self) -> str:
        if self.type == "DIRECT":
            text = self.subtype or "DIRECT"
        else:
            text = f"{self.type} {self.subtype}".strip()
        return f"{text} (masked)" if self.masking else text

    def to_json(self) -> JSON:
        out: JSON = {"type": self.type, "subtype": self.subtype}
        if self.description:
            out["description"] = self.description
        if self.masking:
            out["masking"] = True
        return out


DIRECT = Transformation("DIRECT")


@dataclass(frozen=True)
class ColumnEdge:
    source: tuple[str, str]  # (dataset qualifiedName, column)
    target: tuple[str, str]
    process: str  # the process guid
    transformations: tuple[Transformation, ...]
    dataset_level: bool = False  # from the detail's `dataset` list: influences the whole target dataset

    @property
    def indirect(self) -> bool:
        return self.dataset_level or all(t.type != "DIRECT" for t in self.transformations)

    @property
    def label(self) -> str:
        """The transformations, direct ones first: `AGGREGATION`, `IDENTITY, INDIRECT JOIN`."""
        ordered = sorted(self.transformations, key=lambda t: t.type != "DIRECT")
        return ", ".join(t.label for t in ordered)

    def to_json(self) -> JSON:
        return {
            "from": {"dataset": self.source[0], "column": self.source[1]},
            "to": {"dataset": self.target[0], "column": self.target[1]},
            "process": self.process,
            "transformations": [t.to_json() for t in self.transformations],
            "label": self.label,
            "indirect": self.indirect,
            "datasetLevel": self.dataset_level,
        }


# --- reading processes ---------------------------------------------------------------------------------------------
def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _dataset_refs(value: object) -> tuple[DatasetRef, ...]:
    refs = []
    for item in value if isinstance(value, list) else ():
        if not isinstance(item, dict):
            continue
        unique = item.get("uniqueAttributes")
        qualified_name = unique.get("qualifiedName") if isinstance(unique, dict) else None
        if isinstance(qualified_name, str):
            refs.append(
                DatasetRef(
                    qualified_name, _text(item.get("typeName")), _text(item.get("guid")), _text(item.get("displayText"))
                )
            )
    return tuple(refs)


def process_from_entity(entity: Mapping[str, Any]) -> ProcessColumns:
    """A process from an Atlas entity as `GET /entity/guid` or `/entity/bulk` answers it."""
    attributes = entity.get("attributes")
    if not isinstance(attributes, dict):
        attributes = {}
    mapping, detail = attributes.get("columnMapping"), attributes.get("columnLineageDetail")
    return ProcessColumns(
        guid=_text(entity.get("guid")),
        qualified_name=_text(attributes.get("qualifiedName")),
        type_name=_text(entity.get("typeName")),
        name=_text(attributes.get("name")),
        inputs=_dataset_refs(attributes.get("inputs")),
        outputs=_dataset_refs(attributes.get("outputs")),
        column_mapping=mapping if isinstance(mapping, str) else None,
        column_lineage_detail=detail if isinstance(detail, str) else None,
    )


def _parse(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _transformations(items: object, legacy: object) -> tuple[Transformation, ...]:
    found = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and isinstance(item.get("type"), str):
            found.append(
                Transformation(
                    item["type"].upper(),
                    _text(item.get("subtype")).upper(),
                    _text(item.get("description")),
                    item.get("masking") is True,
                )
            )
    if found:
        return tuple(found)
    if isinstance(legacy, str) and legacy:  # the deprecated field-level transformationType (IDENTITY, MASKED...)
        return (Transformation("DIRECT", legacy.upper()),)
    return (DIRECT,)  # an input field without transformations is a direct dependency (older producers)


def _detail_edges(process: ProcessColumns, detail: Mapping[str, Any]) -> list[ColumnEdge]:
    edges: list[ColumnEdge] = []
    sinks = [o.qualified_name for o in process.outputs]
    for entry in detail.get("fields") or ():
        if not isinstance(entry, dict) or not isinstance(entry.get("field"), str):
            continue
        for item in entry.get("inputFields") or ():
            if not isinstance(item, dict):
                continue
            source_qn, source_field = item.get("qualifiedName"), item.get("field")
            if not isinstance(source_qn, str) or not isinstance(source_field, str):
                continue
            transformations = _transformations(item.get("transformations"), entry.get("transformationType"))
            edges += [
                ColumnEdge((source_qn, source_field), (sink, entry["field"]), process.guid, transformations)
                for sink in sinks
            ]
    for item in detail.get("dataset") or ():
        if isinstance(item, dict) and isinstance(item.get("qualifiedName"), str) and isinstance(item.get("field"), str):
            transformations = _transformations(item.get("transformations"), None)
            edges += [
                ColumnEdge(
                    (item["qualifiedName"], item["field"]),
                    (sink, ALL_COLUMNS),
                    process.guid,
                    transformations,
                    dataset_level=True,
                )
                for sink in sinks
            ]
    return edges


def _mapping_edges(process: ProcessColumns, mapping: object) -> list[ColumnEdge]:
    edges: list[ColumnEdge] = []
    for pair in mapping if isinstance(mapping, list) else ():
        if not isinstance(pair, dict) or not isinstance(pair.get("DatasetMapping"), dict):
            continue
        source, sink = pair["DatasetMapping"].get("Source"), pair["DatasetMapping"].get("Sink")
        if not isinstance(source, str) or not isinstance(sink, str):
            continue
        sources = [i.qualified_name for i in process.inputs] if source == ALL_COLUMNS else [source]
        for column in pair.get("ColumnMapping") or ():
            if (
                isinstance(column, dict)
                and isinstance(column.get("Source"), str)
                and isinstance(column.get("Sink"), str)
            ):
                edges += [
                    ColumnEdge((s, column["Source"]), (sink, column["Sink"]), process.guid, (DIRECT,)) for s in sources
                ]
    return edges


def column_edges(process: ProcessColumns) -> list[ColumnEdge]:
    """The column edges of one process: from its detail when readable, else from its columnMapping."""
    detail = _parse(process.column_lineage_detail)
    if isinstance(detail, dict) and isinstance(detail.get("fields"), list):
        return _detail_edges(process, detail)
    return _mapping_edges(process, _parse(process.column_mapping))


# --- the graph -----------------------------------------------------------------------------------------------------
@dataclass
class ColumnTrace:
    """The result of a walk: columns with their signed distance (negative upstream), the edges and the parties."""

    root: tuple[str, str]
    direction: str
    depth: int
    distances: dict[tuple[str, str], int] = field(default_factory=dict)
    edges: list[ColumnEdge] = field(default_factory=list)

    def indirect_only_datasets(self) -> list[str]:
        """Datasets (other than the root's) that reach the root only through indirect edges."""
        touching: dict[str, bool] = {}
        for edge in self.edges:
            for qualified_name in (edge.source[0], edge.target[0]):
                if qualified_name != self.root[0]:
                    touching[qualified_name] = touching.get(qualified_name, True) and edge.indirect
        return sorted(qn for qn, indirect in touching.items() if indirect)


class ColumnGraph:
    """Column edges of many processes, indexed both ways."""

    def __init__(self, processes: Iterable[ProcessColumns]) -> None:
        self.processes: dict[str, ProcessColumns] = {}
        self.datasets: dict[str, DatasetRef] = {}
        self.edges: list[ColumnEdge] = []
        self._into: dict[tuple[str, str], list[ColumnEdge]] = {}
        self._into_dataset: dict[str, list[ColumnEdge]] = {}
        self._from: dict[tuple[str, str], list[ColumnEdge]] = {}
        self._from_dataset: dict[str, list[ColumnEdge]] = {}
        for process in processes:
            self.add(process)

    def add(self, process: ProcessColumns) -> None:
        if process.guid in self.processes:
            return
        self.processes[process.guid] = process
        for ref in (*process.inputs, *process.outputs):
            known = self.datasets.get(ref.qualified_name)
            if known is None or (not known.guid and ref.guid):
                self.datasets[ref.qualified_name] = ref
        for edge in column_edges(process):
            self.edges.append(edge)
            self._into.setdefault(edge.target, []).append(edge)
            self._into_dataset.setdefault(edge.target[0], []).append(edge)
            self._from.setdefault(edge.source, []).append(edge)
            self._from_dataset.setdefault(edge.source[0], []).append(edge)

    def columns_of(self, qualified_name: str) -> list[str]:
        """Every column of the dataset that an edge names (as source or target), `*` left out."""
        names = {e.target[1] for e in self._into_dataset.get(qualified_name, ())}
        names |= {e.source[1] for e in self._from_dataset.get(qualified_name, ())}
        names.discard(ALL_COLUMNS)
        return sorted(names)

    def _step(self, node: tuple[str, str], upstream: bool) -> Iterable[tuple[ColumnEdge, tuple[str, str]]]:
        """The edges one hop from `node` (into it when `upstream`, out of it otherwise) and the node each reaches."""
        dataset, column = node
        by_node, by_dataset = (self._into, self._into_dataset) if upstream else (self._from, self._from_dataset)

        def far(edge: ColumnEdge) -> tuple[str, str]:
            return edge.source if upstream else edge.target

        if column == ALL_COLUMNS:  # every column of the dataset
            for edge in by_dataset.get(dataset, ()):
                yield edge, far(edge)
            return
        for edge in by_node.get(node, ()):
            yield edge, far(edge)
        for edge in by_node.get((dataset, ALL_COLUMNS), ()):  # edges of the whole dataset reach this column too
            end = far(edge)
            passes_through = end[1] == ALL_COLUMNS and not edge.dataset_level  # `*` -> `*`: the same column name
            yield edge, (end[0], column) if passes_through else end

    def trace(self, dataset: str, column: str, direction: str = "both", depth: int = 0) -> ColumnTrace:
        """Columns upstream and/or downstream of (dataset, column), at most `depth` process hops (0: no limit)."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
        if depth < 0:
            raise ValueError(f"depth must be 0 (no limit) or more, got {depth}")
        root = (dataset, column)
        trace = ColumnTrace(root, direction, depth, {root: 0})
        seen_edges: set[tuple[int, tuple[str, str], tuple[str, str]]] = set()
        for sign in (-1, 1):
            if (sign < 0 and direction == "down") or (sign > 0 and direction == "up"):
                continue
            visited = {root}
            queue = deque([(root, 0)])
            while queue:
                node, hops = queue.popleft()
                if depth and hops >= depth:
                    continue
                for edge, reached in self._step(node, upstream=sign < 0):
                    source, target = (reached, node) if sign < 0 else (node, reached)
                    key = (id(edge), source, target)
                    if key not in seen_edges:
                        seen_edges.add(key)
                        trace.edges.append(
                            ColumnEdge(source, target, edge.process, edge.transformations, edge.dataset_level)
                        )
                    if reached not in visited:
                        visited.add(reached)
                        trace.distances.setdefault(reached, sign * (hops + 1))
                        queue.append((reached, hops + 1))
        return trace

    def trace_json(self, trace: ColumnTrace) -> JSON:
        """The trace with the datasets and processes it involves, as the page and `columns --json` show it."""
        columns_by_dataset: dict[str, list[str]] = {}
        for qualified_name, column in trace.distances:
            columns_by_dataset.setdefault(qualified_name, []).append(column)
        indirect_only = set(trace.indirect_only_datasets())
        datasets = []
        for qualified_name, columns in columns_by_dataset.items():
            ref = self.datasets.get(qualified_name, DatasetRef(qualified_name))
            distance = min((trace.distances[(qualified_name, c)] for c in columns), key=abs)
            datasets.append(
                {
                    "qualifiedName": qualified_name,
                    "typeName": ref.type_name,
                    "guid": ref.guid,
                    "name": ref.name,
                    "distance": distance,
                    "indirectOnly": qualified_name in indirect_only,
                    "columns": sorted(columns),
                }
            )
        datasets.sort(key=lambda d: (d["distance"], d["qualifiedName"]))
        process_guids = sorted({e.process for e in trace.edges})
        return {
            "root": {"dataset": trace.root[0], "column": trace.root[1]},
            "direction": trace.direction,
            "depth": trace.depth,
            "datasets": datasets,
            "columns": [
                {"dataset": qn, "column": c, "distance": d}
                for (qn, c), d in sorted(trace.distances.items(), key=lambda item: (item[1], item[0]))
            ],
            "processes": [
                {
                    "guid": g,
                    "qualifiedName": self.processes[g].qualified_name,
                    "name": self.processes[g].name,
                    "typeName": self.processes[g].type_name,
                }
                for g in process_guids
                if g in self.processes
            ],
            "edges": [e.to_json() for e in sorted(trace.edges, key=lambda e: _edge_order(trace, e))],
        }


def _edge_order(trace: ColumnTrace, edge: ColumnEdge) -> tuple[int, tuple[str, str], tuple[str, str], str, str]:
    """Nearest hops first, then by target and source."""
    hops = max(abs(trace.distances.get(edge.source, 0)), abs(trace.distances.get(edge.target, 0)))
    return (hops, edge.target, edge.source, edge.process, edge.label)
