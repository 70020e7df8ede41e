"""The column graph (pure): edges from columnLineageDetail or columnMapping, transitive walks, cycles, `*`, expression
column names, indirect-only datasets, depth."""

from __future__ import annotations

import json

import pytest

from olparser.lineage.column_graph import (
    ColumnGraph,
    DatasetRef,
    ProcessColumns,
    Transformation,
    column_edges,
    process_from_entity,
)

BRONZE, SILVER, GOLD, CUSTOMERS = (
    "lake://bronze/orders",
    "lake://silver/orders",
    "lake://gold/sales",
    "lake://customers",
)


def detail(
    fields: dict[str, list[tuple[str, str, list[tuple[str, str]]]]],
    dataset: list[tuple[str, str, list[tuple[str, str]]]] = (),
) -> str:
    """columnLineageDetail as ol2purview writes it: sink column -> [(source qn, field, [(type, subtype)])]."""

    def inputs(items: list) -> list[dict]:
        return [
            {
                "field": f,
                "name": qn,
                "namespace": "lake",
                "qualifiedName": qn,
                "typeName": "t",
                "transformations": [{"type": t, "subtype": s} for t, s in transformations],
            }
            for qn, f, transformations in items
        ]

    return json.dumps(
        {
            "dataset": inputs(list(dataset)),
            "fields": [{"field": sink, "inputFields": inputs(items)} for sink, items in fields.items()],
        }
    )


def process(
    guid: str, inputs: list[str], output: str, lineage_detail: str | None = None, mapping: list | None = None
) -> ProcessColumns:
    return ProcessColumns(
        guid,
        f"proc://{guid}",
        "spark_process",
        guid,
        tuple(DatasetRef(q) for q in inputs),
        (DatasetRef(output),),
        json.dumps(mapping) if mapping is not None else None,
        lineage_detail,
    )


def chain() -> ColumnGraph:
    """bronze -> silver (IDENTITY, filtered on status) -> gold (SUM, joined with customers)."""
    silver = process(
        "silver_job",
        [BRONZE],
        SILVER,
        detail(
            {
                "amount": [(BRONZE, "amount", [("DIRECT", "IDENTITY")])],
                "order_id": [(BRONZE, "id", [("DIRECT", "IDENTITY")])],
            },
            dataset=[(BRONZE, "status", [("INDIRECT", "FILTER")])],
        ),
    )
    gold = process(
        "gold_job",
        [SILVER, CUSTOMERS],
        GOLD,
        detail(
            {
                "sum(amount)": [
                    (SILVER, "amount", [("DIRECT", "AGGREGATION")]),
                    (CUSTOMERS, "customer_id", [("INDIRECT", "JOIN")]),
                ],
                "country": [
                    (CUSTOMERS, "country", [("DIRECT", "IDENTITY")]),
                    (CUSTOMERS, "customer_id", [("INDIRECT", "JOIN")]),
                ],
            }
        ),
    )
    return ColumnGraph([silver, gold])


def edge_rows(graph: ColumnGraph, qualified_name: str, column: str, direction: str, depth: int = 0) -> list[tuple]:
    trace = graph.trace(qualified_name, column, direction, depth)
    return sorted((e.source, e.target, e.process, e.label, e.indirect, e.dataset_level) for e in trace.edges)


def test_upstream_through_two_hops_with_transformations() -> None:
    graph = chain()
    assert edge_rows(graph, GOLD, "sum(amount)", "up") == [
        ((BRONZE, "amount"), (SILVER, "amount"), "silver_job", "IDENTITY", False, False),
        ((BRONZE, "status"), (SILVER, "amount"), "silver_job", "INDIRECT FILTER", True, True),  # whole dataset
        ((CUSTOMERS, "customer_id"), (GOLD, "sum(amount)"), "gold_job", "INDIRECT JOIN", True, False),
        ((SILVER, "amount"), (GOLD, "sum(amount)"), "gold_job", "AGGREGATION", False, False),
    ]
    trace = graph.trace(GOLD, "sum(amount)", "up")
    assert trace.distances == {
        (GOLD, "sum(amount)"): 0,
        (SILVER, "amount"): -1,
        (CUSTOMERS, "customer_id"): -1,
        (BRONZE, "amount"): -2,
        (BRONZE, "status"): -2,
    }
    assert trace.indirect_only_datasets() == [CUSTOMERS]


def test_downstream_and_depth() -> None:
    graph = chain()
    assert edge_rows(graph, BRONZE, "amount", "down") == [
        ((BRONZE, "amount"), (SILVER, "amount"), "silver_job", "IDENTITY", False, False),
        ((SILVER, "amount"), (GOLD, "sum(amount)"), "gold_job", "AGGREGATION", False, False),
    ]
    assert edge_rows(graph, BRONZE, "amount", "down", depth=1) == [
        ((BRONZE, "amount"), (SILVER, "amount"), "silver_job", "IDENTITY", False, False)
    ]
    # a filter column influences every column of silver, and through them gold's sum
    status = graph.trace(BRONZE, "status", "down")
    assert sorted(status.distances.items()) == [((BRONZE, "status"), 0), ((GOLD, "sum(amount)"), 2), ((SILVER, "*"), 1)]


def test_columns_of_a_dataset_come_from_every_mapping_that_names_it() -> None:
    graph = chain()
    assert graph.columns_of(SILVER) == ["amount", "order_id"]
    assert graph.columns_of(BRONZE) == ["amount", "id", "status"]
    assert graph.columns_of(GOLD) == ["country", "sum(amount)"]


