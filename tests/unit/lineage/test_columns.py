"""Column lineage: Purview's columnMapping (DIRECT only) and the full detail, for 1-2-0 and older facets."""

from __future__ import annotations

import json
from collections import OrderedDict

import pytest

from olparser.lineage import LineageOptions, build_lineage, columns
from olparser.runs.model import DatasetFacts, RunSnapshot
from tests.support.fake_engine import FakeEngine

LAKE = "abfss://raw@acct.dfs.core.windows.net"


def _field(name: str, field: str, *transformations: dict, namespace: str = LAKE) -> dict:
    item = {"namespace": namespace, "name": name, "field": field}
    if transformations:
        item["transformations"] = list(transformations)
    return item


def _t(kind: str, subtype: str, description: str = "", masking: bool = False) -> dict:
    return {"type": kind, "subtype": subtype, "description": description, "masking": masking}


def _process(facet: dict, inputs: tuple[DatasetFacts, ...] = ()) -> dict:
    output = DatasetFacts(namespace=LAKE, name="gold/summary", facets={"columnLineage": facet})
    run = RunSnapshot(
        run_id="r",
        job_namespace="etl",
        job_name="app.job",
        event_type="COMPLETE",
        event_time="2024-05-01T10:00:00Z",
        producer="test",
        inputs=inputs,
        outputs=(output,),
    )
    return build_lineage(run, FakeEngine(), LineageOptions()).entities[-1]["attributes"]


ORDERS = "https://acct.dfs.core.windows.net/raw/orders"
CUSTOMERS = "https://acct.dfs.core.windows.net/raw/customers"
SUMMARY = "https://acct.dfs.core.windows.net/raw/gold/summary"


def test_column_mapping_has_one_entry_per_dataset_pair_with_direct_columns_only():
    facet = {
        "fields": {
            "total": {
                "inputFields": [
                    _field("orders", "amount", _t("DIRECT", "AGGREGATION", "sum(amount)")),
                    _field("orders", "status", _t("INDIRECT", "FILTER")),
                ]
            },
            "customer": {
                "inputFields": [
                    _field("customers", "name", _t("DIRECT", "IDENTITY")),
                    _field("orders", "customer_id", _t("INDIRECT", "JOIN")),
                ]
            },
            "masked_email": {
                "inputFields": [_field("customers", "email", _t("DIRECT", "TRANSFORMATION", "sha2(email)", True))]
            },
        }
    }

    process = _process(facet)

    assert process["columnMapping"] == (
        f'[{{"DatasetMapping":{{"Source":"{CUSTOMERS}","Sink":"{SUMMARY}"}},'
        '"ColumnMapping":[{"Source":"email","Sink":"masked_email"},{"Source":"name","Sink":"customer"}]},'
        f'{{"DatasetMapping":{{"Source":"{ORDERS}","Sink":"{SUMMARY}"}},'
        '"ColumnMapping":[{"Source":"amount","Sink":"total"}]}]'
    )
    # datasets named only by the column lineage are inputs of the process
    assert [i["uniqueAttributes"]["qualifiedName"] for i in process["inputs"]] == [CUSTOMERS, ORDERS]


def test_detail_keeps_indirect_dependencies_subtypes_descriptions_masking_and_dataset_level_fields():
    facet = {
        "fields": {
            "masked_email": {
                "inputFields": [_field("customers", "email", _t("DIRECT", "TRANSFORMATION", "sha2(email)", True))]
            }
        },
        "dataset": [_field("orders", "status", _t("INDIRECT", "FILTER", "status = 'paid'"))],
    }

    detail = json.loads(_process(facet)["columnLineageDetail"])

    assert detail == {
        "fields": [
            {
                "field": "masked_email",
                "inputFields": [
                    {
                        "typeName": "azure_datalake_gen2_path",
                        "qualifiedName": CUSTOMERS,
                        "namespace": LAKE,
                        "name": "customers",
                        "field": "email",
                        "transformations": [_t("DIRECT", "TRANSFORMATION", "sha2(email)", True)],
                    }
                ],
            }
        ],
        "dataset": [
            {
                "typeName": "azure_datalake_gen2_path",
                "qualifiedName": ORDERS,
                "namespace": LAKE,
                "name": "orders",
                "field": "status",
                "transformations": [_t("INDIRECT", "FILTER", "status = 'paid'")],
            }
        ],
    }


def test_older_facet_without_transformations_counts_as_direct_and_keeps_its_transformation_type():
    facet = {
        "fields": {
            "id": {
                "inputFields": [_field("orders", "order_id")],
                "transformationType": "IDENTITY",
                "transformationDescription": "identical",
            }
        }
    }

    process = _process(facet)

    assert json.loads(process["columnMapping"]) == [
        {"DatasetMapping": {"Source": ORDERS, "Sink": SUMMARY}, "ColumnMapping": [{"Source": "order_id", "Sink": "id"}]}
    ]
    assert json.loads(process["columnLineageDetail"])["fields"][0] == {
        "field": "id",
        "transformationType": "IDENTITY",
        "transformationDescription": "identical",
        "inputFields": [
            {
                "typeName": "azure_datalake_gen2_path",
                "qualifiedName": ORDERS,
                "namespace": LAKE,
                "name": "orders",
                "field": "order_id",
                "transformations": [],
            }
        ],
    }


