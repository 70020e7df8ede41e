"""Classifications and labels on the embedded catalog, as Apache Atlas keeps them: added, updated and removed by guid
and by unique attribute, on entity creation, in bulk; propagated along lineage (an input's classification reaches the
process and what it writes), kept or taken away as Atlas does when a path or an entity goes; labels set, added and
removed. Each refused request answers Atlas's error code."""

from __future__ import annotations

import pytest
import requests

from tests.support.atlas_answers import error, ok
from tools.catalog import CatalogServer

LAKE = "https://acct.dfs.core.windows.net/lake"
PII = "CONTOSO.PII"
FINANCE = "CONTOSO.FINANCE"


@pytest.fixture
def atlas(open_catalog: CatalogServer) -> str:
    url = open_catalog.atlas_url
    ok(
        requests.post(
            f"{url}/types/typedefs",
            timeout=10,
            json={
                "classificationDefs": [
                    {"name": PII, "attributeDefs": [{"name": "level", "typeName": "int"}]},
                    {"name": FINANCE},
                    {"name": "CONTOSO.PROCESS_ONLY", "entityTypes": ["Process"]},
                ]
            },
        )
    )
    return url


def lineage(atlas: str) -> dict[str, str]:
    """raw.csv -> copy -> clean.csv -> publish -> report.csv; guids by name."""

    def path(name: str) -> dict:
        qualified_name = f"{LAKE}/{name}.csv"
        return {
            "typeName": "azure_datalake_gen2_path",
            "guid": f"-{name}",
            "attributes": {"qualifiedName": qualified_name, "name": f"{name}.csv"},
        }

    def step(name: str, source: str, target: str) -> dict:
        attributes = {"qualifiedName": f"proc://{name}", "name": name}
        io = {"inputs": [{"guid": f"-{source}"}], "outputs": [{"guid": f"-{target}"}]}
        return {"typeName": "Process", "guid": f"-{name}", "attributes": {**attributes, **io}}

    entities = [
        path("raw"),
        step("copy", "raw", "clean"),
        path("clean"),
        step("publish", "clean", "report"),
        path("report"),
    ]
    assigned = ok(requests.post(f"{atlas}/entity/bulk", timeout=10, json={"entities": entities}))["guidAssignments"]
    return {key[1:]: guid for key, guid in assigned.items()}


def carried(atlas: str, guid: str) -> list[tuple[str, str]]:
    """(classification, the entity it comes from) as the entity answers them, its own first, sorted."""
    entity = ok(requests.get(f"{atlas}/entity/guid/{guid}", timeout=10))["entity"]
    found = [(c["typeName"], c["entityGuid"]) for c in entity.get("classifications", [])]
    own = [c for c in found if c[1] == guid]
    return own + sorted(c for c in found if c[1] != guid)


def test_add_read_update_remove_by_guid(atlas: str) -> None:
    g = lineage(atlas)
    url = f"{atlas}/entity/guid/{g['raw']}"
    ok(requests.post(f"{url}/classifications", timeout=10, json=[{"typeName": PII, "attributes": {"level": "3"}}]))
    listed = ok(requests.get(f"{url}/classifications", timeout=10))
    assert listed == {
        "list": [
            {
                "typeName": PII,
                "attributes": {"level": 3},
                "entityGuid": g["raw"],
                "entityStatus": "ACTIVE",
                "propagate": True,
                "removePropagationsOnEntityDelete": False,
                "validityPeriods": [],
            }
        ],
        "startIndex": 0,
        "pageSize": 1,
        "totalCount": 1,
        "sortType": "NONE",
    }
    ok(requests.put(f"{url}/classifications", timeout=10, json=[{"typeName": PII, "attributes": {"level": 5}}]))
    assert ok(requests.get(f"{url}/classification/{PII}", timeout=10))["attributes"] == {"level": 5}
    header = ok(requests.get(f"{url}/header", timeout=10))
    assert (header["classificationNames"], header["lastModifiedTS"]) == ([PII], "3")
    again = requests.post(f"{url}/classifications", timeout=10, json=[{"typeName": PII}])
    assert error(again) == (
        400,
        "ATLAS-400-00-01A",
        f"invalid parameters: entity: {g['raw']}, already associated with classification: {PII}",
    )
    ok(requests.delete(f"{url}/classification/{PII}", timeout=10))
    assert carried(atlas, g["raw"]) == []
    assert error(requests.delete(f"{url}/classification/{PII}", timeout=10)) == (
        404,
        "ATLAS-404-00-003",
        f"No classifications associated with entity: {g['raw']}",
    )


