"""The lineage page's governance route (`GET /_ol2purview/page/governance?guid=`): what the details panel shows of an
entity's classifications (its own, then those propagated to it with the entity each comes from), labels and glossary
terms (with their glossary's name); refusals as Atlas errors. The page itself: tests/e2e/test_catalog_page.py."""

from __future__ import annotations

import requests

from tests.catalog_server.builders import blob, process
from tests.support.atlas_answers import errors, ok
from tools.catalog import CatalogServer


def governance(catalog: CatalogServer, **params: str) -> requests.Response:
    return requests.get(f"{catalog.url}/_ol2purview/page/governance", params=params, timeout=10)


def test_governance_of_an_entity(open_catalog: CatalogServer) -> None:
    atlas = open_catalog.atlas_url
    ok(
        requests.post(
            f"{atlas}/types/typedefs", timeout=10, json={"classificationDefs": [{"name": "PII"}, {"name": "GOLD"}]}
        )
    )
    entities = [blob("-in.csv", "in.csv"), blob("-out.csv", "out.csv")]
    entities.append(process("-p", "p", [{"guid": "-in.csv"}], [{"guid": "-out.csv"}]))
    g = {
        k[1:]: v
        for k, v in ok(requests.post(f"{atlas}/entity/bulk", timeout=10, json={"entities": entities}))[
            "guidAssignments"
        ].items()
    }
    ok(requests.post(f"{atlas}/entity/guid/{g['in.csv']}/classifications", timeout=10, json=[{"typeName": "PII"}]))
    ok(requests.post(f"{atlas}/entity/guid/{g['out.csv']}/classifications", timeout=10, json=[{"typeName": "GOLD"}]))
    ok(requests.put(f"{atlas}/entity/guid/{g['out.csv']}/labels", timeout=10, json=["nightly"]))
    glossary = ok(
        requests.post(f"{atlas}/glossary", timeout=10, json={"name": "Sales words", "qualifiedName": "sales"})
    )
    term = ok(
        requests.post(
            f"{atlas}/glossary/term", timeout=10, json={"name": "Order", "anchor": {"glossaryGuid": glossary["guid"]}}
        )
    )["guid"]
    ok(requests.post(f"{atlas}/glossary/terms/{term}/assignedEntities", timeout=10, json=[{"guid": g["out.csv"]}]))

    assert ok(governance(open_catalog, guid=g["out.csv"])) == {
        "classifications": [
            {"typeName": "GOLD", "attributes": {}, "from": None},
            {
                "typeName": "PII",
                "attributes": {},
                "from": {"guid": g["in.csv"], "typeName": "azure_blob_path", "name": "in.csv"},
            },
        ],
        "labels": ["nightly"],
        "terms": [
            {"guid": term, "name": "Order", "glossary": "Sales words"}
        ],  # the glossary's name, not its qualifiedName
    }
    assert ok(governance(open_catalog, guid=g["p"])) == {
        "classifications": [
            {
                "typeName": "PII",
                "attributes": {},
                "from": {"guid": g["in.csv"], "typeName": "azure_blob_path", "name": "in.csv"},
            }
        ],
        "labels": [],
        "terms": [],
    }
    assert errors({"no guid": governance(open_catalog), "unknown": governance(open_catalog, guid="nope")}) == {
        "no guid": (400, "ATLAS-400-00-01A", "invalid parameters: give ?guid=..."),
        "unknown": (404, "ATLAS-404-00-005", "Given instance guid nope is invalid/not found"),
    }
