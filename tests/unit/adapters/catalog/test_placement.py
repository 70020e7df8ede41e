"""CollectionPlacement against the embedded catalog (real HTTP): names and friendly names resolved once, the scanned
output's collection read once per cache period, the calls counted."""

from __future__ import annotations

import pytest
import requests

from olparser.adapters.catalog import CatalogRejected, CatalogTarget, make_atlas_client
from olparser.adapters.catalog.placement import CollectionPlacement
from olparser.lineage.placement import parse_rules
from olparser.lineage.plan import is_process
from tools.catalog import CatalogServer

ACCOUNT = "contoso-purview"
SCANNED = "https://lakeacct.dfs.core.windows.net/gold/sales/x.csv"


@pytest.fixture
def catalog(tmp_path):
    server = CatalogServer(tmp_path / "c.sqlite", account_name=ACCOUNT).start()
    for name, friendly in (("fin01a", "Finance"), ("sales01", "Sales"), ("dup1", "Twin"), ("dup2", "twin")):
        requests.put(
            f"{server.url}/account/collections/{name}?api-version=2019-11-01-preview",
            timeout=10,
            json={"friendlyName": friendly, "parentCollection": {"referenceName": ACCOUNT}},
        ).raise_for_status()
    requests.post(
        f"{server.atlas_url}/entity/bulk?collectionId=sales01",
        timeout=10,
        json={
            "entities": [
                {"typeName": "azure_datalake_gen2_path", "attributes": {"qualifiedName": SCANNED, "name": "x.csv"}}
            ]
        },
    )
    yield server
    server.stop()


def plan(output: str) -> list[dict]:
    return [
        {
            "typeName": "databricks_process",
            "attributes": {
                "qualifiedName": "p",
                "lastRunId": "r",
                "openlineageJob": "ns/job",
                "outputs": [{"typeName": "azure_datalake_gen2_path", "uniqueAttributes": {"qualifiedName": output}}],
            },
        }
    ]


def placement(catalog, rules=(), default=None, clock=lambda: 0.0):
    client = make_atlas_client(CatalogTarget("atlas", catalog.atlas_url), timeout=10)
    return CollectionPlacement(client, parse_rules({"rules": list(rules)}), default, cache_seconds=600, clock=clock)


def test_rule_then_scanned_output_then_default_then_root_with_calls_counted(catalog):
    chosen = placement(
        catalog,
        [{"collection": "Finance", "outputPrefix": "https://lakeacct.dfs.core.windows.net/gold/finance/"}],
        default="fin01a",
    )
    calls = [0]
    first = chosen.collection_for(
        plan("https://lakeacct.dfs.core.windows.net/gold/finance/a.csv"), [], is_process, calls
    )
    assert (first.name, first.friendly_name, calls) == ("fin01a", "Finance", [1])  # the collections, listed once
    scanned = chosen.collection_for(plan(SCANNED), [], is_process, calls)
    assert (scanned.name, scanned.reason, calls) == (
        "sales01",
        f"the collection of the scanned output azure_datalake_gen2_path {SCANNED}",
        [2],
    )
    again = chosen.collection_for(plan(SCANNED), [], is_process, calls)
    assert (again.name, calls) == ("sales01", [2])  # cached: no call
    # an output the connector writes itself is not a scanned asset: the default applies
    mine = chosen.collection_for(plan(SCANNED), [("azure_datalake_gen2_path", SCANNED)], is_process, calls)
    assert (mine.name, mine.reason, calls) == ("fin01a", "PURVIEW_COLLECTION", [2])
    root = placement(catalog).collection_for(plan("https://other/x"), [], is_process, calls)
    assert (root, calls) == (None, [3])  # the lookup of the unknown output; no collectionId: the root


@pytest.mark.parametrize(
    "wanted, status, message",
    [
        (
            "nowhere",
            404,
            "no collection named 'nowhere' (by name or friendly name) in the account, for "
            "PURVIEW_COLLECTION; the account has contoso-purview, dup1, dup2, fin01a, sales01",
        ),
        (
            "TWIN",
            409,
            "the friendly name 'TWIN' (PURVIEW_COLLECTION) names several collections: dup1, dup2; use the "
            "collection's name",
        ),
    ],
)
def test_a_collection_that_cannot_be_named_is_a_permanent_failure(catalog, wanted, status, message):
    with pytest.raises(CatalogRejected) as raised:
        placement(catalog, default=wanted).collection_for(plan("https://other/x"), [], is_process, [0])
    assert (raised.value.status, raised.value.message) == (status, message)
