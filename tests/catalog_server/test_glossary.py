"""The glossary of the embedded catalog (/glossary…), as Atlas's GlossaryService keeps it and the Data Map API
answers it: glossaries and their terms created, read, listed, updated and deleted; a term assigned to entities shows
on them (header, relationship attributes, discovery) and carries the term's classifications to them, until it is
dissociated; refused requests answer Atlas's error codes; writes need Data Curator where the entity is."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import requests

from tests.catalog_server.datamap_spec import operation_for, problems
from tests.support.atlas_answers import error, errors, ok
from tools.catalog import CatalogServer

ACCOUNT = "contoso-purview"
LAKE = "https://acct.dfs.core.windows.net/lake"
PII = "CONTOSO.PII"
SYSTEM = ("guid", "createTime", "updateTime")


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[CatalogServer]:
    server = CatalogServer(tmp_path / "catalog.sqlite", account_name=ACCOUNT).start()
    yield server
    server.stop()


def without_system(answer: dict) -> dict:
    """An answer without the values a write chose (guid, times), which are checked for their form."""
    out = dict(answer)
    assert isinstance(out.pop("guid"), str)
    assert all(isinstance(out.pop(key), int) for key in SYSTEM[1:])
    return out


def dataset(atlas: str, name: str, collection: str | None = None) -> str:
    entity = {
        "typeName": "azure_datalake_gen2_path",
        "attributes": {"qualifiedName": f"{LAKE}/{name}", "name": name},
    }
    params = {"collectionId": collection} if collection else {}
    created = ok(requests.post(f"{atlas}/entity", params=params, timeout=10, json={"entity": entity}))
    return str(created["mutatedEntities"]["CREATE"][0]["guid"])


def test_glossaries_and_terms_created_read_listed_updated(catalog: CatalogServer) -> None:
    atlas = catalog.atlas_url
    finance = ok(requests.post(f"{atlas}/glossary", timeout=10, json={"name": "Finance", "shortDescription": "money"}))
    assert without_system(finance) == {
        "qualifiedName": "Finance",
        "name": "Finance",
        "shortDescription": "money",
        "lastModifiedTS": "1",
        "createdBy": "admin",
        "updatedBy": "admin",
        "classifications": [],
        "terms": [],
        "categories": [],
    }
    ok(requests.post(f"{atlas}/glossary", timeout=10, json={"name": "accounting", "qualifiedName": "acc"}))
    listed = ok(requests.get(f"{atlas}/glossary", timeout=10))
    assert [(g["name"], g["qualifiedName"]) for g in listed] == [("accounting", "acc"), ("Finance", "Finance")]
    descending = ok(requests.get(f"{atlas}/glossary", params={"sort": "DESC", "limit": 1}, timeout=10))
    assert [g["name"] for g in descending] == ["Finance"]
    assert [g["name"] for g in ok(requests.get(f"{atlas}/glossary", params={"offset": 1}, timeout=10))] == ["Finance"]

    anchor = {"glossaryGuid": finance["guid"]}
    revenue = ok(
        requests.post(
            f"{atlas}/glossary/term",
            timeout=10,
            json={"name": "Revenue", "anchor": anchor, "status": "Approved", "longDescription": "income", "usage": "x"},
        )
    )
    assert without_system(revenue) == {
        "qualifiedName": "Revenue@Finance",
        "name": "Revenue",
        "longDescription": "income",
        "usage": "x",
        "status": "Approved",
        "lastModifiedTS": "1",
        "createdBy": "admin",
        "updatedBy": "admin",
        "classifications": [],
        "anchor": {
            "glossaryGuid": finance["guid"],
            "relationGuid": revenue["anchor"]["relationGuid"],
            "displayText": "Finance",
        },
        "assignedEntities": [],
        "categories": [],
    }
    both = ok(
        requests.post(
            f"{atlas}/glossary/terms",
            timeout=10,
            json=[{"name": "Cost", "anchor": anchor}, {"name": "Margin", "anchor": anchor, "abbreviation": "GM"}],
        )
    )
    assert [(t["qualifiedName"], t["status"], t.get("abbreviation")) for t in both] == [
        ("Cost@Finance", "Draft", None),
        ("Margin@Finance", "Draft", "GM"),
    ]
    headers = ok(requests.get(f"{atlas}/glossary/{finance['guid']}/terms/headers", timeout=10))
    assert [(h["displayText"], h["termGuid"]) for h in headers] == [
        ("Cost", both[0]["guid"]),
        ("Margin", both[1]["guid"]),
        ("Revenue", revenue["guid"]),
    ]
    paged = ok(requests.get(f"{atlas}/glossary/{finance['guid']}/terms", params={"offset": 1, "limit": 1}, timeout=10))
    assert [t["name"] for t in paged] == ["Margin"]
    glossary = ok(requests.get(f"{atlas}/glossary/{finance['guid']}", timeout=10))
    assert sorted(t["displayText"] for t in glossary["terms"]) == ["Cost", "Margin", "Revenue"]

    # PUT: a term's descriptions and Purview's fields (its name and qualifiedName stay); a glossary's name
    updated = ok(
        requests.put(
            f"{atlas}/glossary/term/{revenue['guid']}",
            timeout=10,
            json={"name": "Turnover", "status": "Expired", "shortDescription": "sales", "nickName": "rev"},
        )
    )
    assert (updated["name"], updated["qualifiedName"], updated["status"], updated["nickName"]) == (
        "Revenue",
        "Revenue@Finance",
        "Expired",
        "rev",
    )
    assert (updated["shortDescription"], updated["lastModifiedTS"]) == ("sales", "2")
    renamed = ok(requests.put(f"{atlas}/glossary/{finance['guid']}", timeout=10, json={"name": "Money"}))
    assert (renamed["name"], renamed["qualifiedName"], "shortDescription" in renamed) == ("Money", "Finance", False)
    assert ok(requests.get(f"{atlas}/glossary/term/{revenue['guid']}", timeout=10))["anchor"]["displayText"] == "Money"


def test_refusals_name_the_problem(catalog: CatalogServer) -> None:
    atlas = catalog.atlas_url
    finance = ok(requests.post(f"{atlas}/glossary", timeout=10, json={"name": "Finance"}))["guid"]
    anchor = {"glossaryGuid": finance}
    ok(requests.post(f"{atlas}/glossary/term", timeout=10, json={"name": "Revenue", "anchor": anchor}))
    refusals = {
        "same glossary name": requests.post(f"{atlas}/glossary", timeout=10, json={"name": "Finance"}),
        "glossary without a name": requests.post(f"{atlas}/glossary", timeout=10, json={"language": "en"}),
        "'@' in a name": requests.post(f"{atlas}/glossary", timeout=10, json={"name": "a@b"}),
        "term without an anchor": requests.post(f"{atlas}/glossary/term", timeout=10, json={"name": "Cost"}),
        "term of no glossary": requests.post(
            f"{atlas}/glossary/term", timeout=10, json={"name": "Cost", "anchor": {"glossaryGuid": "nope"}}
        ),
        "same term": requests.post(f"{atlas}/glossary/term", timeout=10, json={"name": "Revenue", "anchor": anchor}),
        "term status": requests.post(
            f"{atlas}/glossary/term", timeout=10, json={"name": "Cost", "anchor": anchor, "status": "Done"}
        ),
        "term template": requests.post(
            f"{atlas}/glossary/term",
            timeout=10,
            json={"name": "Cost", "anchor": anchor, "templateName": ["No template"]},
        ),
        "no terms": requests.post(f"{atlas}/glossary/terms", timeout=10, json=[]),
        "no such glossary": requests.get(f"{atlas}/glossary/nope", timeout=10),
        "a term is not a glossary": requests.get(
            f"{atlas}/glossary/{ok(requests.get(f'{atlas}/glossary/{finance}', timeout=10))['terms'][0]['termGuid']}",
            timeout=10,
        ),
    }
    assert errors(refusals) == {
        "same glossary name": (409, "ATLAS-409-00-007", "Glossary with name Finance already exists"),
        "glossary without a name": (
            400,
            "ATLAS-400-00-079",
            "Attributes qualifiedName and name are missing. Failed to derive a unique name for Glossary",
        ),
        "'@' in a name": (
            400,
            "ATLAS-400-00-083",
            "name cannot contain following special chars ('@', '.', '<', '>')",
        ),
        "term without an anchor": (400, "ATLAS-400-00-072", "Mandatory anchor attribute is missing"),
        "term of no glossary": (404, "ATLAS-404-00-005", "Given instance guid nope is invalid/not found"),
        "same term": (409, "ATLAS-409-00-009", "Glossary term with qualifiedName Revenue@Finance already exists"),
        "term status": (
            400,
            "ATLAS-400-00-01A",
            "invalid parameters: status must be one of Draft, Approved, Alert, Expired",
        ),
        "term template": (404, "ATLAS-404-00-001", "Given typename No template was invalid"),
        "no terms": (400, "ATLAS-400-00-029", "glossaryTerm(s) is null/empty"),
        "no such glossary": (404, "ATLAS-404-00-005", "Given instance guid nope is invalid/not found"),
        "a term is not a glossary": (
            404,
            "ATLAS-404-00-005",
            f"Given instance guid {refusals['a term is not a glossary'].url.rsplit('/', 1)[1]} is invalid/not found",
        ),
    }
    # nothing refused was written
    assert [g["name"] for g in ok(requests.get(f"{atlas}/glossary", timeout=10))] == ["Finance"]
    assert [h["displayText"] for h in ok(requests.get(f"{atlas}/glossary/{finance}/terms/headers", timeout=10))] == [
        "Revenue"
    ]


def test_an_assigned_term_shows_on_the_entity_and_brings_its_classifications(catalog: CatalogServer) -> None:
    atlas = catalog.atlas_url
    ok(requests.post(f"{atlas}/types/typedefs", timeout=10, json={"classificationDefs": [{"name": PII}]}))
    finance = ok(requests.post(f"{atlas}/glossary", timeout=10, json={"name": "Finance"}))["guid"]
    term = ok(
        requests.post(
            f"{atlas}/glossary/term", timeout=10, json={"name": "Revenue", "anchor": {"glossaryGuid": finance}}
        )
    )["guid"]
    ok(requests.post(f"{atlas}/entity/guid/{term}/classifications", timeout=10, json=[{"typeName": PII}]))
    orders, other = dataset(atlas, "orders.csv"), dataset(atlas, "other.csv")

    ok(requests.post(f"{atlas}/glossary/terms/{term}/assignedEntities", timeout=10, json=[{"guid": orders}]))
    assigned = ok(requests.get(f"{atlas}/glossary/terms/{term}/assignedEntities", timeout=10))
    relation = assigned[0]["relationshipGuid"]
    assert assigned == [
        {
            "guid": orders,
            "typeName": "azure_datalake_gen2_path",
            "uniqueAttributes": {"qualifiedName": f"{LAKE}/orders.csv"},
            "displayText": "orders.csv",
            "entityStatus": "ACTIVE",
            "relationshipType": "AtlasGlossarySemanticAssignment",
            "relationshipGuid": relation,
            "relationshipStatus": "ACTIVE",
        }
    ]
    header = ok(requests.get(f"{atlas}/entity/guid/{orders}/header", timeout=10))
    meaning = {"termGuid": term, "relationGuid": relation, "displayText": "Revenue", "qualifiedName": "Revenue@Finance"}
    assert (header["meaningNames"], header["meanings"], header["classificationNames"]) == (
        ["Revenue"],
        [meaning],
        [PII],
    )
    assert header["classifications"][0]["entityGuid"] == term  # propagated from the term
    entity = ok(requests.get(f"{atlas}/entity/guid/{orders}", timeout=10))["entity"]
    assert [(m["guid"], m["displayText"]) for m in entity["relationshipAttributes"]["meanings"]] == [(term, "Revenue")]
    found = ok(
        requests.post(
            f"{catalog.url}/datamap/api/search/query",
            params={"api-version": "2023-09-01"},
            timeout=10,
            json={"keywords": None, "filter": {"and": [{"term": "Revenue", "glossary": "Finance"}]}},
        )
    )
    assert [(v["id"], v["term"], v["classification"]) for v in found["value"]] == [
        (orders, [{"name": "Revenue", "glossaryName": "Finance"}], [PII])
    ]

    again = requests.post(f"{atlas}/glossary/terms/{term}/assignedEntities", timeout=10, json=[{"guid": orders}])
    assert error(again) == (
        409,
        "ATLAS-409-00-004",
        f"relationship AtlasGlossarySemanticAssignment already exists between entities {term} and {orders}",
    )
    # a term assigned cannot go, nor its glossary (nothing is deleted)
    assert error(requests.delete(f"{atlas}/glossary/term/{term}", timeout=10)) == (
        400,
        "ATLAS-400-00-084",
        f"Term (guid={term}) cannot be deleted as it has been assigned to 1 entities.",
    )
    assert error(requests.delete(f"{atlas}/glossary/{finance}", timeout=10))[:2] == (400, "ATLAS-400-00-084")
    assert ok(requests.get(f"{atlas}/glossary/term/{term}", timeout=10))["name"] == "Revenue"

    # dissociation names the assignment: refused without it, or with another entity's
    url = f"{atlas}/glossary/terms/{term}/assignedEntities"
    assert error(requests.delete(url, timeout=10, json=[{"guid": orders}])) == (
        400,
        "ATLAS-400-00-078",
        "Missing mandatory attribute, TermAssignment relationship guid",
    )
    assert error(requests.delete(url, timeout=10, json=[{"guid": other, "relationshipGuid": relation}])) == (
        400,
        "ATLAS-400-00-080",
        f"Given relationshipGuid({relation}) is invalid for term (guid={term}) and entity(guid={other})",
    )
    ok(requests.delete(url, timeout=10, json=[{"guid": orders, "relationshipGuid": relation}]))
    header = ok(requests.get(f"{atlas}/entity/guid/{orders}/header", timeout=10))
    assert (header["meanings"], header["classifications"]) == ([], [])
    assert ok(requests.get(url, timeout=10)) == []

    # unassigned, the glossary goes with its terms
    ok(requests.delete(f"{atlas}/glossary/{finance}", timeout=10))
    assert [requests.get(f"{atlas}/glossary/{g}", timeout=10).status_code for g in (finance,)] == [404]
    assert requests.get(f"{atlas}/glossary/term/{term}", timeout=10).status_code == 404
    assert ok(requests.get(f"{atlas}/glossary", timeout=10)) == []


def test_glossary_writes_need_data_curator_where_they_write(catalog: CatalogServer) -> None:
    atlas = catalog.atlas_url
    ok(
        requests.put(
            f"{catalog.url}/account/collections/fin01a",
            params={"api-version": "2019-11-01-preview"},
            timeout=10,
            json={"parentCollection": {"referenceName": ACCOUNT}},
        )
    )
    finance = ok(requests.post(f"{atlas}/glossary", timeout=10, json={"name": "Finance"}))["guid"]
    term = ok(
        requests.post(
            f"{atlas}/glossary/term", timeout=10, json={"name": "Revenue", "anchor": {"glossaryGuid": finance}}
        )
    )["guid"]
    at_root, in_fin = dataset(atlas, "root.csv"), dataset(atlas, "fin.csv", "fin01a")
    ok(requests.put(f"{catalog.url}/_ol2purview/permissions", timeout=10, json={"curatorOf": ["fin01a"]}))

    refused = {
        "assign at the root": requests.post(
            f"{atlas}/glossary/terms/{term}/assignedEntities", timeout=10, json=[{"guid": at_root}]
        ),
        "rename the glossary": requests.put(f"{atlas}/glossary/{finance}", timeout=10, json={"name": "Money"}),
        "add a term": requests.post(
            f"{atlas}/glossary/term", timeout=10, json={"name": "Cost", "anchor": {"glossaryGuid": finance}}
        ),
        "delete the term": requests.delete(f"{atlas}/glossary/term/{term}", timeout=10),
    }
    message = f"admin is not authorized to perform write on collection {ACCOUNT} of account {ACCOUNT}"
    assert errors(refused) == {why: (403, "ATLAS-403-00-001", message) for why in refused}
    ok(requests.post(f"{atlas}/glossary/terms/{term}/assignedEntities", timeout=10, json=[{"guid": in_fin}]))
    assigned = ok(requests.get(f"{atlas}/glossary/terms/{term}/assignedEntities", timeout=10))
    assert [a["guid"] for a in assigned] == [in_fin]
    assert ok(requests.get(f"{atlas}/glossary/{finance}", timeout=10))["name"] == "Finance"


def test_every_answer_fits_the_data_map_spec(catalog: CatalogServer) -> None:
    """Each glossary answer against the schema of its operation in the Data Map spec (2023-09-01)."""
    base = f"{catalog.url}/datamap/api/atlas/v2"
    api = {"api-version": "2023-09-01"}
    finance = ok(requests.post(f"{base}/glossary", params=api, timeout=10, json={"name": "Finance"}))["guid"]
    term = ok(
        requests.post(
            f"{base}/glossary/term",
            params=api,
            timeout=10,
            json={"name": "Revenue", "anchor": {"glossaryGuid": finance}, "status": "Alert"},
        )
    )["guid"]
    orders = dataset(catalog.atlas_url, "orders.csv")
    ok(requests.post(f"{base}/glossary/terms/{term}/assignedEntities", params=api, timeout=10, json=[{"guid": orders}]))
    reads = [
        ("GET", f"/glossary/{finance}", None),
        ("GET", "/glossary", None),
        ("GET", f"/glossary/{finance}/terms", None),
        ("GET", f"/glossary/{finance}/terms/headers", None),
        ("GET", f"/glossary/term/{term}", None),
        ("GET", f"/glossary/terms/{term}/assignedEntities", None),
        ("PUT", f"/glossary/term/{term}", {"name": "Revenue", "status": "Approved"}),
        ("PUT", f"/glossary/{finance}", {"name": "Finance", "language": "en"}),
        ("POST", "/glossary/terms", [{"name": "Cost", "anchor": {"glossaryGuid": finance}}]),
    ]
    found = {}
    for method, path, body in reads:
        answer = requests.request(method, f"{base}{path}", params=api, json=body, timeout=10)
        operation = operation_for(method, f"/datamap/api/atlas/v2{path}")
        assert operation is not None and answer.status_code == 200, (path, answer.text)
        found[operation.operation_id] = problems(operation.response_schema, answer.json())
    assert found == {
        "Glossary_Get": [],
        "Glossary_List": [],
        "Glossary_ListTerms": [],
        "Glossary_ListTermHeaders": [],
        "Glossary_GetTerm": [],
        "Glossary_ListEntitiesAssignedWithTerm": [],
        "Glossary_UpdateTerm": [],
        "Glossary_Update": [],
        "Glossary_CreateTerms": [],
    }
