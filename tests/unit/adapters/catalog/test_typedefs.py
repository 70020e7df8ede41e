"""Typedef registration: load from a folder, create the missing, update those defined differently, in at most three
calls; one call and no write when the catalog is up to date."""

from __future__ import annotations

import json

import pytest

from olparser.adapters.catalog import CatalogUploader, load_typedefs, register_typedefs
from olparser.adapters.catalog.type_ownership import marked
from olparser.adapters.catalog.typedefs import (
    TypedefReport,
    same_definition,
    split_new_and_existing,
    without_missing_ends,
)
from olparser.lineage.databricks_model import purview_databricks_typedefs
from tools.cli import main as cli_main

from .atlas_stub import AtlasStub, Fault


def holding_purviews_model(atlas: AtlasStub) -> AtlasStub:
    """The stub as a Purview account: it holds Purview's built-in Databricks model already."""
    for category, defs in purview_databricks_typedefs().items():
        for definition in defs:
            atlas.typedefs[(category, definition["name"])] = definition
    return atlas


@pytest.fixture(autouse=True)
def purview(atlas: AtlasStub) -> AtlasStub:
    return holding_purviews_model(atlas)


PROCESS_DEF = {
    "name": "ol_spark_process",
    "superTypes": ["Process"],
    "category": "ENTITY",
    "attributeDefs": [{"name": "columnMapping", "typeName": "string", "isOptional": True, "cardinality": "SINGLE"}],
}
DATASET_DEF = {"name": "ol_dataset", "superTypes": ["DataSet"], "category": "ENTITY", "attributeDefs": []}
LINK_DEF = {
    "name": "ol_dataset_process",
    "category": "RELATIONSHIP",
    "relationshipCategory": "ASSOCIATION",
    "endDef1": {"type": "ol_spark_process", "name": "datasets"},
    "endDef2": {"type": "ol_dataset", "name": "process"},
}


@pytest.fixture
def typedef_dir(tmp_path):
    (tmp_path / "10-entities.json").write_text(json.dumps({"entityDefs": [PROCESS_DEF, DATASET_DEF]}))
    (tmp_path / "20-relationships.json").write_text(json.dumps({"relationshipDefs": [LINK_DEF]}))
    (tmp_path / "notes.txt").write_text("not a typedef")
    return tmp_path


def test_load_merges_files_in_name_order(typedef_dir):
    assert load_typedefs(typedef_dir) == {"entityDefs": [PROCESS_DEF, DATASET_DEF], "relationshipDefs": [LINK_DEF]}


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "bad.json: not valid JSON"),
        ('{"entityDef": []}', "bad.json: unknown keys ['entityDef']"),
        ('{"entityDefs": [{"superTypes": ["DataSet"]}]}', "bad.json: an entry in entityDefs has no name"),
        ('{"entityDefs": [{"name": "ol_dataset"}]}', "bad.json: ol_dataset is already defined in 10-entities.json"),
    ],
)
def test_load_names_the_file_and_the_problem(typedef_dir, content, message):
    (typedef_dir / "bad.json").write_text(content)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_typedefs(typedef_dir)


def test_split_by_category_and_name():
    headers = [{"name": "ol_dataset", "category": "ENTITY"}, {"name": "ol_spark_process", "category": "STRUCT"}]
    new, existing = split_new_and_existing({"entityDefs": [PROCESS_DEF, DATASET_DEF]}, headers)
    assert new == {"entityDefs": [PROCESS_DEF]} and existing == {"entityDefs": [DATASET_DEF]}


def test_first_run_creates_second_run_finds_them_up_to_date(atlas, client, policy, typedef_dir):
    typedefs = load_typedefs(typedef_dir)
    first = register_typedefs(client, typedefs, policy)
    assert (first.created, first.updated, first.calls) == (
        ("ol_spark_process", "ol_dataset", "ol_dataset_process"),
        (),
        2,
    )
    assert [(r.method, r.path.rsplit("/v2", 1)[1]) for r in atlas.requests] == [
        ("GET", "/types/typedefs"),
        ("POST", "/types/typedefs"),
    ]
    assert first.describe() == (
        "created 3 (ol_spark_process, ol_dataset, ol_dataset_process); 0 up to date (2 calls); "
        "Purview's Databricks model used as it is (17 types)"
    )

    second = register_typedefs(client, typedefs, policy)
    assert (second.created, second.updated, second.calls) == ((), (), 1)
    assert second.unchanged == ("ol_spark_process", "ol_dataset", "ol_dataset_process")
    assert [r.method for r in atlas.requests] == ["GET", "POST", "GET"]  # nothing written the second time
    assert second.describe() == "up to date (3 types, 1 call); Purview's Databricks model used as it is (17 types)"


