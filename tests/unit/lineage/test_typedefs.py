"""The custom Atlas types in olparser/lineage/typedefs, with Purview's Databricks model they add to: well-formed,
loadable by pyapacheatlas, and covering every type, attribute and relationship attribute the builder writes, each
relationship attribute naming its relationship def."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyapacheatlas.core.typedef import EntityTypeDef, RelationshipTypeDef

from olparser.lineage import LineageOptions, build_lineage
from olparser.lineage.databricks_model import purview_databricks_typedefs
from olparser.lineage.relationships import RELATIONSHIP_TYPES
from olparser.runs.merge import merge_events
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.settings import TYPEDEFS_DIR
from tests.support.producer_runs import _dbt_model_run
from tests.support.producer_runs import _task_run as _airflow_task_run
from tests.support.repository import SHARED
from tests.support.shared_events import load_event, load_sequence

PRIMITIVES = {"string", "int", "long", "boolean", "date", "float", "double", "array<string>", "map<string,string>"}
FILES = sorted(TYPEDEFS_DIR.glob("*.json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def all_defs() -> dict:
    model = purview_databricks_typedefs()
    entity_defs = {d["name"]: d for d in model["entityDefs"]}
    relationship_defs = {d["name"]: d for d in model["relationshipDefs"]}
    business = {}
    for path in FILES:
        body = _load(path)
        entity_defs.update({d["name"]: d for d in body["entityDefs"]})
        relationship_defs.update({d["name"]: d for d in body["relationshipDefs"]})
        business.update({d["name"]: d for d in body.get("businessMetadataDefs", [])})
    return {"entity": entity_defs, "relationship": relationship_defs, "business": business}


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
        expected = {"entityDefs", "relationshipDefs"} | (
            {"businessMetadataDefs"} if path.name == "databricks.json" else set()
        )
        assert set(body) == expected, path.name
        for definition in body["entityDefs"]:
            assert "attributes" not in definition and isinstance(definition["attributeDefs"], list)


def test_the_connector_defines_none_of_purviews_databricks_types():
    model = {d["name"] for defs in purview_databricks_typedefs().values() for d in defs}
    ours = {d["name"] for path in FILES for defs in _load(path).values() for d in defs}
    assert model & ours == set()


def test_the_business_metadata_carries_what_the_built_in_process_lacks(all_defs):
    (group,) = all_defs["business"].values()
    assert group["name"] == "ol2purview"
    spark = {a["name"]: a["typeName"] for a in all_defs["entity"]["spark_process"]["attributeDefs"]}
    carried = {a["name"]: a["typeName"] for a in group["attributeDefs"]}
    assert carried == {k: v for k, v in spark.items() if k != "columnMapping"}  # columnMapping is Purview's own
    for attribute in group["attributeDefs"]:
        assert json.loads(attribute["options"]["applicableEntityTypes"]) == ["databricks_process"]
        assert ("maxStrLength" in attribute["options"]) == (attribute["typeName"] == "string"), attribute["name"]


def test_every_relationship_type_the_builder_names_has_that_attribute_on_that_type(all_defs, base_defs):
    defs = {**base_defs, **all_defs["entity"]}
    for (type_name, attribute), relationship in RELATIONSHIP_TYPES.items():
        definition = all_defs["relationship"][relationship]
        ancestry = _ancestry(type_name, defs)
        assert any(
            end["name"] == attribute and end["type"] in ancestry
            for end in (definition["endDef1"], definition["endDef2"])
        ), (type_name, attribute, relationship)


def test_schema_attributes_options_are_lists(all_defs):
    options = {name: d.get("options", {}) for name, d in all_defs["entity"].items()}

    assert options["openlineage_column"] == {"schemaAttributes": ["dataType"]}
    assert options["openlineage_dataset"] == {"schemaElementsAttribute": "columns"}
    assert all(isinstance(o["schemaAttributes"], list) for o in options.values() if "schemaAttributes" in o)


def test_every_supertype_attribute_type_and_relationship_end_exists(all_defs, base_defs):
    known = set(all_defs["entity"]) | set(base_defs) | {"hive_server"}  # Purview's Hive type, in its model's ends
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
            declared |= {
                a["name"]
                for group in all_defs["business"].values()
                for a in group["attributeDefs"]
                if set(json.loads(a["options"]["applicableEntityTypes"])) & set(ancestry)
            }
            assert set(body["attributes"]) <= declared, (type_name, set(body["attributes"]) - declared)
            for name, value in body.get("relationshipAttributes", {}).items():
                relationship = all_defs["relationship"][value["relationshipType"]]
                assert any(
                    end["name"] == name and end["type"] in ancestry
                    for end in (relationship["endDef1"], relationship["endDef2"])
                ), (type_name, name)
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
