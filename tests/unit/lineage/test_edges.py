"""No false edges and temporary datasets (olparser/lineage/edges.py, build_lineage): each process lists the inputs
its output derives from; temporary datasets are never entities and pass their writers' inputs on.

Spec sources cited below are files of the OpenLineage repository (snapshot of 2026-08-20, commit 8f02abf):
ColumnLineageDatasetFacet.json (`fields` line 13, `inputFields` line 19, dataset-wide `dataset` line 40),
LineageFacet.json (`LineageDatasetFacet` line 5, its `inputs` line 15, `LineageJobFacet.entries` line 43,
`LineageDatasetEntry` line 66, its `inputs` line 83), DatasetTypeDatasetFacet.json (`subType` line 18),
ParentRunFacet.json (`run.runId` line 8), website/docs/spec/examples.md ("Job-to-Job lineage": `inmemory://` outputs
at lines 255 and 495, the `parent` facet at line 220, `JOB_OUTPUT`/`TEMPORARY` at lines 186-187) and
website/docs/spec/naming.md line 55 (`inmemory://`, "In-memory (temporary datasets)").
"""

from __future__ import annotations

import json

from olparser.lineage import LineageOptions, build_lineage
from olparser.lineage.edges import declared_names, is_temporary, temporary_scope, temporary_writes, upstream_inputs
from olparser.runs.model import DatasetFacts, RunSnapshot
from tests.support.fake_engine import FakeEngine

LAKE = "abfss://lake@acct.dfs.core.windows.net"
ORDERS, CUSTOMERS, A, B = "/raw/orders", "/raw/customers", "/gold/a", "/gold/b"
QN = "https://acct.dfs.core.windows.net/lake"
PARENT = "6c1b3f42-0000-4000-8000-000000000001"
# examples.md lines 257-262: the temporary dataset's datasetType facet
TEMPORARY_TYPE = {"datasetType": {"datasetType": "JOB_OUTPUT", "subType": "TEMPORARY"}}


def _field(name: str, field: str, namespace: str = LAKE) -> dict:
    # ColumnLineageDatasetFacet.json line 19: an input field is {namespace, name, field, transformations}
    return {
        "namespace": namespace,
        "name": name,
        "field": field,
        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
    }


def _column_lineage(**fields: list[dict]) -> dict:
    # ColumnLineageDatasetFacet.json line 13: `fields` maps each output column to its inputFields
    return {"columnLineage": {"fields": {column: {"inputFields": inputs} for column, inputs in fields.items()}}}


def _run(
    inputs: list[DatasetFacts],
    outputs: list[DatasetFacts],
    *,
    run_id: str = "r1",
    job: str = "job",
    job_facets: dict | None = None,
    parent: str | None = PARENT,
) -> RunSnapshot:
    # ParentRunFacet.json line 8: parent.run.runId
    run_facets = {"parent": {"run": {"runId": parent}, "job": {"namespace": "ns", "name": "app"}}} if parent else {}
    return RunSnapshot(
        run_id=run_id,
        job_namespace="ns",
        job_name=job,
        event_type="COMPLETE",
        event_time="2026-08-20T10:00:00Z",
        producer="test",
        run_facets=run_facets,
        job_facets=job_facets or {},
        inputs=tuple(sorted(inputs, key=lambda d: (d.namespace, d.name))),
        outputs=tuple(sorted(outputs, key=lambda d: (d.namespace, d.name))),
    )


def _edges(run: RunSnapshot, upstream: dict | None = None) -> dict[str, list[str]]:
    """Each process's output qualifiedName -> its input qualifiedNames."""
    plan = build_lineage(run, FakeEngine(), LineageOptions(), upstream=upstream)
    by_guid = {e["guid"]: e["attributes"]["qualifiedName"] for e in (*plan.entities, *plan.external_datasets)}
    found = {}
    for process in plan.entities:
        if "lastRunId" in process["attributes"]:
            attributes = process["attributes"]
            [output] = attributes["outputs"]
            found[output["uniqueAttributes"]["qualifiedName"]] = sorted(
                i["uniqueAttributes"]["qualifiedName"] for i in attributes["inputs"]
            )
    assert by_guid  # the plan has entities
    return found


def _qn(path: str) -> str:
    return f"{QN}{path}"


