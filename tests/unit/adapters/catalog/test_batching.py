"""Bulk planning as pure functions: dependency order, splitting, reference rewriting."""

from __future__ import annotations

import copy

import pytest

from olparser.adapters.catalog.batching import bulk_batches, dependency_order, references, rewrite_references
from olparser.adapters.catalog.existence import lookup_batches

from .plans import ADLS, RAW, dataset, process


def test_references_are_found_in_attributes_and_relationship_attributes():
    entity = process("-9", "p", ["-1", "-2"], ["-3"], owner="-4")
    entity["attributes"]["columnMapping"] = '[{"guid": "-77"}]'  # a string, not a reference
    assert references(entity) == {"-1", "-2", "-3", "-4"}


def test_dependency_order_puts_referenced_entities_first_and_keeps_the_rest_in_place():
    proc = process("-9", "p", ["-2"], ["-1"])
    a, b, c = dataset("-1", ADLS, "a"), dataset("-2", ADLS, "b"), dataset("-3", ADLS, "c")
    assert [e["guid"] for e in dependency_order([c, proc, a, b])] == ["-3", "-1", "-2", "-9"]


def test_dependency_order_breaks_cycles_at_the_earliest_entity():
    table = {"typeName": "t", "guid": "-1", "attributes": {"qualifiedName": "t", "columns": [{"guid": "-2"}]}}
    column = {"typeName": "c", "guid": "-2", "attributes": {"qualifiedName": "t#c", "table": {"guid": "-1"}}}
    other = dataset("-3", ADLS, "x")
    assert [e["guid"] for e in dependency_order([table, column, other])] == ["-3", "-1", "-2"]


def test_one_batch_when_it_fits_with_existing_datasets_referenced_by_name():
    proc = process("-9", "p", ["-1"], ["-2"], owner="-3")
    batches = bulk_batches([dataset("-2", ADLS, "out"), proc], 1000, {"-1": (ADLS, RAW)})
    assert len(batches) == 1
    sent = batches[0][1]["relationshipAttributes"]
    assert sent["inputs"] == [{"typeName": ADLS, "uniqueAttributes": {"qualifiedName": RAW}}]
    assert sent["outputs"] == [{"guid": "-2"}]
    assert sent["notebook"] == {"guid": "-3", "relationshipType": "notebook_process"}  # not in the plan: untouched


def test_rewrite_keeps_other_keys_and_never_mutates_the_plan():
    proc = process("-9", "p", [], [], owner="-3")
    before = copy.deepcopy(proc)
    rewritten = rewrite_references(proc, {"-3": ("databricks_notebook", "nb")})
    assert rewritten["relationshipAttributes"]["notebook"] == {
        "relationshipType": "notebook_process",
        "typeName": "databricks_notebook",
        "uniqueAttributes": {"qualifiedName": "nb"},
    }
    assert proc == before
    assert rewrite_references(proc, {"-5": ("x", "y")}) is proc


def test_split_sends_owners_and_datasets_before_processes():
    owner = {"typeName": "databricks_notebook", "guid": "-5", "attributes": {"qualifiedName": "nb"}}
    proc = process("-9", "p", ["-1", "-2"], [], owner="-5")
    batches = bulk_batches([proc, dataset("-1", ADLS, "a"), dataset("-2", ADLS, "b"), owner], 2, {})
    assert [[e["guid"] for e in batch] for batch in batches] == [["-1", "-2"], ["-5", "-9"]]
    assert batches[1][1]["relationshipAttributes"]["inputs"] == [
        {"typeName": ADLS, "uniqueAttributes": {"qualifiedName": "a"}},
        {"typeName": ADLS, "uniqueAttributes": {"qualifiedName": "b"}},
    ]
    assert batches[1][1]["relationshipAttributes"]["notebook"]["guid"] == "-5"  # same batch: placeholder kept


def test_bulk_size_must_be_positive():
    with pytest.raises(ValueError, match="bulk_size must be at least 1"):
        bulk_batches([dataset("-1", ADLS, "a")], 0, {})


def test_lookup_batches_split_by_encoded_url_length():
    base = "http://127.0.0.1:5000/api/atlas/v2"
    fixed = len(
        f"{base}/entity/bulk/uniqueAttribute/type/hive_table"
        "?api-version=2023-09-01&ignoreRelationships=True&minExtInfo=True"
    )
    entry = len("&attr_0%3AqualifiedName=") + len("db.t0%40cluster")  # '@' is encoded
    names = [f"db.t{i}@cluster" for i in range(5)]
    assert lookup_batches(base, "hive_table", names, fixed + 2 * entry) == [names[:2], names[2:4], names[4:]]
    assert lookup_batches(base, "hive_table", names, fixed + 2 * entry - 1) == [[n] for n in names]
    assert lookup_batches(base, "hive_table", ["a" * 5000]) == [["a" * 5000]]  # too long alone: sent alone