def test_input_fields_use_the_identity_chosen_for_the_runs_input():
    table_input = DatasetFacts(
        namespace=LAKE,
        name="warehouse/orders",
        facets={
            "symlinks": {
                "identifiers": [{"namespace": "hive://metastore:9083", "name": "sales.orders", "type": "TABLE"}]
            }
        },
    )
    facet = {"fields": {"total": {"inputFields": [_field("warehouse/orders", "amount", _t("DIRECT", "AGGREGATION"))]}}}

    process = _process(facet, inputs=(table_input,))

    assert json.loads(process["columnMapping"])[0]["DatasetMapping"] == {
        "Source": "sales.orders@metastore",
        "Sink": SUMMARY,
    }
    assert [i["uniqueAttributes"]["qualifiedName"] for i in process["inputs"]] == ["sales.orders@metastore"]


def test_output_without_direct_dependencies_has_an_empty_mapping_and_expression_keys_survive():
    facet = {"fields": {"count(1)": {"inputFields": [_field("orders", "id", _t("INDIRECT", "GROUP_BY"))]}}}

    process = _process(facet)

    assert process["columnMapping"] == "[]"
    assert json.loads(process["columnLineageDetail"])["fields"][0]["field"] == "count(1)"


def test_detail_text_is_compact_sorted_escaped_json_without_ascii_escapes():
    facet = {
        "fields": {
            "naïve \"q\"": {
                "inputFields": [
                    _field("orders", "b", {"type": "INDIRECT", "subtype": "FILTER"}),
                    _field(
                        "orders",
                        "a\\x",
                        {"masking": True, "type": "DIRECT", "subtype": "TRANSFORMATION", "description": "upper(a)\n"},
                    ),
                    _field(
                        "orders",
                        "a\\x",
                        {"masking": True, "type": "DIRECT", "subtype": "TRANSFORMATION", "description": "upper(a)\n"},
                    ),
                ]
            },
            "id": {"inputFields": [_field("orders", "id")]},
        }
    }

    process = _process(facet)

    orders = f'"name":"orders","namespace":"{LAKE}","qualifiedName":"{ORDERS}"'
    assert process["columnLineageDetail"] == (
        '{"dataset":[],"fields":['
        f'{{"field":"id","inputFields":[{{"field":"id",{orders},"transformations":[],'
        '"typeName":"azure_datalake_gen2_path"}]},'
        f'{{"field":"naïve \\"q\\"","inputFields":[{{"field":"a\\\\x",{orders},"transformations":'
        '[{"description":"upper(a)\\n","masking":true,"subtype":"TRANSFORMATION","type":"DIRECT"}],'
        '"typeName":"azure_datalake_gen2_path"},'
        f'{{"field":"b",{orders},"transformations":[{{"subtype":"FILTER","type":"INDIRECT"}}],'
        '"typeName":"azure_datalake_gen2_path"}]}]}'
    )
    assert process["columnMapping"] == (
        f'[{{"DatasetMapping":{{"Source":"{ORDERS}","Sink":"{SUMMARY}"}},"ColumnMapping":'
        '[{"Source":"a\\\\x","Sink":"naïve \\"q\\""},{"Source":"id","Sink":"id"}]}]'
    )


@pytest.mark.parametrize("masking, text", [(False, "false"), (0, "0"), (0.0, "0.0"), (True, "true"), (1, "1")])
def test_transformations_that_compare_equal_in_python_keep_their_own_json(masking, text):
    # False == 0 == 0.0 and True == 1 in Python: a cache keyed by equality alone would mix them up
    for value in (False, 0, 0.0, True, 1):  # every variant seen first, in the same process
        _process({"fields": {"c": {"inputFields": [_field("orders", "x", {"type": "DIRECT", "masking": value})]}}})

    process = _process(
        {"fields": {"c": {"inputFields": [_field("orders", "x", {"type": "DIRECT", "masking": masking})]}}}
    )

    assert json.loads(process["columnLineageDetail"])["fields"][0]["inputFields"][0]["transformations"] == [
        {"masking": masking, "type": "DIRECT"}
    ]
    assert f'"masking":{text},' in process["columnLineageDetail"]


def test_null_nan_and_infinities_keep_their_own_json():
    # orjson writes NaN and ±Infinity as null: a cache keyed by its text would mix them up with null
    def detail(masking: object) -> str:
        return _process(
            {"fields": {"c": {"inputFields": [_field("orders", "x", {"type": "DIRECT", "masking": masking})]}}}
        )["columnLineageDetail"]

    for value in (None, float("nan"), float("inf"), float("-inf")):  # every variant seen first
        detail(value)

    assert [detail(value) for value in (float("nan"), None, float("-inf"), float("inf"))] == [
        '{"dataset":[],"fields":[{"field":"c","inputFields":[{"field":"x","name":"orders",'
        f'"namespace":"{LAKE}","qualifiedName":"{ORDERS}","transformations":[{{"masking":{text},"type":"DIRECT"}}],'
        '"typeName":"azure_datalake_gen2_path"}]}]}'
        for text in ("NaN", "null", "-Infinity", "Infinity")
    ]


def test_input_fields_in_mapping_subclasses_are_read():
    facet = {"fields": {"id": {"inputFields": [OrderedDict(_field("orders", "order_id"))]}}}

    process = _process(facet)

    assert json.loads(process["columnMapping"])[0]["ColumnMapping"] == [{"Source": "order_id", "Sink": "id"}]


def test_a_long_description_is_written_whole_and_not_kept():
    long = {"type": "DIRECT", "subtype": "TRANSFORMATION", "description": "x" * 2000, "masking": False}

    process = _process({"fields": {"c": {"inputFields": [_field("orders", "a", long)]}}})

    assert json.loads(process["columnLineageDetail"])["fields"][0]["inputFields"][0]["transformations"] == [long]
    assert all(len(known.text) <= 1024 for cache in (columns._by_json, columns._by_repr) for known in cache.values())
