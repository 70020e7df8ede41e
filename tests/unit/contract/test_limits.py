"""Intake limits on what multiplies: each refusal's status, message (naming the limit and its setting) and path."""

from __future__ import annotations

import gzip

import pytest

from olparser.contract import IntakeLimits, read_batch, read_event
from olparser.settings import Settings
from tests.unit.contract.helpers import JSON_HEADERS, RUN_ID, body_of, minimal_event, refusal


def _dataset(index: int, **facets: object) -> dict:
    return {"namespace": "dbfs", "name": f"/mnt/raw/t{index}", "facets": facets}


def _refused(event: dict, limits: IntakeLimits) -> tuple[int, dict[str, str]]:
    error = refusal(body_of(event), limits=limits)
    return error.status, error.to_json()


def test_datasets_per_event() -> None:
    event = minimal_event(inputs=[_dataset(i) for i in range(3)], outputs=[_dataset(9)])
    assert _refused(event, IntakeLimits(max_datasets_per_event=3)) == (
        413,
        {
            "error": "the event has 4 datasets in inputs and outputs, more than the limit of 3 "
            "(setting MAX_DATASETS_PER_EVENT)",
            "path": "$",
        },
    )
    assert read_event(body_of(event), JSON_HEADERS, IntakeLimits(max_datasets_per_event=4)).run_id == RUN_ID


def test_facets_per_event_count_every_facet_map() -> None:
    event = minimal_event(
        run={"runId": RUN_ID, "facets": {"a": {}, "b": {}}},
        job={"namespace": "default", "name": "j", "facets": {"c": {}}},
        inputs=[{"namespace": "dbfs", "name": "/x", "facets": {"d": {}}, "inputFacets": {"e": {}}}],
        outputs=[],
    )
    assert _refused(event, IntakeLimits(max_facets_per_event=4)) == (
        413,
        {"error": "the event has 5 facets, more than the limit of 4 (setting MAX_FACETS_PER_EVENT)", "path": "$"},
    )
    assert read_event(body_of(event), JSON_HEADERS, IntakeLimits(max_facets_per_event=5)).warnings == ()


def test_facets_removed_by_strip_facets_do_not_count() -> None:
    event = minimal_event(run={"runId": RUN_ID, "facets": {"debug": {}, "spark_unknown": {}, "a": {}}})
    assert read_event(body_of(event), JSON_HEADERS, IntakeLimits(max_facets_per_event=1)).run_id == RUN_ID


def test_schema_columns_count_nested_fields() -> None:
    schema = {
        "fields": [{"name": "a"}, {"name": "s", "fields": [{"name": "x"}, {"name": "y", "fields": [{"name": "z"}]}]}]
    }
    event = minimal_event(outputs=[_dataset(0), _dataset(1, schema=schema)])
    assert _refused(event, IntakeLimits(max_schema_columns=4)) == (
        413,
        {
            "error": "$.outputs[1].facets.schema.fields has 5 columns (nested fields included), more than the limit of 4 "
            "(setting MAX_SCHEMA_COLUMNS)",
            "path": "$.outputs[1].facets.schema.fields",
        },
    )
    accepted = read_event(body_of(event), JSON_HEADERS, IntakeLimits(max_schema_columns=5))
    assert accepted.event["outputs"][1]["facets"]["schema"] == schema


def _lineage(outputs: int, inputs_each: int, dataset: int = 0) -> dict:
    field = {"namespace": "dbfs", "name": "/mnt/raw/t0", "field": "c"}
    lineage: dict = {"fields": {f"o{o}": {"inputFields": [field] * inputs_each} for o in range(outputs)}}
    if dataset:
        lineage["dataset"] = [field] * dataset
    return lineage


def test_column_lineage_output_fields_per_event() -> None:
    event = minimal_event(
        outputs=[_dataset(0, columnLineage=_lineage(3, 1)), _dataset(1, columnLineage=_lineage(2, 1))]
    )
    assert _refused(event, IntakeLimits(max_column_lineage_fields=4)) == (
        413,
        {
            "error": "the columnLineage facets of the event have 5 output fields, more than the limit of 4 "
            "(setting MAX_COLUMN_LINEAGE_FIELDS)",
            "path": "$",
        },
    )


def test_column_lineage_input_fields_per_event_include_the_dataset_list() -> None:
    event = minimal_event(outputs=[_dataset(0, columnLineage=_lineage(2, 3, dataset=2))])
    assert _refused(event, IntakeLimits(max_column_lineage_input_fields=7)) == (
        413,
        {
            "error": "the columnLineage facets of the event have 8 input fields, more than the limit of 7 "
            "(setting MAX_COLUMN_LINEAGE_INPUT_FIELDS)",
            "path": "$",
        },
    )
    assert read_event(body_of(event), JSON_HEADERS, IntakeLimits(max_column_lineage_input_fields=8)).warnings == ()


