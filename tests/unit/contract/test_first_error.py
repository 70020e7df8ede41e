"""Validation stops at the first error of each part: fastjsonschema's error, located in the instance."""

from __future__ import annotations

from olparser.contract import IntakeLimits, read_event
from olparser.contract.facets import MAX_FACET_WARNINGS
from olparser.contract.schema import contract_validators, locate
from tests.unit.contract.helpers import JSON_HEADERS, RUN_ID, body_of, minimal_event


def _accept(event: dict, limits: IntakeLimits | None = None):
    return read_event(body_of(event), JSON_HEADERS, limits or IntakeLimits())


def test_locate_reads_keys_that_contain_dots_and_brackets() -> None:
    instance = {"fields": {"a.b[0]": {"inputFields": [{"x": 1}]}}}
    target = instance["fields"]["a.b[0]"]["inputFields"][0]
    assert locate(instance, "data.fields.a.b[0].inputFields[0]", target) == ("fields", "a.b[0]", "inputFields", 0)


def test_locate_prefers_the_reading_that_lands_on_the_failing_value() -> None:
    instance = {"a": {"b": 1}, "a.b": 2}
    assert locate(instance, "data.a.b", 2) == ("a.b",)
    assert locate(instance, "data.a.b", 1) == ("a", "b")


def test_locate_gives_up_on_names_it_cannot_read() -> None:
    assert locate({"a": 1}, "data.zzz", 1) is None
    assert locate({"a": 1}, "other.a", 1) is None


def test_a_column_lineage_error_under_a_dotted_output_column_names_its_path() -> None:
    lineage = {"fields": {"sum(t.x)": {"inputFields": [{"namespace": "dbfs", "field": "x"}]}}}
    event = minimal_event(outputs=[{"namespace": "dbfs", "name": "/o", "facets": {"columnLineage": lineage}}])
    assert _accept(event).warnings == (
        'dropped malformed facet $.outputs[0].facets.columnLineage: '
        '$.outputs[0].facets.columnLineage.fields["sum(t.x)"].inputFields[0].name is required but missing',
    )


def test_only_the_first_error_of_a_facet_is_reported() -> None:
    schema = {"fields": [{"name": 1}, {"name": 2}, {}]}
    event = minimal_event(outputs=[{"namespace": "dbfs", "name": "/o", "facets": {"schema": schema}}])
    assert _accept(event).warnings == (
        "dropped malformed facet $.outputs[0].facets.schema: "
        "$.outputs[0].facets.schema.fields[0].name must be a string, got a number",
    )


def test_warnings_stop_after_twenty_and_count_the_rest() -> None:
    facets = {f"custom_{i:03d}": i for i in range(MAX_FACET_WARNINGS + 7)}
    accepted = _accept(minimal_event(run={"runId": RUN_ID, "facets": facets}))
    assert accepted.event["run"]["facets"] == {}
    assert len(accepted.warnings) == MAX_FACET_WARNINGS + 1
    assert accepted.warnings[0] == "dropped malformed facet $.run.facets.custom_000: a facet must be a JSON object"
    assert accepted.warnings[-1] == "dropped 7 more malformed facets"


def test_fixed_array_bounds_drop_a_facet_with_a_huge_list() -> None:
    identifiers = [{"namespace": "hive://h", "name": f"db.t{i}", "type": "TABLE"} for i in range(1001)]
    event = minimal_event(
        outputs=[{"namespace": "dbfs", "name": "/o", "facets": {"symlinks": {"identifiers": identifiers}}}]
    )
    assert _accept(event).warnings == (
        "dropped malformed facet $.outputs[0].facets.symlinks: "
        "$.outputs[0].facets.symlinks.identifiers has 1,001 items, more than the limit "
        "of 1,000",
    )


def test_array_bounds_follow_the_limits() -> None:
    validators = contract_validators(4096, datasets=2, columns=3, mounts=4, input_fields=5)
    problem = validators.events["RunEvent"].problem(minimal_event(inputs=[{"namespace": "a", "name": "b"}] * 3))
    assert problem == ("$.inputs has 3 items, more than the limit of 2", "$.inputs")
    schema = validators.facets["dataset"]["schema"]
    assert schema.problem({"fields": [{"name": "a"}] * 4}, ("schema",)) == (
        "$.schema.fields has 4 items, more than the limit of 3",
        "$.schema.fields",
    )


def test_job_namespaces_with_commas_are_accepted() -> None:
    event = minimal_event(job={"namespace": "adb-1.2.azuredatabricks.net,cluster-0101,prod", "name": "etl.job"})
    assert _accept(event).event["job"]["namespace"] == "adb-1.2.azuredatabricks.net,cluster-0101,prod"


def test_schema_urls_that_cannot_be_resolved_are_accepted() -> None:
    facet = {"_producer": "me", "_schemaURL": "file:/opt/spark/facets/MyFacet.json", "fields": [{"name": "id"}]}
    event = minimal_event(
        schemaURL="file:/opt/openlineage/OpenLineage.json#/definitions/RunEvent",
        outputs=[{"namespace": "dbfs", "name": "/o", "facets": {"schema": facet}}],
    )
    accepted = _accept(event)
    assert (accepted.warnings, accepted.event["outputs"][0]["facets"]["schema"]) == ((), facet)
