"""Types the connector did not create are never changed: written with when compatible, else registration stops
naming the type, what differs and TYPE_PREFIX. Earlier releases' types count as ours; Purview's Databricks model is
nobody's: checked and used as it is (a definition of its names that is not Purview's stops registration)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from olparser.adapters.catalog import load_typedefs, register_typedefs
from olparser.adapters.catalog.type_ownership import (
    ForeignTypeConflict,
    ModelTypeConflict,
    TypeNames,
    check_foreign_types,
    check_model,
    check_type_prefix,
    is_ours,
    marked,
    with_type_prefix,
)
from olparser.lineage.databricks_model import purview_databricks_typedefs
from olparser.settings import TYPEDEFS_DIR

NATIVE = Path(__file__).parents[3] / "e2e" / "corpus" / "purview_native_databricks_types.json"
OURS = load_typedefs(TYPEDEFS_DIR)
BASE = {
    "entityDefs": [
        {"name": "Referenceable", "category": "ENTITY", "superTypes": [], "attributeDefs": [{"name": "qualifiedName"}]},
        {
            "name": "Asset",
            "category": "ENTITY",
            "superTypes": ["Referenceable"],
            "attributeDefs": [{"name": "name"}, {"name": "description"}],
        },
        {
            "name": "Process",
            "category": "ENTITY",
            "superTypes": ["Asset"],
            "attributeDefs": [{"name": "inputs"}, {"name": "outputs"}],
        },
        {"name": "DataSet", "category": "ENTITY", "superTypes": ["Asset"], "attributeDefs": []},
    ]
}


def native() -> dict:
    document = json.loads(NATIVE.read_text())
    return {"entityDefs": document["entityDefs"]}


def catalog_with(*extra: dict) -> dict:
    return {"entityDefs": BASE["entityDefs"] + list(extra), "relationshipDefs": []}


def ours(name: str) -> dict:
    return next(d for defs in OURS.values() for d in defs if d["name"] == name)


def test_purviews_model_in_the_catalog_is_checked_and_used_as_it_is():
    model = purview_databricks_typedefs()
    present, upgrades = check_model(model, {**model, "entityDefs": BASE["entityDefs"] + model["entityDefs"]})
    assert (present, upgrades) == ({d["name"] for defs in model.values() for d in defs}, {})
    assert check_model(model, catalog_with()) == (set(), {})  # an Apache Atlas: nothing there, nothing to check


def test_a_definition_of_a_model_type_that_is_not_purviews_stops_registration_naming_what_differs():
    # databricks_notebook and databricks_job as Process subtypes, serviceType 'Databricks Unity Catalog'
    current = catalog_with(*native()["entityDefs"])
    with pytest.raises(ModelTypeConflict) as raised:
        check_model(purview_databricks_typedefs(), current)
    assert raised.value.problems == (
        "type databricks_job (serviceType 'Databricks Unity Catalog') is not Purview's Databricks model: it has no "
        "attribute creatorUsersName",
        "type databricks_notebook (serviceType 'Databricks Unity Catalog') is not Purview's Databricks model: it does "
        "not descend from databricks_runnable; it has no attribute clusterName, sparkVersion, user",
    )
    assert (raised.value.status, raised.value.error_code) == (400, "OL2PURVIEW-NOT-PURVIEW-MODEL")


def test_an_earlier_releases_own_databricks_types_become_purviews_model_by_additions_only():
    earlier = {
        "name": "databricks_notebook",
        "category": "ENTITY",
        "superTypes": ["Asset"],
        "attributeDefs": [{"name": "path", "typeName": "string"}],
        "options": {"managedBy": "ol2purview"},
        "guid": "g",
        "version": 3,
    }
    model = purview_databricks_typedefs()
    runnable = next(d for d in model["entityDefs"] if d["name"] == "databricks_runnable")
    present, upgrades = check_model(model, catalog_with(earlier, runnable))
    assert present == {"databricks_notebook", "databricks_runnable"}
    (upgraded,) = upgrades["entityDefs"]
    assert upgraded["superTypes"] == ["Asset", "databricks_runnable"]  # nothing removed: Atlas would refuse it
    assert [a["name"] for a in upgraded["attributeDefs"]] == ["path", "clusterName", "user", "sparkVersion"]
    assert upgraded["options"] == {"managedBy": "ol2purview"} and "guid" not in upgraded


def test_an_earlier_releases_relationship_that_cannot_become_the_models_is_named_with_the_way_out():
    earlier = {
        "name": "databricks_runnable_processes",
        "category": "RELATIONSHIP",
        "endDef1": {"type": "databricks_job_task", "name": "processes"},
        "endDef2": {"type": "databricks_process", "name": "task"},
        "options": {"managedBy": "ol2purview"},
    }
    with pytest.raises(ModelTypeConflict, match=r"written by an earlier ol2purview release.*make reset"):
        check_model(purview_databricks_typedefs(), {**catalog_with(), "relationshipDefs": [earlier]})


def test_with_a_prefix_only_the_connectors_own_names_change():
    prefixed = with_type_prefix(OURS, "ol_")
    process_links = next(d for d in prefixed["relationshipDefs"] if d["name"] == "ol_databricks_pipeline_processes")
    assert (process_links["endDef1"]["type"], process_links["endDef2"]["type"]) == (
        "ol_databricks_pipeline",
        "databricks_process",  # Purview's: never renamed
    )
    (group,) = prefixed["businessMetadataDefs"]
    assert group["name"] == "ol_ol2purview"
    assert {a["options"]["applicableEntityTypes"] for a in group["attributeDefs"]} == {'["databricks_process"]'}


def test_a_compatible_type_someone_else_created_is_written_with_and_left_alone():
    # same role (DataSet), every attribute we define present, nothing of ours hangs off it
    theirs = {
        "name": "ol_things",
        "category": "ENTITY",
        "serviceType": "Contoso",
        "superTypes": ["DataSet"],
        "attributeDefs": [{"name": "size"}, {"name": "colour"}],
    }
    mine = {
        "entityDefs": [
            {"name": "ol_things", "superTypes": ["DataSet"], "attributeDefs": [{"name": "size"}]},
            {"name": "ol_other", "superTypes": ["DataSet"], "attributeDefs": []},
        ]
    }
    kept, foreign = check_foreign_types(marked(mine), catalog_with(theirs))
    assert foreign == ("ol_things",)
    assert [d["name"] for d in kept["entityDefs"]] == ["ol_other"]


@pytest.mark.parametrize(
    "theirs, reason",
    [
        (
            {"serviceType": "Contoso", "superTypes": ["Process"], "attributeDefs": [{"name": "size"}]},
            "its supertypes ['Process'] lead to Process, ours ['DataSet'] to DataSet",
        ),
        ({"serviceType": "Contoso", "superTypes": ["DataSet"], "attributeDefs": []}, "it has no attribute size"),
        ({"serviceType": "Contoso", "category": "STRUCT"}, "it is a STRUCT type, ours is a ENTITY type"),
    ],
)
def test_an_incompatible_type_names_what_differs(theirs, reason):
    current = catalog_with({"name": "ol_things", "category": "ENTITY", **theirs})
    with pytest.raises(ForeignTypeConflict, match=reason.replace("[", r"\[").replace("]", r"\]")):
        check_foreign_types(
            marked(
                {
                    "entityDefs": [
                        {
                            "name": "ol_things",
                            "category": "ENTITY",
                            "superTypes": ["DataSet"],
                            "attributeDefs": [{"name": "size"}],
                        }
                    ]
                }
            ),
            current,
        )


def test_a_databricks_service_type_does_not_make_a_type_ours():
    # the accelerator's 1.0.0 and Purview's built-in definitions carry serviceType "Databricks": never the connector's
    theirs = {"name": "spark_process", "category": "ENTITY", "serviceType": "Databricks", "superTypes": ["Process"]}
    assert not is_ours(ours("spark_process"), theirs)


def test_an_unmarked_definition_of_an_earlier_release_counts_as_ours():
    earlier = {**copy.deepcopy(ours("spark_process")), "category": "ENTITY"}
    earlier["attributeDefs"] = earlier["attributeDefs"][:3]  # an older release defined fewer attributes
    assert is_ours(ours("spark_process"), earlier)
    assert not is_ours(ours("spark_process"), {**earlier, "attributeDefs": [{"name": "notOurs"}]})
    assert is_ours(
        ours("spark_process"),
        {
            "name": "spark_process",
            "category": "ENTITY",
            "superTypes": ["Asset"],
            "options": {"managedBy": "ol2purview"},
        },
    )


def test_registration_never_writes_a_foreign_type(atlas, client, policy):
    for d in BASE["entityDefs"]:
        atlas.typedefs[("entityDefs", d["name"])] = d
    for category, defs in purview_databricks_typedefs().items():
        for d in defs:
            atlas.typedefs[(category, d["name"])] = d
    theirs = {
        "name": "ol_things",
        "category": "ENTITY",
        "serviceType": "Contoso",
        "superTypes": ["DataSet"],
        "attributeDefs": [{"name": "size"}],
    }
    atlas.typedefs[("entityDefs", "ol_things")] = theirs
    report = register_typedefs(
        client,
        {
            "entityDefs": [
                {
                    "name": "ol_things",
                    "superTypes": ["DataSet"],
                    "attributeDefs": [{"name": "size", "typeName": "int"}],
                },
                {"name": "ol_new", "superTypes": ["DataSet"], "attributeDefs": []},
            ]
        },
        policy,
    )
    assert (report.created, report.updated, report.foreign) == (("ol_new",), (), ("ol_things",))
    assert [r.method for r in atlas.requests] == ["GET", "POST"]
    assert atlas.requests[1].body == {
        "entityDefs": [
            {"name": "ol_new", "superTypes": ["DataSet"], "attributeDefs": [], "options": {"managedBy": "ol2purview"}}
        ]
    }
    assert atlas.typedefs[("entityDefs", "ol_things")] == theirs
    assert report.describe() == (
        "created 1 (ol_new); 0 up to date (2 calls); not ours, used as they are: ol_things; "
        "Purview's Databricks model used as it is (17 types)"
    )


def test_type_prefix_renames_every_name_and_reference():
    prefixed = with_type_prefix(OURS, "ol_")
    names = {d["name"] for defs in prefixed.values() for d in defs}
    assert names == {"ol_" + d["name"] for defs in OURS.values() for d in defs}
    link = next(d for d in prefixed["relationshipDefs"] if d["name"] == "ol_spark_application_processes")
    assert (link["endDef1"]["type"], link["endDef2"]["type"]) == ("ol_spark_application", "ol_spark_process")
    process = next(d for d in prefixed["entityDefs"] if d["name"] == "ol_spark_process")
    assert process["superTypes"] == ["Process"]  # the base model is not ours: never renamed
    assert with_type_prefix(
        {
            "entityDefs": [
                {
                    "name": "a",
                    "attributeDefs": [{"name": "x", "typeName": "array<a>"}, {"name": "y", "typeName": "string"}],
                }
            ]
        },
        "p_",
    )["entityDefs"][0]["attributeDefs"] == [
        {"name": "x", "typeName": "array<p_a>"},
        {"name": "y", "typeName": "string"},
    ]


def test_type_names_translate_requests_and_answers():
    names = TypeNames(["databricks_notebook", "databricks_process"], "ol_")
    body = {
        "entities": [
            {
                "typeName": "databricks_process",
                "attributes": {"qualifiedName": "q", "typeName": "x"},
                "relationshipAttributes": {
                    "notebook": {"typeName": "databricks_notebook", "uniqueAttributes": {"qualifiedName": "n"}}
                },
            }
        ]
    }
    sent = names.outgoing(body)
    assert sent["entities"][0]["typeName"] == "ol_databricks_process"
    assert sent["entities"][0]["relationshipAttributes"]["notebook"]["typeName"] == "ol_databricks_notebook"
    assert sent["entities"][0]["attributes"]["typeName"] == "x"  # not one of ours: unchanged
    assert names.incoming(sent) == body
    assert names.outgoing_url("http://h/api/atlas/v2/entity/bulk/uniqueAttribute/type/databricks_notebook") == (
        "http://h/api/atlas/v2/entity/bulk/uniqueAttribute/type/ol_databricks_notebook"
    )
    assert names.outgoing_url("http://h/api/atlas/v2/types/typedef/name/databricks_notebook").endswith(
        "/name/databricks_notebook"
    )
    assert names.incoming({"typeName": "databricks_notebook"}) == {"typeName": "databricks_notebook"}  # a native one


@pytest.mark.parametrize("prefix", ["1x", "ol-", "o l", "x" * 41])
def test_a_bad_type_prefix_is_refused_naming_the_setting(prefix):
    with pytest.raises(ValueError, match="TYPE_PREFIX must start with a letter"):
        check_type_prefix(prefix)