def test_mount_points() -> None:
    mounts = [{"mountPoint": f"/mnt/m{i}", "source": f"abfss://c{i}@a.dfs.core.windows.net/"} for i in range(3)]
    env = {"environment-properties": {"mountPoints": mounts}}
    event = minimal_event(run={"runId": RUN_ID, "facets": {"environment-properties": env}})
    path = "$.run.facets.environment-properties.environment-properties.mountPoints"
    assert _refused(event, IntakeLimits(max_mount_points=2)) == (
        413,
        {"error": f"{path} has 3 mount points, more than the limit of 2 (setting MAX_MOUNT_POINTS)", "path": path},
    )
    assert read_event(body_of(event), JSON_HEADERS, IntakeLimits(max_mount_points=3)).warnings == ()


def test_name_length_names_its_setting() -> None:
    event = minimal_event(
        job={"namespace": "default", "name": "j"}, outputs=[{"namespace": "dbfs", "name": "/" + "n" * 20}]
    )
    assert _refused(event, IntakeLimits(max_string_chars=20)) == (
        400,
        {
            "error": "$.outputs[0].name is 21 characters long, more than the limit of 20 (setting MAX_NAME_CHARS)",
            "path": "$.outputs[0].name",
        },
    )


def test_gzip_members() -> None:
    body = gzip.compress(b"") * 3 + gzip.compress(body_of(minimal_event()))
    assert read_event(body, {}, IntakeLimits(max_gzip_members=4)).run_id == RUN_ID
    error = refusal(body, headers={}, limits=IntakeLimits(max_gzip_members=3))
    assert (error.status, error.to_json()) == (
        400,
        {
            "error": "body has more than 3 gzip members, more than the limit of 3 (setting MAX_GZIP_MEMBERS)",
            "path": "body",
        },
    )


def test_gzip_members_that_end_inside_an_input_chunk_still_decode() -> None:
    """Compressed bytes are fed 64 KiB at a time: a member that ends inside a chunk hands the rest to the next."""
    schema = {"fields": [{"name": f"column_{i:05d}", "type": "string"} for i in range(4000)]}
    payload = body_of(minimal_event(outputs=[_dataset(0, schema=schema)]))
    third = len(payload) // 3
    members = [payload[:third], payload[third : 2 * third], payload[2 * third :]]
    body = b"".join(gzip.compress(member, compresslevel=0) for member in members) + b"\x00" * 10
    assert len(payload) > 3 * 64 * 1024 // 2
    accepted = read_event(body, {}, IntakeLimits())
    assert accepted.event["outputs"][0]["facets"]["schema"] == schema


def test_a_batch_refuses_only_the_event_over_a_limit() -> None:
    big = minimal_event(inputs=[_dataset(i) for i in range(5)])
    results = read_batch(body_of([minimal_event(), big]), JSON_HEADERS, IntakeLimits(max_datasets_per_event=4))
    assert results[0].run_id == RUN_ID
    assert (results[1].status, results[1].to_json()) == (
        413,
        {
            "error": "the event has 6 datasets in inputs and outputs, more than the limit of 4 "
            "(setting MAX_DATASETS_PER_EVENT)",
            "path": "$[1]",
        },
    )


def test_limits_come_from_the_settings() -> None:
    env = {
        "MAX_NAME_CHARS": "100",
        "MAX_DATASETS_PER_EVENT": "10",
        "MAX_FACETS_PER_EVENT": "11",
        "MAX_SCHEMA_COLUMNS": "12",
        "MAX_COLUMN_LINEAGE_FIELDS": "13",
        "MAX_COLUMN_LINEAGE_INPUT_FIELDS": "14",
        "MAX_MOUNT_POINTS": "15",
        "MAX_GZIP_MEMBERS": "2",
        "MAX_EVENT_TIME_SKEW_SECONDS": "0",
    }
    limits = IntakeLimits.from_settings(Settings.from_env(env))
    assert (
        limits.max_string_chars,
        limits.max_datasets_per_event,
        limits.max_facets_per_event,
        limits.max_schema_columns,
        limits.max_column_lineage_fields,
        limits.max_column_lineage_input_fields,
        limits.max_mount_points,
        limits.max_gzip_members,
        limits.max_event_time_skew_seconds,
    ) == (100, 10, 11, 12, 13, 14, 15, 2, 0)


def test_the_defaults_are_the_documented_ones() -> None:
    limits = IntakeLimits.from_settings(Settings.from_env({}))
    assert limits == IntakeLimits()
    assert (
        limits.max_string_chars,
        limits.max_datasets_per_event,
        limits.max_facets_per_event,
        limits.max_schema_columns,
        limits.max_column_lineage_fields,
        limits.max_column_lineage_input_fields,
        limits.max_mount_points,
        limits.max_gzip_members,
        limits.max_event_time_skew_seconds,
    ) == (4096, 1000, 10_000, 10_000, 10_000, 100_000, 2000, 64, 300)


@pytest.mark.parametrize(
    "value, message",
    [
        ("lots", "MAX_DATASETS_PER_EVENT must be an integer, got 'lots'"),
        ("0", "MAX_DATASETS_PER_EVENT must be at least 1, got 0"),
    ],
)
def test_a_bad_limit_setting_names_itself(value: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        Settings.from_env({"MAX_DATASETS_PER_EVENT": value})
    assert str(caught.value) == message