def _all_qualified_names(run: RunSnapshot, upstream: dict | None = None) -> set[str]:
    plan = build_lineage(run, FakeEngine(), LineageOptions(), upstream=upstream)
    return {e["attributes"]["qualifiedName"] for e in (*plan.entities, *plan.external_datasets)}


# --- no false edges -------------------------------------------------------------------------------------------------
def test_two_outputs_with_disjoint_column_lineage_list_only_their_own_inputs():
    run = _run(
        [DatasetFacts(LAKE, ORDERS), DatasetFacts(LAKE, CUSTOMERS)],
        [
            DatasetFacts(LAKE, A, _column_lineage(id=[_field(ORDERS, "id")])),
            DatasetFacts(LAKE, B, _column_lineage(name=[_field(CUSTOMERS, "name")])),
        ],
    )
    assert _edges(run) == {_qn(A): [_qn(ORDERS)], _qn(B): [_qn(CUSTOMERS)]}


def test_an_input_no_output_names_stays_on_every_output():
    run = _run(
        [DatasetFacts(LAKE, ORDERS), DatasetFacts(LAKE, CUSTOMERS), DatasetFacts(LAKE, "/raw/rates")],
        [
            DatasetFacts(LAKE, A, _column_lineage(id=[_field(ORDERS, "id")])),
            DatasetFacts(LAKE, B, _column_lineage(name=[_field(CUSTOMERS, "name")])),
        ],
    )
    assert _edges(run) == {_qn(A): [_qn(ORDERS), _qn("/raw/rates")], _qn(B): [_qn(CUSTOMERS), _qn("/raw/rates")]}


def test_an_output_without_column_lineage_keeps_every_input():
    # customers is named by no output's lineage: it stays on a (which names orders) too
    run = _run(
        [DatasetFacts(LAKE, ORDERS), DatasetFacts(LAKE, CUSTOMERS), DatasetFacts(LAKE, "/raw/rates")],
        [
            DatasetFacts(LAKE, A, _column_lineage(id=[_field(ORDERS, "id")])),
            DatasetFacts(LAKE, B, _column_lineage(r=[_field("/raw/rates", "r")])),
            DatasetFacts(LAKE, "/gold/c"),
        ],
    )
    assert _edges(run) == {
        _qn(A): [_qn(CUSTOMERS), _qn(ORDERS)],
        _qn(B): [_qn(CUSTOMERS), _qn("/raw/rates")],
        _qn("/gold/c"): [_qn(CUSTOMERS), _qn(ORDERS), _qn("/raw/rates")],
    }


def test_no_column_lineage_anywhere_is_as_before():
    run = _run(
        [DatasetFacts(LAKE, ORDERS), DatasetFacts(LAKE, CUSTOMERS)], [DatasetFacts(LAKE, A), DatasetFacts(LAKE, B)]
    )
    assert _edges(run) == {_qn(A): [_qn(CUSTOMERS), _qn(ORDERS)], _qn(B): [_qn(CUSTOMERS), _qn(ORDERS)]}


def test_the_dataset_wide_list_of_facet_1_2_0_names_an_input_too():
    # ColumnLineageDatasetFacet.json line 40: `dataset`, input fields that affect the whole output (a filter, a join)
    facet = _column_lineage(id=[_field(ORDERS, "id")])
    facet["columnLineage"]["dataset"] = [_field(CUSTOMERS, "country")]
    run = _run(
        [DatasetFacts(LAKE, ORDERS), DatasetFacts(LAKE, CUSTOMERS), DatasetFacts(LAKE, "/raw/rates")],
        [DatasetFacts(LAKE, A, facet), DatasetFacts(LAKE, B, _column_lineage(rate=[_field("/raw/rates", "rate")]))],
    )
    assert _edges(run) == {_qn(A): [_qn(CUSTOMERS), _qn(ORDERS)], _qn(B): [_qn("/raw/rates")]}


