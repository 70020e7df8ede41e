"""The client's discovery query on a catalog without one (an Apache Atlas answers 404 to `/search/query`): Atlas
basic search instead, from then on without asking again; and the account's resource-set rules, which such a catalog
does not serve (404: the resolver then uses Purview's defaults)."""

from __future__ import annotations

import pytest

from olparser.adapters.catalog.errors import CatalogHttpError
from olparser.resolution.model import PARTITIONS, TEXT, Search


def test_an_atlas_without_the_discovery_query_is_searched_with_basic_search(atlas, client):
    client.upload_bulk(
        [
            {
                "typeName": "azure_datalake_gen2_resource_set",
                "guid": "-1",
                "attributes": {
                    "qualifiedName": "https://a.dfs.core.windows.net/c/sales/Year={Year}/{SparkPartitions}",
                    "name": "sales",
                },
            }
        ]
    )
    search = Search(
        "azure_datalake_gen2_resource_set",
        "sales",
        ((TEXT, "https://a.dfs.core.windows.net/c/sales"), (PARTITIONS, ""), (TEXT, "/{SparkPartitions}")),
    )

    assert client.search_assets(search.query()) == [
        ("azure_datalake_gen2_resource_set", "https://a.dfs.core.windows.net/c/sales/Year={Year}/{SparkPartitions}")
    ]
    assert client.search_assets(search.query()) == [
        ("azure_datalake_gen2_resource_set", "https://a.dfs.core.windows.net/c/sales/Year={Year}/{SparkPartitions}")
    ]
    assert [(r.method, r.path) for r in atlas.requests if "search" in r.path] == [
        ("POST", "/api/atlas/v2/search/query"),
        ("POST", "/api/atlas/v2/search/basic"),
        ("POST", "/api/atlas/v2/search/basic"),
    ]
    basic = [r.body for r in atlas.requests if r.path.endswith("/search/basic")][0]
    assert basic == {
        "typeName": "azure_datalake_gen2_resource_set",
        "query": "sales",
        "excludeDeletedEntities": True,
        "limit": 100,
    }


def test_a_catalog_without_the_account_api_answers_404_for_the_resource_set_rules(atlas, client):
    with pytest.raises(CatalogHttpError) as raised:
        client.resource_set_rule_config()
    assert raised.value.status == 404
    assert [(r.method, r.path, r.query) for r in atlas.requests] == [
        ("GET", "/resourceSetRuleConfigs/defaultResourceSetRuleConfig", [("api-version", "2019-11-01-preview")])
    ]
