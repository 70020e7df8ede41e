"""Counting what multiplies, before the event is validated: datasets, facets, mount points, schema columns and
column-lineage fields. Each count is compared with its limit (IntakeLimits) and the first one over is refused with
413, naming the limit and its setting. One pass over the parts counted, linear in the event's size; any shape is
tolerated (validation reports shapes), so parts that are not what they should be are simply not counted.
"""

from __future__ import annotations

from typing import Any, Sequence

from olparser.contract.errors import IngestError, json_path
from olparser.contract.limits import IntakeLimits, over_limit
from olparser.contract.strip import DATASET_LISTS, facet_maps

ENVIRONMENT_FACET = "environment-properties"


def check_counts(
    event: dict[str, Any],
    limits: IntakeLimits,
    prefix: str = "$",
    maps: Sequence[tuple[tuple[str | int, ...], dict[str, Any]]] | None = None,
) -> None:
    """Raise IngestError(413) for the first count over its limit; return quietly when all fit. `maps`: the event's
    facet maps when the caller has listed them already (strip.facet_maps)."""
    _check_datasets(event, limits, prefix)
    _check_mount_points(event, limits, prefix)
    if maps is None:
        maps = list(facet_maps(event))  # at most 3 per dataset + 3: the dataset count is bounded already
    facets = sum(len(facet_map) for _path, facet_map in maps)
    if facets > limits.max_facets_per_event:
        message = f"the event has {facets:,} facets, {over_limit('max_facets_per_event', limits.max_facets_per_event)}"
        raise IngestError(413, message, prefix)
    output_fields = 0
    input_fields = 0
    for path, facet_map in maps:
        if path[-1] != "facets":
            continue
        schema = facet_map.get("schema")
        if type(schema) is dict:
            columns = schema_columns(schema)
            if columns > limits.max_schema_columns:
                where = json_path((*path, "schema", "fields"), prefix)
                message = (
                    f"{where} has {columns:,} columns (nested fields included), "
                    f"{over_limit('max_schema_columns', limits.max_schema_columns)}"
                )
                raise IngestError(413, message, where)
        lineage = facet_map.get("columnLineage")
        if type(lineage) is dict:
            outputs, inputs = column_lineage_fields(lineage)
            output_fields += outputs
            input_fields += inputs
    if output_fields > limits.max_column_lineage_fields:
        message = (
            f"the columnLineage facets of the event have {output_fields:,} output fields, "
            f"{over_limit('max_column_lineage_fields', limits.max_column_lineage_fields)}"
        )
        raise IngestError(413, message, prefix)
    if input_fields > limits.max_column_lineage_input_fields:
        message = (
            f"the columnLineage facets of the event have {input_fields:,} input fields, "
            f"{over_limit('max_column_lineage_input_fields', limits.max_column_lineage_input_fields)}"
        )
        raise IngestError(413, message, prefix)


def _check_datasets(event: dict[str, Any], limits: IntakeLimits, prefix: str) -> None:
    count = sum(len(event[name]) for name in DATASET_LISTS if type(event.get(name)) is list)
    if count > limits.max_datasets_per_event:
        message = (
            f"the event has {count:,} datasets in inputs and outputs, "
            f"{over_limit('max_datasets_per_event', limits.max_datasets_per_event)}"
        )
        raise IngestError(413, message, prefix)


def _check_mount_points(event: dict[str, Any], limits: IntakeLimits, prefix: str) -> None:
    run = event.get("run")
    facets = run.get("facets") if type(run) is dict else None
    facet = facets.get(ENVIRONMENT_FACET) if type(facets) is dict else None
    inner = facet.get(ENVIRONMENT_FACET) if type(facet) is dict else None
    mounts = inner.get("mountPoints") if type(inner) is dict else None
    if type(mounts) is list and len(mounts) > limits.max_mount_points:
        where = json_path(("run", "facets", ENVIRONMENT_FACET, ENVIRONMENT_FACET, "mountPoints"), prefix)
        message = f"{where} has {len(mounts):,} mount points, {over_limit('max_mount_points', limits.max_mount_points)}"
        raise IngestError(413, message, where)


def schema_columns(schema: dict[str, Any]) -> int:
    """Fields of a `schema` facet, nested `fields` included (iterative: no recursion on deep schemas)."""
    count = 0
    stack = [schema.get("fields")]
    while stack:
        fields = stack.pop()
        if type(fields) is not list:
            continue
        count += len(fields)
        stack.extend(field["fields"] for field in fields if type(field) is dict and "fields" in field)
    return count


def column_lineage_fields(lineage: dict[str, Any]) -> tuple[int, int]:
    """(output fields, input fields) of a `columnLineage` facet; input fields include the `dataset[]` entries."""
    fields = lineage.get("fields")
    outputs, inputs = 0, 0
    if type(fields) is dict:
        outputs = len(fields)
        for field in fields.values():
            input_list = field.get("inputFields") if type(field) is dict else None
            if type(input_list) is list:
                inputs += len(input_list)
    dataset = lineage.get("dataset")
    if type(dataset) is list:
        inputs += len(dataset)
    return outputs, inputs