def test_cycles_end() -> None:
    a, b = "lake://a", "lake://b"
    graph = ColumnGraph(
        [
            process(
                "a_to_b",
                [a],
                b,
                mapping=[{"DatasetMapping": {"Source": a, "Sink": b}, "ColumnMapping": [{"Source": "x", "Sink": "x"}]}],
            ),
            process(
                "b_to_a",
                [b],
                a,
                mapping=[{"DatasetMapping": {"Source": b, "Sink": a}, "ColumnMapping": [{"Source": "x", "Sink": "x"}]}],
            ),
        ]
    )
    trace = graph.trace(a, "x", "both")
    assert trace.distances == {(a, "x"): 0, (b, "x"): -1}  # upstream first; the same column seen again stops
    assert sorted((e.source, e.target) for e in trace.edges) == [((a, "x"), (b, "x")), ((b, "x"), (a, "x"))]


def test_column_mapping_fallback_with_star_dataset_and_star_columns() -> None:
    src1, src2, out = "lake://in1", "lake://in2", "lake://out"
    copy = process(
        "copy",
        [src1, src2],
        out,
        mapping=[{"DatasetMapping": {"Source": "*", "Sink": out}, "ColumnMapping": [{"Source": "id", "Sink": "key"}]}],
    )
    passthrough = process(
        "select_star",
        [out],
        "lake://mirror",
        mapping=[
            {
                "DatasetMapping": {"Source": out, "Sink": "lake://mirror"},
                "ColumnMapping": [{"Source": "*", "Sink": "*"}],
            }
        ],
    )
    graph = ColumnGraph([copy, passthrough])
    assert edge_rows(graph, "lake://mirror", "key", "up") == [
        ((src1, "id"), (out, "key"), "copy", "DIRECT", False, False),
        ((src2, "id"), (out, "key"), "copy", "DIRECT", False, False),
        ((out, "key"), ("lake://mirror", "key"), "select_star", "DIRECT", False, False),
    ]


def test_detail_wins_over_mapping_and_bad_json_gives_no_edges() -> None:
    both = process(
        "p",
        [BRONZE],
        SILVER,
        detail({"a": [(BRONZE, "a", [("DIRECT", "TRANSFORMATION")])]}),
        mapping=[
            {"DatasetMapping": {"Source": BRONZE, "Sink": SILVER}, "ColumnMapping": [{"Source": "z", "Sink": "z"}]}
        ],
    )
    assert [(e.source, e.target, e.transformations) for e in column_edges(both)] == [
        ((BRONZE, "a"), (SILVER, "a"), (Transformation("DIRECT", "TRANSFORMATION"),))
    ]
    broken = process("q", [BRONZE], SILVER, "{not json", mapping=None)
    assert column_edges(broken) == []
    no_transformations = process(
        "r",
        [BRONZE],
        SILVER,
        json.dumps(
            {
                "fields": [
                    {
                        "field": "a",
                        "transformationType": "MASKED",
                        "inputFields": [{"field": "a", "qualifiedName": BRONZE}],
                    },
                    {"field": "b", "inputFields": [{"field": "b", "qualifiedName": BRONZE}, "junk", {"field": 3}]},
                ]
            }
        ),
    )
    assert [(e.target[1], e.label) for e in column_edges(no_transformations)] == [("a", "MASKED"), ("b", "DIRECT")]


def test_process_from_an_atlas_entity() -> None:
    entity = {
        "guid": "g1",
        "typeName": "databricks_process",
        "attributes": {
            "qualifiedName": "proc://1",
            "name": 42,
            "columnMapping": "[]",
            "columnLineageDetail": None,
            "inputs": [{"guid": "d1", "typeName": "hive_table", "uniqueAttributes": {"qualifiedName": "db.a@h"}}, "x"],
            "outputs": [{"guid": "d2", "typeName": "hive_table", "uniqueAttributes": {"qualifiedName": "db.b@h"}}],
        },
    }
    assert process_from_entity(entity) == ProcessColumns(
        "g1",
        "proc://1",
        "databricks_process",
        "",
        (DatasetRef("db.a@h", "hive_table", "d1"),),
        (DatasetRef("db.b@h", "hive_table", "d2"),),
        "[]",
        None,
    )


def test_trace_json_names_datasets_and_processes() -> None:
    graph = chain()
    answer = graph.trace_json(graph.trace(GOLD, "country", "up"))
    assert answer["datasets"] == [
        {
            "qualifiedName": CUSTOMERS,
            "typeName": "",
            "guid": "",
            "name": "",
            "distance": -1,
            "indirectOnly": False,
            "columns": ["country", "customer_id"],
        },
        {
            "qualifiedName": GOLD,
            "typeName": "",
            "guid": "",
            "name": "",
            "distance": 0,
            "indirectOnly": False,
            "columns": ["country"],
        },
    ]
    assert answer["processes"] == [
        {"guid": "gold_job", "qualifiedName": "proc://gold_job", "name": "gold_job", "typeName": "spark_process"}
    ]
    assert [(e["from"]["column"], e["label"], e["indirect"]) for e in answer["edges"]] == [
        ("country", "IDENTITY", False),
        ("customer_id", "INDIRECT JOIN", True),
    ]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="direction must be one of up, down, both, got 'sideways'"):
        chain().trace(GOLD, "x", "sideways")
    with pytest.raises(ValueError, match="depth must be 0"):
        chain().trace(GOLD, "x", "up", -1)