def test_refusals_name_the_problem(atlas: str) -> None:
    g = lineage(atlas)
    url = f"{atlas}/entity/guid/{g['raw']}/classifications"
    assert error(requests.post(url, timeout=10, json=[{"typeName": "NO.SUCH"}])) == (
        404,
        "ATLAS-404-00-008",
        "Given classification NO.SUCH was invalid",
    )
    assert error(requests.post(url, timeout=10, json=[{"typeName": PII, "attributes": {"level": "high"}}]))[:2] == (
        400,
        "ATLAS-400-00-028",
    )
    assert error(requests.post(url, timeout=10, json=[{"typeName": "CONTOSO.PROCESS_ONLY"}]))[:2] == (
        400,
        "ATLAS-400-00-055",
    )
    assert error(requests.put(url, timeout=10, json=[{"typeName": FINANCE}])) == (
        400,
        "ATLAS-400-00-06D",
        f"Classification {FINANCE} is not associated with entity",
    )
    assert error(requests.post(url, timeout=10, json=[]))[:2] == (400, "ATLAS-400-00-01A")
    missing = requests.post(f"{atlas}/entity/guid/nope/classifications", timeout=10, json=[{"typeName": PII}])
    assert error(missing) == (404, "ATLAS-404-00-005", "Given instance guid nope is invalid/not found")


def test_classifications_flow_down_lineage_and_go_with_their_source(atlas: str) -> None:
    g = lineage(atlas)
    ok(requests.post(f"{atlas}/entity/guid/{g['clean']}/classifications", timeout=10, json=[{"typeName": PII}]))
    assert {name: carried(atlas, guid) for name, guid in g.items()} == {
        "raw": [],
        "copy": [],
        "clean": [(PII, g["clean"])],
        "publish": [(PII, g["clean"])],
        "report": [(PII, g["clean"])],
    }
    search = ok(requests.post(f"{atlas}/search/basic", timeout=10, json={"typeName": "DataSet", "query": "report"}))
    assert search["entities"][0]["classificationNames"] == [PII]
    # not propagated: stays where it is
    ok(
        requests.post(
            f"{atlas}/entity/guid/{g['raw']}/classifications",
            timeout=10,
            json=[{"typeName": FINANCE, "propagate": False}],
        )
    )
    assert carried(atlas, g["copy"]) == []
    # turned on, it flows; removed at its source, it goes everywhere
    ok(
        requests.put(
            f"{atlas}/entity/guid/{g['raw']}/classifications",
            timeout=10,
            json=[{"typeName": FINANCE, "propagate": True}],
        )
    )
    assert carried(atlas, g["report"]) == [(FINANCE, g["raw"]), (PII, g["clean"])]
    ok(requests.delete(f"{atlas}/entity/guid/{g['clean']}/classification/{PII}", timeout=10))
    assert [carried(atlas, g[n]) for n in ("publish", "report")] == [[(FINANCE, g["raw"])], [(FINANCE, g["raw"])]]


def test_a_lost_path_keeps_what_it_carried_unless_the_classification_says_otherwise(atlas: str) -> None:
    g = lineage(atlas)
    ok(
        requests.post(
            f"{atlas}/entity/bulk/classification",
            timeout=10,
            json={"classification": {"typeName": PII}, "entityGuids": [g["raw"]]},
        )
    )
    ok(
        requests.post(
            f"{atlas}/entity/guid/{g['copy']}/classifications",
            timeout=10,
            json=[{"typeName": FINANCE, "removePropagationsOnEntityDelete": True}],
        )
    )
    # the process `publish` is deleted: Atlas keeps PII (removePropagationsOnEntityDelete false) on report.csv
    ok(requests.delete(f"{atlas}/entity/guid/{g['publish']}", timeout=10))
    assert carried(atlas, g["report"]) == [(PII, g["raw"])]
    # the process `copy` is deleted: its FINANCE leaves clean.csv; raw's PII stays on it
    ok(requests.delete(f"{atlas}/entity/guid/{g['copy']}", timeout=10))
    assert carried(atlas, g["clean"]) == [(PII, g["raw"])]


