"""Choosing the catalog from settings, and the credentials that reach it (never a real credential)."""

from __future__ import annotations

import base64
import time

import pytest
import requests
from azure.core.credentials import AccessToken

import olparser.adapters.catalog.client as client_module
from olparser.adapters.catalog import CatalogTarget, make_atlas_client, resolve_target
from olparser.settings import Settings

from .atlas_stub import AtlasStub


class FakeCredential:
    """Stands in for DefaultAzureCredential: hands out numbered tokens and records the scopes asked for."""

    def __init__(self, lifetime: float = 3600.0) -> None:
        self.scopes: list[tuple[str, ...]] = []
        self.lifetime = lifetime

    def get_token(self, *scopes: str, **kwargs) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken(f"token-{len(self.scopes)}", int(time.time() + self.lifetime))


def test_purview_datamap_target():
    target = resolve_target(Settings(purview_account_name="Contoso-Lineage"))
    assert target == CatalogTarget(
        "purview", "https://contoso-lineage.purview.azure.com/datamap/api/atlas/v2", api_version="2023-09-01"
    )


def test_purview_legacy_catalog_target():
    target = resolve_target(Settings(purview_account_name="contoso", purview_api="catalog"))
    assert target == CatalogTarget("purview", "https://contoso.purview.azure.com/catalog/api/atlas/v2")


def test_atlas_endpoint_target_with_basic_auth():
    target = resolve_target(
        Settings(
            atlas_endpoint="http://atlas.local:21000/api/atlas/v2/", atlas_username="admin", atlas_password="secret"
        )
    )
    assert target == CatalogTarget(
        "atlas", "http://atlas.local:21000/api/atlas/v2", username="admin", password="secret"
    )
    assert "secret" not in repr(target)


def test_neither_means_embedded_and_needs_an_endpoint():
    target = resolve_target(Settings())
    assert (target.kind, target.endpoint) == ("embedded", None)
    with pytest.raises(ValueError, match="has no endpoint yet"):
        make_atlas_client(target, timeout=1)
    assert target.with_endpoint("http://127.0.0.1:5000/api/atlas/v2/").endpoint == "http://127.0.0.1:5000/api/atlas/v2"


@pytest.mark.parametrize(
    "settings, message",
    [
        (
            Settings(purview_account_name="contoso", atlas_endpoint="http://a/api/atlas/v2"),
            r"set either PURVIEW_ACCOUNT_NAME \(or PURVIEW_ENDPOINT\) or ATLAS_ENDPOINT, not both; got PURVIEW_ACCOUNT_NAME "
            "and ATLAS_ENDPOINT",
        ),
        (
            Settings(
                purview_endpoint="https://api.purview-service.microsoft.com", atlas_endpoint="http://a/api/atlas/v2"
            ),
            "got PURVIEW_ENDPOINT and ATLAS_ENDPOINT",
        ),
        (
            Settings(purview_endpoint="http://api.purview-service.microsoft.com"),
            "PURVIEW_ENDPOINT must be an https host",
        ),
        (Settings(purview_endpoint="api.purview-service.microsoft.com"), "PURVIEW_ENDPOINT must be an https host"),
        (
            Settings(purview_endpoint="https://contoso.purview.azure.com/datamap/api/atlas/v2"),
            "PURVIEW_ENDPOINT must be an https host with nothing after it",
        ),
        (Settings(purview_endpoint="https://api.purview-service.microsoft.com?x=1"), "PURVIEW_ENDPOINT must be"),
        (
            Settings(purview_endpoint="https://api.purview-service.microsoft.com", purview_api="v3"),
            "PURVIEW_API must be one of",
        ),
        (Settings(purview_account_name="https://contoso.purview.azure.com"), "PURVIEW_ACCOUNT_NAME must be"),
        (Settings(purview_account_name="contoso", purview_api="v3"), "PURVIEW_API must be one of"),
        (Settings(atlas_endpoint="atlas.local:21000"), "ATLAS_ENDPOINT must be an http"),
    ],
)
def test_bad_settings_are_named(settings, message):
    with pytest.raises(ValueError, match=message):
        resolve_target(settings)


def test_purview_token_reaches_the_server_with_the_purview_scope(monkeypatch):
    credential = FakeCredential()
    monkeypatch.setattr(client_module, "DefaultAzureCredential", lambda: credential)
    stub = AtlasStub().start()
    try:
        # The Purview target, pointed at loopback: same client wiring, same auth, same api-version.
        target = CatalogTarget("purview", stub.atlas_url, api_version="2023-09-01")
        client = make_atlas_client(target, timeout=5)
        client.find_entities("hive_table", ["db.t@c"])
        client.find_entities("hive_table", ["db.u@c"])
    finally:
        stub.stop()
    assert credential.scopes == [("https://purview.azure.net/.default",)]  # one token, reused
    assert [r.headers["Authorization"] for r in stub.requests] == ["Bearer token-1", "Bearer token-1"]
    assert stub.requests[0].path == "/api/atlas/v2/entity/bulk/uniqueAttribute/type/hive_table"
    assert stub.requests[0].query == [
        ("api-version", "2023-09-01"),
        ("attr_0:qualifiedName", "db.t@c"),
        ("ignoreRelationships", "True"),
        ("minExtInfo", "True"),
    ]


def test_purview_token_is_refreshed_before_it_expires(monkeypatch):
    credential = FakeCredential(lifetime=120)  # inside the five-minute refresh margin
    monkeypatch.setattr(client_module, "DefaultAzureCredential", lambda: credential)
    stub = AtlasStub().start()
    try:
        client = make_atlas_client(CatalogTarget("purview", stub.atlas_url), timeout=5)
        client.find_entities("hive_table", ["a"])
        client.find_entities("hive_table", ["b"])
    finally:
        stub.stop()
    assert [r.headers["Authorization"] for r in stub.requests] == ["Bearer token-1", "Bearer token-2"]