def test_column_mappings_are_unchanged_by_narrowing():
    out_a = DatasetFacts(LAKE, A, _column_lineage(id=[_field(ORDERS, "id")]))
    narrowed = build_lineage(
        _run(
            [DatasetFacts(LAKE, ORDERS), DatasetFacts(LAKE, CUSTOMERS)],
            [out_a, DatasetFacts(LAKE, B, _column_lineage(n=[_field(CUSTOMERS, "n")]))],
        ),
        FakeEngine(),
        LineageOptions(),
    )
    alone = build_lineage(_run([DatasetFacts(LAKE, ORDERS)], [out_a]), FakeEngine(), LineageOptions())

    def mapping(plan, output):
        return next(
            e["attributes"]["columnMapping"]
            for e in plan.entities
            if "lastRunId" in e["attributes"]
            and e["attributes"]["outputs"][0]["uniqueAttributes"]["qualifiedName"] == _qn(output)
        )

    assert mapping(narrowed, A) == mapping(alone, A)
    assert json.loads(mapping(narrowed, A)) == [
        {"DatasetMapping": {"Source": _qn(ORDERS), "Sink": _qn(A)}, "ColumnMapping": [{"Source": "id", "Sink": "id"}]}
    ]


def test_the_job_lineage_facet_narrows_inputs_like_column_lineage():
    # LineageFacet.json line 43 (LineageJobFacet.entries) and line 66 (LineageDatasetEntry: namespace, name, type,
    # inputs at line 83); a JOB input (LineageJobInput, line 178) names no dataset
    lineage = {
        "lineage": {
            "entries": [
                {
                    "namespace": LAKE,
                    "name": A,
                    "type": "DATASET",
                    "inputs": [
                        {"namespace": LAKE, "name": ORDERS, "type": "DATASET"},
                        {"type": "JOB", "name": "x", "namespace": "y"},
                    ],
                },
                {
                    "namespace": LAKE,
                    "name": B,
                    "type": "DATASET",
                    "fields": {
                        "n": {"inputs": [{"namespace": LAKE, "name": CUSTOMERS, "type": "DATASET", "field": "n"}]}
                    },
                },
            ]
        }
    }
    run = _run(
        [DatasetFacts(LAKE, ORDERS), DatasetFacts(LAKE, CUSTOMERS)],
        [DatasetFacts(LAKE, A), DatasetFacts(LAKE, B)],
        job_facets=lineage,
    )
    assert _edges(run) == {_qn(A): [_qn(ORDERS)], _qn(B): [_qn(CUSTOMERS)]}


def test_the_dataset_lineage_facet_narrows_and_an_empty_entry_keeps_only_shared_inputs():
    # LineageFacet.json line 5 (LineageDatasetFacet, `inputs` line 15); line 83: "An empty array explicitly means
    # that the target has no tracked upstream source"
    own = {"lineage": {"inputs": [{"namespace": LAKE, "name": ORDERS, "type": "DATASET"}]}}
    empty = {"lineage": {"entries": [{"namespace": LAKE, "name": B, "type": "DATASET", "inputs": []}]}}
    run = _run(
        [DatasetFacts(LAKE, ORDERS), DatasetFacts(LAKE, "/raw/rates")],
        [DatasetFacts(LAKE, A, own), DatasetFacts(LAKE, B)],
        job_facets=empty,
    )
    assert _edges(run) == {_qn(A): [_qn(ORDERS), _qn("/raw/rates")], _qn(B): [_qn("/raw/rates")]}


def test_declared_names_reads_every_source_and_says_none_when_nothing_is_declared():
    facet = _column_lineage(id=[_field(ORDERS, "id")])
    facet["columnLineage"]["dataset"] = [_field(CUSTOMERS, "c")]
    assert declared_names(DatasetFacts(LAKE, A, facet), {}) == {(LAKE, ORDERS), (LAKE, CUSTOMERS)}
    assert declared_names(DatasetFacts(LAKE, A), {}) is None
    assert declared_names(DatasetFacts(LAKE, A, _column_lineage(id=[])), {}) is None


# --- temporary datasets ----------------------------------------------------------------------------------------------
def test_what_is_temporary():
    assert is_temporary(DatasetFacts("inmemory://", "Dataset3.Load task"))  # examples.md line 255
    assert is_temporary(DatasetFacts("inmemory", "x"))
    assert is_temporary(DatasetFacts(LAKE, "/tmp/x", TEMPORARY_TYPE))  # a temporary dataset stored somewhere
    assert not is_temporary(DatasetFacts(LAKE, "/tmp/x", {"datasetType": {"datasetType": "TABLE"}}))
    assert not is_temporary(DatasetFacts("inmemoryx://", "x"))


