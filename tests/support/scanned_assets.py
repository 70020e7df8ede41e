"""Runs over datasets a scanner registered: their names, the notebook run that reads them, stable answers."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from typing import Any

from tests.support import databricks_runs as dr

STABLE = ("typeName", "guid", "status", "attributes", "createdBy", "createTime", "classifications", "labels")


def stable(entity: dict[str, Any]) -> str:
    """What the connector must never change on a scanned entity: referencing it adds relationships and Atlas's
    update bookkeeping (updateTime, updatedBy, version), nothing else."""
    return json.dumps({k: entity.get(k) for k in STABLE}, sort_keys=True)


def dataset(namespace: str, name: str, **facets: Any) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "name": name,
        "facets": {
            "schema": {
                "_producer": dr.PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                "fields": [{"name": "id", "type": "long"}, {"name": "amount", "type": "decimal(10,2)"}],
            },
            **facets,
        },
    }


def notebook_run(
    number: int,
    statement: str,
    inputs: list[dict[str, Any]],
    output: dict[str, Any],
    *,
    started: datetime | None = None,
) -> list[dict]:
    """A Databricks notebook run (START, RUNNING with the environment, COMPLETE) with these datasets; the output's
    `id` and `amount` come from the first input."""
    events = dr.events(dr.orders_run(number, started or dr.T0.replace(hour=number % 24), statement=statement))
    lineage = {
        "_producer": dr.PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
        "fields": {
            column: {"inputFields": [{"namespace": inputs[0]["namespace"], "name": inputs[0]["name"], "field": column}]}
            for column in ("id", "amount")
        },
    }
    for event in events:
        event["inputs"] = copy.deepcopy(inputs)
        event["outputs"] = [copy.deepcopy(output)]
        if event["eventType"] == "COMPLETE":
            event["outputs"][0]["facets"]["columnLineage"] = lineage
    return events
