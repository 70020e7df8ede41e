"""Purview's built-in Databricks model as the connector knows it (olparser/lineage/databricks_model.py) is the model the
accelerator defined in its release 1.0.0 and Purview ships: the same types, supertypes, attributes, options and
relationship ends (../shared/accelerator/Databricks_Types-1.0.0.json)."""

from __future__ import annotations

import json

from olparser.lineage.databricks_model import model_type_names, purview_databricks_typedefs
from tests.support.repository import SHARED

ATTRIBUTE_DEFAULTS = {
    "isOptional": True,
    "cardinality": "SINGLE",
    "isUnique": False,
    "isIndexable": False,
    "valuesMinCount": 0,
    "valuesMaxCount": 1,
    "includeInNotification": False,
}


def _normalised(definition: dict) -> dict:
    """A definition with Atlas's defaults filled in and what Atlas computes (subTypes) left out."""
    out = {"typeVersion": "1.0", **{k: v for k, v in definition.items() if k not in ("subTypes", "category")}}
    if "attributeDefs" in out:
        out["attributeDefs"] = sorted(
            ({**ATTRIBUTE_DEFAULTS, **a} for a in out["attributeDefs"]), key=lambda a: a["name"]
        )
    return out


def _by_name(typesdef: dict, key: str) -> dict:
    return {d["name"]: _normalised(d) for d in typesdef[key]}


def test_the_model_is_the_one_the_accelerator_defined_and_purview_ships():
    accelerator = json.loads((SHARED / "accelerator" / "Databricks_Types-1.0.0.json").read_text())
    model = purview_databricks_typedefs()
    for key in ("entityDefs", "relationshipDefs"):
        assert _by_name(model, key) == _by_name(accelerator, key), key


def test_notebooks_and_job_tasks_are_runnables_and_processes_hang_under_them():
    entities = {d["name"]: d for d in purview_databricks_typedefs()["entityDefs"]}
    assert entities["databricks_notebook"]["superTypes"] == ["databricks_runnable"]
    assert entities["databricks_job_task"]["superTypes"] == ["databricks_runnable"]
    assert entities["databricks_runnable"]["superTypes"] == ["Process"]
    relationship = next(
        d for d in purview_databricks_typedefs()["relationshipDefs"] if d["name"] == "databricks_runnable_processes"
    )
    assert (relationship["relationshipCategory"], relationship["endDef1"], relationship["endDef2"]) == (
        "COMPOSITION",
        {"type": "databricks_runnable", "name": "processes", "isContainer": True, "cardinality": "SET"},
        {"type": "databricks_process", "name": "task", "isContainer": False, "cardinality": "SINGLE"},
    )
    assert len(model_type_names()) == 17
