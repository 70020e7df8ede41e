"""Purview's account API on the embedded catalog: `resourceSetRuleConfigs/defaultResourceSetRuleConfig`
(api-version 2019-11-01-preview) answers Purview's default configuration until a PUT replaces it, and what it answers
is exactly what `ResourceSetRules.from_account_config` reads (the connector's resolver and `catalog scan`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from olparser.resolution.resource_sets import ResourceSetRules, default_account_config, scanned_name
from tests.support.catalog_server import PASSWORD, USER
from tools.catalog import CatalogServer

AUTH = (USER, PASSWORD)
VERSION = {"api-version": "2019-11-01-preview"}
CONFIG = "/resourceSetRuleConfigs/defaultResourceSetRuleConfig"
FILE = "https://myaccount.blob.core.windows.net/mycontainer/weblogs/en_au/23.json"


def _custom() -> dict:
    body = default_account_config()
    body["name"] = "ignored: the name is read-only"
    config = body["pathPatternConfig"]
    next(r for r in config["regexReplacers"] if r["name"] == "Localization")["disabled"] = True
    config["scopedRules"] = [
        {
            "bindingUrl": "https://myaccount.blob.core.windows.net/mycontainer/",
            "storeType": "AzureBlob",
            "rules": [{"name": "drops", "qualifiedName": "drop/{day:date}/{file:string}.csv", "isResourceSet": True}],
        }
    ]
    return body


@pytest.mark.parametrize("prefix", ["", "/account"])
def test_the_default_until_a_put_replaces_it(catalog: CatalogServer, db_path: Path, prefix: str) -> None:
    url = catalog.url + prefix + CONFIG
    default = requests.get(url, params=VERSION, auth=AUTH, timeout=10)
    assert (default.status_code, default.json()) == (200, default_account_config())
    assert ResourceSetRules.from_account_config(default.json()) == ResourceSetRules.default()

    put = requests.put(url, params=VERSION, auth=AUTH, json=_custom(), timeout=10)
    assert (put.status_code, put.json()) == (200, {**_custom(), "name": "defaultResourceSetRuleConfig"})
    rules = ResourceSetRules.from_account_config(requests.get(url, params=VERSION, auth=AUTH, timeout=10).json())
    assert rules == ResourceSetRules.from_account_config(_custom())
    assert (
        scanned_name(FILE, rules).qualified_name
        == "https://myaccount.blob.core.windows.net/mycontainer/weblogs/en_au/{N}.json"
    )
    assert (
        scanned_name("https://myaccount.blob.core.windows.net/mycontainer/drop/20240115/a.csv", rules).qualified_name
        == "https://myaccount.blob.core.windows.net/mycontainer/drop/{day}/{file}.csv"
    )
    listed = requests.get(catalog.url + prefix + "/resourceSetRuleConfigs", params=VERSION, auth=AUTH, timeout=10)
    assert listed.json() == {"count": 1, "value": [put.json()]}

    catalog.stop()  # kept in the catalog's database
    again = CatalogServer(db_path, user=USER, password=PASSWORD).start()
    try:
        kept = requests.get(again.url + prefix + CONFIG, params=VERSION, auth=AUTH, timeout=10)
        assert kept.json() == put.json()
        deleted = requests.delete(again.url + prefix + CONFIG, params=VERSION, auth=AUTH, timeout=10)
        assert deleted.status_code == 204
        assert (
            requests.get(again.url + prefix + CONFIG, params=VERSION, auth=AUTH, timeout=10).json()
            == default_account_config()
        )
        assert requests.get(again.url + "/_ol2purview/calls", auth=AUTH, timeout=10).json()["byRoute"] == {
            f"GET {prefix}{CONFIG}": 2,
            f"DELETE {prefix}{CONFIG}": 1,
        }
    finally:
        again.stop()


def test_errors_have_the_account_api_shape(catalog: CatalogServer) -> None:
    url = catalog.url + CONFIG
    cases = [
        (
            requests.get(url, auth=AUTH, timeout=10),
            400,
            "MissingApiVersionParameter",
            "The api-version query parameter (?api-version=) is required for all requests.",
        ),
        (
            requests.get(url, params={"api-version": "2023-09-01"}, auth=AUTH, timeout=10),
            400,
            "InvalidApiVersionParameter",
            "The api-version '2023-09-01' is invalid. The supported versions are "
            "'2019-11-01-preview, 2022-10-01-preview'.",
        ),
        (
            requests.put(
                url,
                params=VERSION,
                auth=AUTH,
                json={
                    "pathPatternConfig": {"regexReplacers": [{"name": "Broken", "regex": {"regexStr": "(unclosed"}}]}
                },
                timeout=10,
            ),
            400,
            "BadRequest",
            "resource set rule config: pathPatternConfig.regexReplacers[0].regex.regexStr: not a valid regex "
            "(missing ) at position 9)",
        ),
        (
            requests.put(url, params=VERSION, auth=AUTH, json=["not", "an", "object"], timeout=10),
            400,
            "BadRequest",
            "resource set rule config: body: must be a JSON object, got list",
        ),
        (
            requests.post(url, params=VERSION, auth=AUTH, json={}, timeout=10),
            405,
            "MethodNotAllowed",
            f"POST is not supported on {CONFIG} (use GET, PUT, DELETE)",
        ),
    ]
    assert [(r.status_code, r.json()) for r, *_ in cases] == [
        (status, {"error": {"code": code, "message": message}}) for _, status, code, message in cases
    ]
    assert requests.get(url, params=VERSION, auth=AUTH, timeout=10).json() == default_account_config()
    assert requests.get(url, params=VERSION, timeout=10).status_code == 401  # the catalog's auth covers it
