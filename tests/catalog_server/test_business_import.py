"""Business metadata by file (the Data Map's …/entity/businessmetadata/import and its template): a CSV of values, one
line each, merged into what each entity carries; a line that cannot be applied, or an entity whose values cannot be
written, is reported in the answer and the rest is written; a file the catalog cannot read is a 400 that says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from tests.support.atlas_answers import errors
from tools.catalog import CatalogServer

ACCOUNT = "contoso-purview"
LAKE = "https://acct.dfs.core.windows.net/lake"
TYPE = "azure_datalake_gen2_path"
HEADER = (
    "EntityType,EntityUniqueAttributeValue,BusinessAttributeName,BusinessAttributeValue,"
    "EntityUniqueAttributeName[optional]"
)


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[CatalogServer]:
    server = CatalogServer(tmp_path / "catalog.sqlite", account_name=ACCOUNT).start()
    applicable = {"applicableEntityTypes": '["DataSet"]', "maxStrLength": "20"}
    answer = requests.post(
        f"{server.atlas_url}/types/typedefs",
        timeout=10,
        json={
            "businessMetadataDefs": [
                {
                    "name": "Finance",
                    "attributeDefs": [
                        {"name": name, "typeName": type_name, "options": applicable}
                        for name, type_name in (("owner", "string"), ("tags", "array<string>"), ("score", "int"))
                    ],
                }
            ]
        },
    )
    assert answer.status_code == 200, answer.text
    yield server
    server.stop()


def dataset(catalog: CatalogServer, name: str, business: dict | None = None, collection: str | None = None) -> str:
    entity: dict[str, Any] = {"typeName": TYPE, "attributes": {"qualifiedName": f"{LAKE}/{name}", "name": name}}
    if business:
        entity["businessAttributes"] = business
    answer = requests.post(
        f"{catalog.atlas_url}/entity",
        params={"businessAttributeUpdateBehavior": "merge", **({"collectionId": collection} if collection else {})},
        timeout=10,
        json={"entity": entity},
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["mutatedEntities"]["CREATE"][0]["guid"])


def upload(catalog: CatalogServer, text: str | bytes, name: str = "values.csv", **headers: str) -> requests.Response:
    return requests.post(
        f"{catalog.url}/datamap/api/atlas/v2/entity/businessmetadata/import",
        params={"api-version": "2023-09-01"},
        files={"file": (name, text)},
        headers=headers,
        timeout=10,
    )


def business_of(catalog: CatalogServer, guid: str) -> Any:
    entity = requests.get(f"{catalog.atlas_url}/entity/guid/{guid}", timeout=10).json()["entity"]
    return entity.get("businessAttributes")


def test_the_template_is_the_header_line_of_an_import_file(catalog: CatalogServer) -> None:
    answer = requests.get(
        f"{catalog.url}/datamap/api/atlas/v2/entity/businessmetadata/import/template",
        params={"api-version": "2023-09-01"},
        timeout=10,
    )
    assert (answer.status_code, answer.headers["content-type"], answer.text) == (
        200,
        "application/octet-stream",
        HEADER,
    )


def test_values_are_merged_per_entity_and_each_line_that_cannot_be_applied_is_reported(
    catalog: CatalogServer,
) -> None:
    orders = dataset(catalog, "orders.csv", {"Finance": {"score": 3}})
    other = dataset(catalog, "other.csv")
    lines = [
        HEADER,
        f"{TYPE},{LAKE}/orders.csv,Finance.owner,Ann",
        f"{TYPE},{LAKE}/orders.csv,Finance.tags,gold|pii",
        "",
        f"{TYPE},{LAKE}/other.csv,Finance.score,high",
        f"no_such_type,{LAKE}/orders.csv,Finance.owner,Ann",
        f"{TYPE},{LAKE}/missing.csv,Finance.owner,Ann",
        f"{TYPE},{LAKE}/orders.csv,Finance.nope,Ann",
        f"{TYPE},{LAKE}/orders.csv,Finance.owner",
        f"{TYPE},orders.csv,Finance.owner,Bob,name",
    ]
    answer = upload(catalog, "\n".join(lines) + "\n")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "successImportInfoList": [
            {
                "parentObjectName": orders,
                "childObjectName": "{Finance={owner=Ann, tags=[gold, pii]}}",
                "importStatus": "SUCCESS",
                "remarks": "",
            }
        ],
        "failedImportInfoList": [
            {"importStatus": "FAILED", "remarks": "Line #6: invalid entity-type 'no_such_type'"},
            {
                "importStatus": "FAILED",
                "remarks": f"Line #7: no {TYPE} entity found with qualifiedName={LAKE}/missing.csv",
            },
            {
                "importStatus": "FAILED",
                "remarks": f"Line #8: invalid business-metadata 'Finance.nope' for entity type '{TYPE}'",
            },
            {
                "importStatus": "FAILED",
                "remarks": f"Line #9: missing fields. ['{TYPE}', '{LAKE}/orders.csv', 'Finance.owner']",
            },
            {
                "importStatus": "FAILED",
                "remarks": f"Line #10: attribute 'name' is not an unique attribute in entity-type '{TYPE}'",
            },
            {
                "parentObjectName": other,
                "childObjectName": "{Finance={score=high}}",
                "importStatus": "FAILED",
                "remarks": f'invalid value: {TYPE}.Finance.score="high": invalid value for type int',
            },
        ],
    }
    assert business_of(catalog, orders) == {"Finance": {"score": 3, "owner": "Ann", "tags": ["gold", "pii"]}}
    assert business_of(catalog, other) is None


def test_an_entity_where_the_caller_is_not_data_curator_is_reported_not_written(catalog: CatalogServer) -> None:
    requests.put(
        f"{catalog.url}/account/collections/fin01a",
        params={"api-version": "2019-11-01-preview"},
        timeout=10,
        json={"parentCollection": {"referenceName": ACCOUNT}},
    ).raise_for_status()
    at_root, in_fin = dataset(catalog, "root.csv"), dataset(catalog, "fin.csv", collection="fin01a")
    requests.put(f"{catalog.url}/_ol2purview/permissions", timeout=10, json={"curatorOf": ["fin01a"]})
    text = f"{HEADER}\n{TYPE},{LAKE}/root.csv,Finance.owner,Ann\n{TYPE},{LAKE}/fin.csv,Finance.owner,Bob\n"
    answer = upload(catalog, text).json()
    assert [(i["parentObjectName"], i["importStatus"]) for i in answer["successImportInfoList"]] == [
        (in_fin, "SUCCESS")
    ]
    assert answer["failedImportInfoList"] == [
        {
            "parentObjectName": at_root,
            "childObjectName": "{Finance={owner=Ann}}",
            "importStatus": "FAILED",
            "remarks": f"admin is not authorized to perform write on collection {ACCOUNT} of account {ACCOUNT}",
        }
    ]
    assert (business_of(catalog, at_root), business_of(catalog, in_fin)) == (None, {"Finance": {"owner": "Bob"}})


def test_a_file_the_catalog_cannot_read_is_refused_with_why(catalog: CatalogServer) -> None:
    base = f"{catalog.url}/datamap/api/atlas/v2/entity/businessmetadata/import"
    line = f"{TYPE},{LAKE}/orders.csv,Finance.owner,Ann\n"
    answers = {
        "not a csv": upload(catalog, f"{HEADER}\n{line}", name="values.xlsx"),
        "the header only": upload(catalog, f"{HEADER}\n\n"),
        "not UTF-8": upload(catalog, b"\xff\xfe\x00broken"),
        "no file part": requests.post(base, files={"upload": ("values.csv", line)}, timeout=10),
        "JSON, not a form": requests.post(base, json={"file": line}, timeout=10),
    }
    assert errors(answers) == {
        "not a csv": (
            400,
            "ATLAS-400-00-09C",
            "The provided file type: values.xlsx is not supported. Expected file formats are .csv",
        ),
        "the header only": (400, "ATLAS-400-00-09B", "No data found in the uploaded file"),
        "not UTF-8": (400, "ATLAS-400-00-01A", "invalid parameters: values.csv is not a UTF-8 text file"),
        "no file part": (400, "ATLAS-400-00-01A", "invalid parameters: the form has no part named 'file'"),
        "JSON, not a form": (
            400,
            "ATLAS-400-00-01A",
            "invalid parameters: send the file as multipart/form-data, in a part named 'file'",
        ),
    }


def test_a_browser_on_another_site_cannot_send_the_form(catalog: CatalogServer) -> None:
    """A form is what a page can send cross-site without asking: the catalog takes it from non-browser clients and
    the catalog's own origin only."""
    orders = dataset(catalog, "orders.csv")
    text = f"{HEADER}\n{TYPE},{LAKE}/orders.csv,Finance.owner,Ann\n"
    refused = upload(catalog, text, **{"Sec-Fetch-Site": "same-site"})
    assert (refused.status_code, refused.json()["errorCode"]) == (415, "ATLAS-400-00-029")
    assert business_of(catalog, orders) is None
    assert upload(catalog, text, **{"Sec-Fetch-Site": "same-origin"}).status_code == 200
    assert business_of(catalog, orders) == {"Finance": {"owner": "Ann"}}