def test_a_temporary_output_is_no_entity_and_its_run_writes_only_its_real_outputs():
    run = _run(
        [DatasetFacts(LAKE, ORDERS)],
        [
            DatasetFacts(
                "inmemory://", "Dataset3.Load task", {**TEMPORARY_TYPE, **_column_lineage(id=[_field(ORDERS, "id")])}
            ),
            DatasetFacts(LAKE, A),
        ],
    )
    names = _all_qualified_names(run)
    assert not [n for n in names if "inmemory" in n or "Dataset3" in n]
    assert _edges(run) == {_qn(A): [_qn(ORDERS)]}
    only_temporary = _run([DatasetFacts(LAKE, ORDERS)], [DatasetFacts("inmemory://", "t", TEMPORARY_TYPE)])
    plan = build_lineage(only_temporary, FakeEngine(), LineageOptions())
    assert plan.entities == () and plan.external_datasets == ()


def test_a_reader_lists_the_writers_inputs_instead_of_the_temporary_dataset():
    temporary = DatasetFacts("inmemory://", "Dataset3.Load task", TEMPORARY_TYPE)
    writer = _run(
        [DatasetFacts(LAKE, ORDERS, {"schema": {"fields": [{"name": "id", "type": "long"}]}})],
        [temporary],
        run_id="load",
    )
    reader = _run(
        [temporary, DatasetFacts(LAKE, CUSTOMERS)],
        [DatasetFacts(LAKE, A, _column_lineage(id=[_field("Dataset3.Load task", "_0", "inmemory://")]))],
        run_id="transform",
    )
    writes = temporary_writes(writer)
    assert writes == {("inmemory://", "Dataset3.Load task"): writer.inputs}
    upstream = upstream_inputs(reader, lambda names: {n: writes[n] for n in names if n in writes})
    assert upstream == {("inmemory://", "Dataset3.Load task"): writer.inputs}
    # the column lineage names the temporary dataset only: the output derives from what it passes on (orders);
    # customers, named by no output's lineage, stays
    assert _edges(reader, upstream) == {_qn(A): [_qn(CUSTOMERS), _qn(ORDERS)]}
    names = _all_qualified_names(reader, upstream)
    assert not [n for n in names if "inmemory" in n or "Dataset3" in n]
    # before the writer is known: the temporary dataset is left out, nothing stands in its place
    assert _edges(reader) == {_qn(A): [_qn(CUSTOMERS)]}


def test_temporary_datasets_are_followed_through_several_writers_and_a_cycle_ends():
    t1, t2 = DatasetFacts("inmemory://", "t1"), DatasetFacts("inmemory://", "t2")
    writes = {
        ("inmemory://", "t1"): (DatasetFacts(LAKE, ORDERS), t2),
        ("inmemory://", "t2"): (DatasetFacts(LAKE, CUSTOMERS), t1),
    }
    asked = []

    def lookup(names):
        asked.append(list(names))
        return {n: writes[n] for n in names if n in writes}

    reader = _run([t1], [DatasetFacts(LAKE, A)])
    upstream = upstream_inputs(reader, lookup)
    assert upstream == {("inmemory://", "t1"): (DatasetFacts(LAKE, CUSTOMERS), DatasetFacts(LAKE, ORDERS))}
    assert asked == [[("inmemory://", "t1")], [("inmemory://", "t2")]]
    assert _edges(reader, upstream) == {_qn(A): [_qn(CUSTOMERS), _qn(ORDERS)]}


def test_a_temporary_output_passes_on_only_what_its_column_lineage_names():
    run = _run(
        [DatasetFacts(LAKE, ORDERS), DatasetFacts(LAKE, CUSTOMERS)],
        [
            DatasetFacts("inmemory://", "t", _column_lineage(id=[_field(ORDERS, "id")])),
            DatasetFacts(LAKE, B, _column_lineage(n=[_field(CUSTOMERS, "n")])),
        ],
    )
    assert temporary_writes(run) == {("inmemory://", "t"): (DatasetFacts(LAKE, ORDERS),)}


def test_the_scope_is_the_parent_run():
    assert temporary_scope(_run([], [])) == PARENT
    assert temporary_scope(_run([], [], parent=None)) is None