def test_credential_is_created_only_for_purview(monkeypatch):
    created = []
    monkeypatch.setattr(client_module, "DefaultAzureCredential", lambda: created.append(1) or FakeCredential())
    make_atlas_client(CatalogTarget("atlas", "http://127.0.0.1:9/api/atlas/v2"), timeout=1)
    assert created == []
    make_atlas_client(resolve_target(Settings(purview_account_name="contoso")), timeout=1)
    assert created == [1]


def test_basic_auth_header_and_no_api_version_for_atlas(atlas):
    client = make_atlas_client(CatalogTarget("atlas", atlas.atlas_url, username="admin", password="pw"), timeout=5)
    client.find_entities("hive_table", ["db.t@c"])
    request = atlas.requests[0]
    assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"admin:pw").decode()
    assert [k for k, _ in request.query] == ["attr_0:qualifiedName", "ignoreRelationships", "minExtInfo"]


def test_purview_url_passes_through_to_the_client(monkeypatch):
    monkeypatch.setattr(client_module, "DefaultAzureCredential", FakeCredential)
    client = make_atlas_client(resolve_target(Settings(purview_account_name="contoso")), timeout=7.5)
    assert client.endpoint_url == "https://contoso.purview.azure.com/datamap/api/atlas/v2"


def test_token_failures_are_retried_then_unavailable(monkeypatch, fake_time):
    from azure.core.exceptions import ClientAuthenticationError

    from olparser.adapters.catalog import CatalogUnavailable
    from olparser.adapters.catalog.retry import RetryPolicy

    class NoIdentity:
        def get_token(self, *scopes, **kwargs):
            raise ClientAuthenticationError("ManagedIdentityCredential: no response from the IMDS endpoint")

    client = make_atlas_client(
        CatalogTarget("purview", "http://127.0.0.1:9/api/atlas/v2"), timeout=1, credential=NoIdentity()
    )
    policy = RetryPolicy(max_attempts=3, sleep=fake_time.sleep, clock=fake_time.clock)
    with pytest.raises(CatalogUnavailable, match="unreachable after 3 attempts: ClientAuthenticationError"):
        policy.run("lookup", lambda: client.find_entities("hive_table", ["x"]))


TENANT = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"


@pytest.mark.parametrize(
    "endpoint, purview_api, atlas_base, api_version",
    [
        # the new portal's tenant-level endpoints (reference/producers-and-estate.md, "Endpoints")
        (
            "https://api.purview-service.microsoft.com",
            "datamap",
            "https://api.purview-service.microsoft.com/datamap/api/atlas/v2",
            "2023-09-01",
        ),
        (
            f"https://{TENANT}-api.purview-service.microsoft.com/",
            "datamap",
            f"https://{TENANT}-api.purview-service.microsoft.com/datamap/api/atlas/v2",
            "2023-09-01",
        ),
        # a classic account by its host: the same as PURVIEW_ACCOUNT_NAME=contoso
        (
            "https://Contoso.purview.azure.com",
            "datamap",
            "https://contoso.purview.azure.com/datamap/api/atlas/v2",
            "2023-09-01",
        ),
        (
            "https://contoso.purview.azure.com",
            "catalog",
            "https://contoso.purview.azure.com/catalog/api/atlas/v2",
            None,
        ),
    ],
)
def test_purview_endpoint_gets_the_data_map_path_and_api_version(endpoint, purview_api, atlas_base, api_version):
    target = resolve_target(Settings(purview_endpoint=endpoint, purview_api=purview_api))
    assert target == CatalogTarget("purview", atlas_base, api_version=api_version)
    # the deployment template always sets the account name: the endpoint wins
    assert (
        resolve_target(Settings(purview_endpoint=endpoint, purview_api=purview_api, purview_account_name="contoso"))
        == target
    )


class RecordingAdapter(requests.adapters.BaseAdapter):
    """The HTTPS transport of the client's session, faked (no network): records each request, answers 200 {}."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request, **kwargs):
        self.sent.append(request)
        response = requests.Response()
        response.status_code, response._content, response.request = 200, b"{}", request
        response.headers["Content-Type"] = "application/json"
        return response

    def close(self) -> None:
        pass


def test_purview_endpoint_calls_data_map_and_account_api_on_one_host_with_the_purview_token(monkeypatch):
    credential = FakeCredential()
    monkeypatch.setattr(client_module, "DefaultAzureCredential", lambda: credential)
    target = resolve_target(Settings(purview_endpoint=f"https://{TENANT}-api.purview-service.microsoft.com"))
    client = make_atlas_client(target, timeout=5)
    transport = RecordingAdapter()
    client._session.mount("https://", transport)
    client.find_entities("azure_sql_table", ["mssql://s.database.windows.net/db/dbo/t"])
    client.resource_set_rule_config()
    host = f"https://{TENANT}-api.purview-service.microsoft.com"
    assert [r.url for r in transport.sent] == [
        f"{host}/datamap/api/atlas/v2/entity/bulk/uniqueAttribute/type/azure_sql_table?api-version=2023-09-01&"
        "attr_0%3AqualifiedName=mssql%3A%2F%2Fs.database.windows.net%2Fdb%2Fdbo%2Ft&ignoreRelationships=True&"
        "minExtInfo=True",
        f"{host}/resourceSetRuleConfigs/defaultResourceSetRuleConfig?api-version=2019-11-01-preview",
    ]
    assert credential.scopes == [("https://purview.azure.net/.default",)]
    assert [r.headers["Authorization"] for r in transport.sent] == ["Bearer token-1", "Bearer token-1"]