def test_a_changed_definition_is_updated_and_only_that_one(atlas, client, policy, typedef_dir):
    register_typedefs(client, load_typedefs(typedef_dir), policy)
    wider = {
        **PROCESS_DEF,
        "attributeDefs": PROCESS_DEF["attributeDefs"]
        + [{"name": "sparkPlan", "typeName": "string", "isOptional": True, "cardinality": "SINGLE"}],
    }
    report = register_typedefs(client, {"entityDefs": [wider, DATASET_DEF], "relationshipDefs": [LINK_DEF]}, policy)
    assert (report.created, report.updated, report.unchanged, report.calls) == (
        (),
        ("ol_spark_process",),
        ("ol_dataset", "ol_dataset_process"),
        2,
    )
    assert atlas.requests[-1].method == "PUT" and atlas.requests[-1].body == marked({"entityDefs": [wider]})
    assert atlas.typedefs[("entityDefs", "ol_spark_process")] == marked({"entityDefs": [wider]})["entityDefs"][0]
    assert report.describe() == (
        "updated 1 (ol_spark_process); 2 up to date (2 calls); Purview's Databricks model used as it is (17 types)"
    )


def test_mixed_run_takes_three_calls(atlas, client, policy):
    # an earlier definition of ours (it carries the marker), which this version changes
    atlas.typedefs[("entityDefs", "ol_dataset")] = {
        **DATASET_DEF,
        "superTypes": ["Referenceable"],
        "options": {"managedBy": "ol2purview"},
    }
    report = CatalogUploader(client, retry_policy=policy).register_typedefs({"entityDefs": [PROCESS_DEF, DATASET_DEF]})
    assert (report.created, report.updated, report.calls) == (("ol_spark_process",), ("ol_dataset",), 3)
    assert [r.method for r in atlas.requests] == ["GET", "POST", "PUT"]
    assert atlas.requests[1].body == marked({"entityDefs": [PROCESS_DEF]})
    assert atlas.requests[2].body == marked({"entityDefs": [DATASET_DEF]})


def test_a_type_created_meanwhile_starts_over_from_fresh_definitions(atlas, client, policy):
    atlas.faults += [
        Fault(200, body={}),
        Fault(409, body={"errorCode": "ATLAS-409-00-001", "errorMessage": "Given type ol_dataset already exists"}),
    ]
    atlas.typedefs[("entityDefs", "ol_dataset")] = marked({"entityDefs": [DATASET_DEF]})["entityDefs"][0]
    report = register_typedefs(client, {"entityDefs": [DATASET_DEF]}, policy)
    assert (report.created, report.updated, report.unchanged, report.calls) == ((), (), ("ol_dataset",), 3)
    assert [r.method for r in atlas.requests] == ["GET", "POST", "GET"]


@pytest.mark.parametrize(
    "ours,theirs,same",
    [
        (PROCESS_DEF, {**PROCESS_DEF, "guid": "g", "version": 3, "createdBy": "admin"}, True),  # catalog's own fields
        (
            PROCESS_DEF,
            {
                **PROCESS_DEF,
                "attributeDefs": [  # defaults the catalog adds, an attribute someone else added
                    {**PROCESS_DEF["attributeDefs"][0], "isIndexable": False, "valuesMinCount": 0},
                    {"name": "owner", "typeName": "string"},
                ],
            },
            True,
        ),
        (
            {**PROCESS_DEF, "superTypes": ["Process", "ol_base"]},
            {**PROCESS_DEF, "superTypes": ["ol_base", "Process"]},
            True,
        ),
        (PROCESS_DEF, {**PROCESS_DEF, "attributeDefs": []}, False),  # our attribute is missing
        (
            PROCESS_DEF,
            {**PROCESS_DEF, "attributeDefs": [{**PROCESS_DEF["attributeDefs"][0], "typeName": "int"}]},
            False,
        ),
        (LINK_DEF, {**LINK_DEF, "endDef2": {"type": "ol_dataset", "name": "processes"}}, False),
        (DATASET_DEF, None, False),
    ],
)
def test_same_definition_compares_what_we_define(ours, theirs, same):
    assert same_definition(ours, theirs) is same


def test_the_report_says_what_changed_by_name():
    assert TypedefReport(created=("a",), updated=("b", "c"), calls=3, unchanged=("d",)).describe() == (
        "created 1 (a), updated 2 (b, c); 1 up to date (3 calls)"
    )


def test_cli_registers_and_prints_what_it_did(atlas, typedef_dir, capsys, monkeypatch):
    monkeypatch.delenv("PURVIEW_ACCOUNT_NAME", raising=False)
    args = ["typedefs", "--dir", str(typedef_dir), "--atlas-url", atlas.atlas_url, "--user", "u", "--password", "p"]
    assert cli_main(args) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{atlas.atlas_url}: created 3 (ol_spark_process, ol_dataset, ol_dataset_process); 0 up to date (2 calls); "
        "Purview's Databricks model used as it is (17 types)"
    ]
    assert cli_main(args) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{atlas.atlas_url}: up to date (3 types, 1 call); Purview's Databricks model used as it is (17 types)"
    ]
    assert atlas.requests[0].headers["Authorization"] == "Basic dTpw"