def test_new_lineage_carries_classifications_and_a_new_entity_brings_its_own(atlas: str) -> None:
    g = lineage(atlas)
    ok(requests.post(f"{atlas}/entity/guid/{g['report']}/classifications", timeout=10, json=[{"typeName": PII}]))
    created = ok(
        requests.post(
            f"{atlas}/entity",
            timeout=10,
            json={
                "entity": {
                    "typeName": "Process",
                    "attributes": {
                        "qualifiedName": "proc://archive",
                        "name": "archive",
                        "inputs": [{"guid": g["report"]}],
                        "outputs": [
                            {
                                "typeName": "azure_datalake_gen2_path",
                                "uniqueAttributes": {"qualifiedName": f"{LAKE}/raw.csv"},
                            }
                        ],
                    },
                    "classifications": [{"typeName": FINANCE}],
                    "labels": ["nightly"],
                }
            },
        )
    )
    header = created["mutatedEntities"]["CREATE"][0]
    assert (header["classificationNames"], header["labels"], header["displayText"]) == (
        [FINANCE],
        ["nightly"],
        "archive",
    )
    archive = header["guid"]
    assert carried(atlas, g["raw"]) == [(FINANCE, archive), (PII, g["report"])]
    # a classification does not come back to where it started (raw -> ... -> report -> archive -> raw)
    assert carried(atlas, g["report"]) == [(PII, g["report"]), (FINANCE, archive)]


def test_by_unique_attribute_and_set_classifications(atlas: str) -> None:
    g = lineage(atlas)
    by_name = f"{atlas}/entity/uniqueAttribute/type/azure_datalake_gen2_path"
    raw = {"attr:qualifiedName": f"{LAKE}/raw.csv"}
    ok(requests.post(f"{by_name}/classifications", params=raw, timeout=10, json=[{"typeName": PII}]))
    ok(
        requests.put(
            f"{by_name}/classifications", params=raw, timeout=10, json=[{"typeName": PII, "attributes": {"level": 1}}]
        )
    )
    assert ok(requests.get(f"{by_name}/classification/{PII}", params=raw, timeout=10))["attributes"] == {"level": 1}
    summary = ok(
        requests.post(
            f"{atlas}/entity/bulk/setClassifications",
            timeout=10,
            json={
                "guidHeaderMap": {
                    "any": {
                        "typeName": "azure_datalake_gen2_path",
                        "attributes": {"qualifiedName": f"{LAKE}/raw.csv"},
                        "classifications": [{"typeName": FINANCE}],
                    },
                    "other": {
                        "typeName": "azure_datalake_gen2_path",
                        "attributes": {"qualifiedName": f"{LAKE}/none.csv"},
                        "classifications": [],
                    },
                }
            },
        )
    )
    assert summary == [
        f"Delete:{g['raw']}:azure_datalake_gen2_path:qualifiedName -> {PII}:(Done)",
        f"Add:{g['raw']}:azure_datalake_gen2_path:qualifiedName -> {FINANCE}:(Done)",
        "Entity:azure_datalake_gen2_path:qualifiedName:[Not found]:(Skipped)",
    ]
    ok(requests.delete(f"{by_name}/classification/{FINANCE}", params=raw, timeout=10))
    assert carried(atlas, g["raw"]) == []


def test_labels_set_add_remove(atlas: str) -> None:
    g = lineage(atlas)
    url = f"{atlas}/entity/guid/{g['raw']}/labels"
    ok(requests.post(url, timeout=10, json=["raw", "Example.Label"]))
    ok(requests.put(url, timeout=10, json=["gold", "raw"]))
    by_name = f"{atlas}/entity/uniqueAttribute/type/azure_datalake_gen2_path/labels"
    ok(requests.delete(by_name, params={"attr:qualifiedName": f"{LAKE}/raw.csv"}, timeout=10, json=["raw"]))
    entity = ok(requests.get(f"{atlas}/entity/guid/{g['raw']}", timeout=10))["entity"]
    assert (entity["labels"], entity["lastModifiedTS"]) == (["Example.Label", "gold"], "4")
    assert error(requests.put(url, timeout=10, json=["has space"])) == (
        400,
        "ATLAS-400-00-090",
        "Invalid label: has space, label should contain alphanumeric characters, '_', '-' or '.'",
    )
    assert error(requests.put(url, timeout=10, json=["x" * 51]))[:2] == (400, "ATLAS-400-00-08F")
    assert error(requests.put(url, timeout=10, json=[]))[:2] == (400, "ATLAS-400-00-01A")
    ok(requests.post(url, timeout=10, json=[]))  # set to none
    assert "labels" not in ok(requests.get(f"{atlas}/entity/guid/{g['raw']}", timeout=10))["entity"]
