"""The custom Atlas types in olparser/lineage/typedefs: well-formed, loadable by pyapacheatlas, and covering every type,
attribute and relationship attribute the builder writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyapacheatlas.core.typedef import EntityTypeDef, RelationshipTypeDef

from olparser.lineage import LineageOptions, build_lineage
from olparser.runs.merge import merge_events
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.settings import TYPEDEFS_DIR
from tests.support.producer_runs import _dbt_model_run
from tests.support.producer_runs import _task_run as _airflow_task_run

from .conftest import SHARED, load_event, load_sequence

PRIMITIVES = {"string", "int", "long", "boolean", "date", "float", "double"}
FILES = sorted(TYPEDEFS_DIR.glob("*.json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def all_defs() -> dict:
    entity_defs, relationship_defs = {}, {}
    for path in FILES:
        body = _load(path)
        entity_defs.update({d["name"]: d for d in body["entityDefs"]})
        relationship_defs.update({d["name"]: d for d in body["relationshipDefs"]})
    return {"entity": entity_defs, "relationship": relationship_defs}


@pytest.fixture(scope="module")
def base_defs() -> dict:
    base = json.loads((SHARED / "atlas" / "atlas_0010-base_model.json").read_text())
    return {d["name"]: d for d in base["entityDefs"]}


def _ancestry(name: str, defs: dict) -> list[str]:
    """The type and all its supertypes."""
    chain = [name]
    for parent in defs[name].get("superTypes") or ():
        chain += _ancestry(parent, defs)
    return chain


def test_files_parse_and_hold_only_entity_and_relationship_defs():
    assert [p.name for p in FILES] == [
        "airflow.json",
        "databricks.json",
        "dbt.json",
        "flink.json",
        "openlineage_datasets.json",
        "openlineage_jobs.json",
        "spark.json",
    ]
    for path in FILES:
        body = _load(path)
        assert set(body) == {"entityDefs", "relationshipDefs"}, path.name
        for definition in body["entityDefs"]:
            assert "attributes" not in definition and isinstance(definition["attributeDefs"], list)


def test_schema_attributes_options_are_lists(all_defs):
    options = {name: d.get("options", {}) for name, d in all_defs["entity"].items()}

    assert options["openlineage_column"] == {"schemaAttributes": ["dataType"]}
    assert options["openlineage_dataset"] == {"schemaElementsAttribute": "columns"}
    assert all(isinstance(o["schemaAttributes"], list) for o in options.values() if "schemaAttributes" in o)


def test_every_supertype_attribute_type_and_relationship_end_exists(all_defs, base_defs):
    known = set(all_defs["entity"]) | set(base_defs)
    assert "adf_pipeline" not in known  # Microsoft's type: referenced, never defined by the connector
    for name, definition in all_defs["entity"].items():
        assert set(definition["superTypes"]) <= known, name
        for attribute in definition["attributeDefs"]:
            assert attribute["typeName"] in PRIMITIVES, (name, attribute["name"])
    purview = {"adf_pipeline"}  # Purview's Data Factory type (olparser/lineage/adf.py); skipped where absent
    for name, definition in all_defs["relationship"].items():
        assert {definition["endDef1"]["type"], definition["endDef2"]["type"]} <= known | purview, name


def test_pyapacheatlas_loads_every_definition_without_losing_attributes():
    for path in FILES:
        body = _load(path)
        for definition in body["entityDefs"]:
            loaded = EntityTypeDef(**{k: v for k, v in definition.items() if k != "category"}).to_json()
            assert loaded["attributeDefs"] == definition["attributeDefs"]
            assert loaded["superTypes"] == definition["superTypes"]
            assert loaded.get("options") == definition.get("options")
        for definition in body["relationshipDefs"]:
            loaded = RelationshipTypeDef(**{k: v for k, v in definition.items() if k != "category"}).to_json()
            assert (loaded["endDef1"], loaded["endDef2"]) == (definition["endDef1"], definition["endDef2"])


def _plans(engine) -> list:
    databricks_env = {
        "spark.databricks.workspaceUrl": "adb-1.2.azuredatabricks.net",
        "spark.databricks.job.id": "7",
        "spark.databricks.job.type": "notebook",
        "spark.databricks.notebook.path": "/etl/nb",
        "user": "u",
    }
    unity = DatasetFacts(
        "dbfs",
        "/mnt/unmounted/t",
        facets={
            "symlinks": {"identifiers": [{"namespace": "unity-catalog", "name": "m.s.t", "type": "TABLE"}]},
            "columnLineage": {"fields": {"x": {"inputFields": [{"namespace": "n", "name": "i", "field": "x"}]}}},
            "schema": {"fields": [{"name": "x", "type": "int"}]},
        },
    )
    runs = [
        merge_events([load_event("accelerator__UnitTestColData_CompleteOlColMessage.json")]),
        merge_events(load_sequence("compat-tests__CLL")[4:8]),
        RunSnapshot(
            "r",
            "ns",
            "app.job",
            "COMPLETE",
            "2024-01-01T00:00:00Z",
            "p",
            run_facets={"environment-properties": {"environment-properties": databricks_env}},
            outputs=(unity,),
        ),
        RunSnapshot(
            "r",
            "ns",
            "app.job",
            "COMPLETE",
            "2024-01-01T00:00:00Z",
            "p",
            run_facets={
                "environment-properties": {
                    "environment-properties": {
                        "spark.databricks.workspaceUrl": "adb-1.2.azuredatabricks.net",
                        "spark.databricks.notebook.path": "/etl/nb",
                    }
                }
            },
            outputs=(unity,),
        ),
        _airflow_task_run(),
        _dbt_model_run(),
    ]
    return [build_lineage(run, engine, LineageOptions()) for run in runs]


def test_everything_the_builder_writes_is_declared(all_defs, base_defs, engine):
    defs = {**base_defs, **all_defs["entity"]}
    written_types = set()
    for plan in _plans(engine):
        for body in plan.entities:
            type_name = body["typeName"]
            written_types.add(type_name)
            ancestry = _ancestry(type_name, defs)
            declared = {a["name"] for ancestor in ancestry for a in defs[ancestor].get("attributeDefs", [])}
            assert set(body["attributes"]) <= declared, (type_name, set(body["attributes"]) - declared)
            ends = {
                end["name"]
                for rel in all_defs["relationship"].values()
                for end in (rel["endDef1"], rel["endDef2"])
                if end["type"] in ancestry
            }
            assert set(body.get("relationshipAttributes", {})) <= ends, type_name
    assert written_types == {
        "databricks_workspace",
        "databricks_notebook",
        "databricks_job",
        "databricks_notebook_task",
        "databricks_process",
        "databricks_unity_catalog_table",
        "openlineage_dataset",
        "openlineage_column",
        "spark_application",
        "spark_process",
        "airflow_dag",
        "airflow_task",
        "airflow_process",
        "dbt_project",
        "dbt_model",
        "dbt_process",
    }