def test_cli_without_a_catalog_says_what_to_set(typedef_dir, capsys, monkeypatch, tmp_path):
    for name in ("PURVIEW_ACCOUNT_NAME", "ATLAS_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OL2PURVIEW_DATA_DIR", str(tmp_path))  # no serve runs there
    assert cli_main(["typedefs", "--dir", str(typedef_dir)]) == 2
    assert capsys.readouterr().err == (
        "ol2purview typedefs: no catalog: pass --atlas-url URL, set PURVIEW_ACCOUNT_NAME, PURVIEW_ENDPOINT or ATLAS_ENDPOINT, or start "
        f"`ol2purview serve` (none runs on {tmp_path}; --data DIR names another data folder)\n"
    )


def test_cli_reports_a_rejection(atlas, typedef_dir, capsys):
    atlas.faults += [
        Fault(200, body=[]),
        Fault(400, body={"errorCode": "ATLAS-400-00-011", "errorMessage": "Invalid type definition ol_dataset"}),
    ]
    assert cli_main(["typedefs", "--dir", str(typedef_dir), "--atlas-url", atlas.atlas_url]) == 1
    assert "400 ATLAS-400-00-011: Invalid type definition ol_dataset" in capsys.readouterr().err


def test_a_long_list_of_names_is_cut_to_five_and_a_count():
    names = tuple(f"type_{n}" for n in range(25))
    assert TypedefReport(created=names, calls=2).describe() == (
        "created 25 (type_0, type_1, type_2, type_3, type_4, +20 more); 0 up to date (2 calls)"
    )


def test_a_relationship_to_a_type_the_catalog_lacks_is_not_registered():
    # the connector's ADF relationship defs name Purview's adf_pipeline (olparser/lineage/adf.py); a plain Atlas lacks it
    ours = {
        "entityDefs": [{"name": "spark_process"}],
        "relationshipDefs": [
            {
                "name": "adf_pipeline_spark_processes",
                "endDef1": {"type": "adf_pipeline"},
                "endDef2": {"type": "spark_process"},
            },
            {"name": "own", "endDef1": {"type": "spark_process"}, "endDef2": {"type": "spark_process"}},
        ],
    }
    without = without_missing_ends(ours, [{"name": "Process", "category": "ENTITY"}])
    assert [d["name"] for d in without["relationshipDefs"]] == ["own"]
    assert without["entityDefs"] == ours["entityDefs"]
    purview = [{"name": "adf_pipeline", "category": "ENTITY"}]
    assert without_missing_ends(ours, purview) is ours  # Purview has the type: everything registered


def test_where_the_catalog_lacks_purviews_model_it_is_created_as_purview_defines_it(atlas, client, policy):
    atlas.typedefs.clear()  # an Apache Atlas: no Databricks types, no hive_server
    report = register_typedefs(client, {"entityDefs": [DATASET_DEF]}, policy)
    model = purview_databricks_typedefs()
    created = atlas.requests[1].body
    assert created["entityDefs"] == [*model["entityDefs"], marked({"entityDefs": [DATASET_DEF]})["entityDefs"][0]]
    assert created["relationshipDefs"] == [  # the Hive metastore link needs Purview's hive_server: left out
        d for d in model["relationshipDefs"] if d["name"] != "databricks_workspace_hive_metastore"
    ]
    assert all("options" not in d or "managedBy" not in d["options"] for d in created["relationshipDefs"])
    assert len(report.created) == 11 + 5 + 1 and report.builtin == ()
    again = register_typedefs(client, {"entityDefs": [DATASET_DEF]}, policy)
    assert (again.created, again.updated, again.calls) == ((), (), 1)
    assert len(again.builtin) == 16


def test_purviews_model_is_never_updated_whatever_its_service_type(atlas, client, policy):
    notebook = next(d for d in purview_databricks_typedefs()["entityDefs"] if d["name"] == "databricks_notebook")
    theirs = {
        **notebook,
        "serviceType": "Azure Databricks",
        "attributeDefs": [*notebook["attributeDefs"], {"name": "x"}],
    }
    atlas.typedefs[("entityDefs", "databricks_notebook")] = theirs
    report = register_typedefs(client, {"entityDefs": [DATASET_DEF]}, policy)
    assert [r.method for r in atlas.requests] == ["GET", "POST"]
    assert atlas.requests[1].body == marked({"entityDefs": [DATASET_DEF]})
    assert atlas.typedefs[("entityDefs", "databricks_notebook")] == theirs
    assert report.builtin == tuple(sorted(d["name"] for defs in purview_databricks_typedefs().values() for d in defs))
