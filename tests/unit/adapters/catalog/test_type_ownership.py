"""Types the connector did not create are never changed: written with when compatible, else registration stops
naming the type, what differs and TYPE_PREFIX. The reference connector's and earlier releases' types count as ours."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from olparser.adapters.catalog import load_typedefs, register_typedefs
from olparser.adapters.catalog.type_ownership import (
    ForeignTypeConflict,
    TypeNames,
    check_foreign_types,
    check_type_prefix,
    is_ours,
    marked,
    with_type_prefix,
)
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


def test_purview_native_databricks_types_stop_registration_naming_each_difference_and_type_prefix():
    current = catalog_with(*native()["entityDefs"])
    with pytest.raises(ForeignTypeConflict) as raised:
        check_foreign_types(marked(OURS), current)
    assert raised.value.problems == (
        "type databricks_job (serviceType 'Databricks Unity Catalog') differs from the connector's: its supertypes "
        "['Process'] lead to Process, ours ['Asset'] to neither Process nor DataSet; "
        "our relationships databricks_workspace_jobs, databricks_job_tasks would add attributes to it",
        "type databricks_notebook (serviceType 'Databricks Unity Catalog') differs from the connector's: its "
        "supertypes ['Process'] lead to Process, ours ['Asset'] to neither Process nor DataSet; it has no attribute "
        "notebookId, path; our relationships databricks_workspace_notebooks, databricks_notebook_task_notebook, "
        "databricks_notebook_processes would add attributes to it",
    )
    assert str(raised.value).endswith(
        "set TYPE_PREFIX (for example TYPE_PREFIX=ol_) so that the connector's types get their own names"
    )
    assert (raised.value.status, raised.value.error_code) == (400, "OL2PURVIEW-TYPE-NOT-OURS")


def test_with_a_prefix_the_native_types_are_no_longer_in_the_way():
    current = catalog_with(*native()["entityDefs"])
    kept, foreign = check_foreign_types(marked(with_type_prefix(OURS, "ol_")), current)
    assert foreign == ()
    assert "ol_databricks_notebook" in {d["name"] for d in kept["entityDefs"]}


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


def test_the_reference_connectors_definitions_count_as_ours():
    # deployment/infra/Databricks_Types.json of Purview-ADB-Lineage-Solution-Accelerator: serviceType "Databricks",
    # databricks_notebook under databricks_runnable (a Process)
    reference = {
        "name": "databricks_notebook",
        "category": "ENTITY",
        "serviceType": "Databricks",
        "superTypes": ["databricks_runnable"],
        "attributeDefs": [{"name": "clusterName"}],
    }
    assert is_ours(ours("databricks_notebook"), reference)
    assert not is_ours(ours("databricks_notebook"), {**reference, "serviceType": "Databricks Unity Catalog"})


def test_an_unmarked_definition_of_an_earlier_release_counts_as_ours():
    earlier = {**copy.deepcopy(ours("databricks_process")), "category": "ENTITY"}
    earlier["attributeDefs"] = earlier["attributeDefs"][:3]  # an older release defined fewer attributes
    assert is_ours(ours("databricks_process"), earlier)
    assert not is_ours(ours("databricks_process"), {**earlier, "attributeDefs": [{"name": "notOurs"}]})
    assert is_ours(
        ours("databricks_process"),
        {
            "name": "databricks_process",
            "category": "ENTITY",
            "superTypes": ["Asset"],
            "options": {"managedBy": "ol2purview"},
        },
    )


def test_registration_never_writes_a_foreign_type(atlas, client, policy):
    for d in BASE["entityDefs"]:
        atlas.typedefs[("entityDefs", d["name"])] = d
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
    assert report.describe() == "created 1 (ol_new); 0 up to date (2 calls); not ours, used as they are: ol_things"


def test_type_prefix_renames_every_name_and_reference():
    prefixed = with_type_prefix(OURS, "ol_")
    names = {d["name"] for defs in prefixed.values() for d in defs}
    assert names == {"ol_" + d["name"] for defs in OURS.values() for d in defs}
    task = next(d for d in prefixed["entityDefs"] if d["name"] == "ol_databricks_notebook_task")
    assert task["superTypes"] == ["ol_databricks_job_task"]
    link = next(d for d in prefixed["relationshipDefs"] if d["name"] == "ol_databricks_workspace_notebooks")
    assert (link["endDef1"]["type"], link["endDef2"]["type"]) == ("ol_databricks_workspace", "ol_databricks_notebook")
    process = next(d for d in prefixed["entityDefs"] if d["name"] == "ol_databricks_process")
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
