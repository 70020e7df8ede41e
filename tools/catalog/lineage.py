"""`GET /lineage/{guid}`: breadth-first walk over process inputs/outputs, answered in Atlas's AtlasLineageInfo shape.

Edges go in the direction of data flow (dataset -> process -> dataset). Depth counts process hops: from a dataset,
depth 1 reaches the processes next to it and their datasets on the far side; from a process, depth 1 is the process
with its own inputs and outputs. Depth 0 means no limit. Deleted entities are left out.
"""

from __future__ import annotations

from olparser.jsontypes import JSON

from . import errors
from .store import EntityRow, RelationshipRow, Session
from .typeregistry import TypeRegistry
from .views import headers

INPUTS = "dataset_process_inputs"  # end1 Process.inputs, end2 DataSet
OUTPUTS = "process_dataset_outputs"  # end1 Process.outputs, end2 DataSet
DIRECTIONS = ("INPUT", "OUTPUT", "BOTH")


class _Walk:
    def __init__(self, session: Session, base: EntityRow) -> None:
        self.session = session
        self.nodes: dict[str, EntityRow] = {base.guid: base}
        self.relations: dict[str, JSON] = {}

    def _add(self, edges: list[RelationshipRow], near_end: int, flows_from_end: int) -> list[str]:
        """Keep the active far ends of `edges` (end 1 is the process); return those not seen before."""
        far = {r.end2_guid if near_end == 1 else r.end1_guid for r in edges}
        unseen = [g for g in far if g not in self.nodes]
        self.nodes.update({g: row for g, row in self.session.entities(unseen).items() if row.status == "ACTIVE"})
        for r in edges:
            if r.end1_guid in self.nodes and r.end2_guid in self.nodes:
                source, target = (r.end1_guid, r.end2_guid) if flows_from_end == 1 else (r.end2_guid, r.end1_guid)
                self.relations[r.guid] = {"fromEntityId": source, "toEntityId": target, "relationshipId": r.guid}
        return [g for g in unseen if g in self.nodes]

    def run(self, upstream: bool, base_is_process: bool, depth: int) -> None:
        # Upstream: dataset <-outputs- process <-inputs- dataset. Downstream: dataset -inputs-> process -outputs->.
        near, far = (OUTPUTS, INPUTS) if upstream else (INPUTS, OUTPUTS)
        base = next(iter(self.nodes))
        processes, datasets = ([base], []) if base_is_process else ([], [base])
        hops = 1 if base_is_process else 0
        while True:
            if processes:
                datasets = self._add(self.session.relationships_at(1, far, processes), 1, 2 if upstream else 1)
            if not datasets or (depth and hops >= depth):
                return
            hops += 1
            processes = self._add(self.session.relationships_at(2, near, datasets), 2, 1 if upstream else 2)
            if not processes:
                return


def _base(
    session: Session, registry: TypeRegistry, guid: str, direction: str, minimums: dict[str, tuple[int | None, int]]
) -> tuple[str, EntityRow, bool]:
    """(the direction upper-cased, the entity, whether it is a process) of a lineage request, checked as Atlas does:
    the direction, each number of `minimums` (name: its value, unchecked when None, and its minimum), the entity."""
    direction = direction.upper()
    if direction not in DIRECTIONS:
        raise errors.invalid_lineage_params("direction", direction)
    for name, (value, minimum) in minimums.items():
        if value is not None and value < minimum:
            raise errors.invalid_lineage_params(name, value)
    base = session.entity(guid)
    if base is None:
        raise errors.instance_guid_not_found(guid)
    is_process = registry.is_a(base.type_name, "Process")
    if not is_process and not registry.is_a(base.type_name, "DataSet"):
        raise errors.invalid_lineage_entity_type(guid, base.type_name)
    return direction, base, is_process


def _ways(direction: str) -> tuple[bool, ...]:
    """Which ways a direction walks: upstream (True), downstream (False) or both."""
    return (True,) if direction == "INPUT" else (False,) if direction == "OUTPUT" else (True, False)


def _info(session: Session, guid: str, direction: str, sizes: tuple[int, int, int], nodes: list[EntityRow]) -> JSON:
    """An AtlasLineageInfo without its relations: `sizes` (lineageDepth, lineageWidth, childrenCount), `nodes` as
    entity headers with their collection."""
    depth, width, children = sizes
    return {
        "baseEntityGuid": guid,
        "lineageDirection": direction,
        "lineageDepth": depth,
        "lineageWidth": width,
        "childrenCount": children,
        "guidEntityMap": {
            row.guid: {**header, "collectionId": row.extra.get("collectionId")}
            for row, header in zip(nodes, headers(session, nodes), strict=True)
        },
        "parentRelations": [],
        "widthCounts": {},
    }


def entity_lineage(
    session: Session, registry: TypeRegistry, guid: str, direction: str = "BOTH", depth: int = 3, width: int = -1
) -> JSON:
    direction, base, is_process = _base(session, registry, guid, direction, {"depth": (depth, 0)})
    nodes: dict[str, EntityRow] = {}
    relations: dict[str, JSON] = {}
    for upstream in _ways(direction):
        walk = _Walk(session, base)
        walk.run(upstream, is_process, depth)
        nodes.update(walk.nodes)
        relations.update(walk.relations)
    return {
        **_info(session, guid, direction, (depth, width, -1), list(nodes.values())),
        "relations": list(relations.values()),
    }


def next_page(
    session: Session, registry: TypeRegistry, guid: str, direction: str, offset: int = 0, limit: int | None = None
) -> JSON:
    """`GET /lineage/{guid}/next` (the Data Map's lineage paging): the entity's immediate neighbours in `direction`
    (a dataset's processes, a process's datasets), `limit` of them from `offset` (no limit: all of them, as the spec
    says by default), ordered by name; `childrenCount` is how many it has in all, `lineageWidth` how many this page
    holds."""
    bounds = {"offset": (offset, 0), "limit": (limit, 1)}
    direction, base, is_process = _base(session, registry, guid, direction, bounds)
    edges: list[tuple[RelationshipRow, str, str, str]] = []  # (relationship, neighbour, from, to)
    for upstream in _ways(direction):
        if is_process:  # its inputs upstream, its outputs downstream
            for r in session.relationships_at(1, INPUTS if upstream else OUTPUTS, [guid]):
                edges.append((r, r.end2_guid, *((r.end2_guid, guid) if upstream else (guid, r.end2_guid))))
        else:  # the processes that write it upstream, those that read it downstream
            for r in session.relationships_at(2, OUTPUTS if upstream else INPUTS, [guid]):
                edges.append((r, r.end1_guid, *((r.end1_guid, guid) if upstream else (guid, r.end1_guid))))
    rows = session.entities({neighbour for _, neighbour, _, _ in edges})
    active = sorted(
        (e for e in edges if e[1] in rows and rows[e[1]].status == "ACTIVE"),
        key=lambda e: ((rows[e[1]].name or "").lower(), rows[e[1]].qualified_name),
    )
    neighbours = list(dict.fromkeys(e[1] for e in active))
    page = neighbours[offset:] if limit is None else neighbours[offset : offset + limit]
    return {
        **_info(session, guid, direction, (1, len(page), len(neighbours)), [base, *(rows[g] for g in page)]),
        "relations": [
            {"fromEntityId": source, "toEntityId": target, "relationshipId": r.guid}
            for r, neighbour, source, target in active
            if neighbour in page
        ],
    }
