"""The HTTP edge: a pyapacheatlas AtlasClient wired for production use.

pyapacheatlas 0.16 calls the module-level `requests.get/post/put/delete` (a new connection per call, no hooks) and
reports errors as `AtlasException`, a BaseException without a status code. `AtlasCatalogClient` keeps every public
pyapacheatlas method but routes its four protected HTTP primitives through one pooled `requests.Session` that

- sends a timeout on every call and the `api-version` query parameter when the target needs one;
- carries a response hook that raises `CatalogHttpError(status, errorCode, message, retry_after)` for every
  error response before pyapacheatlas parses it, so retries can tell 429 from 400 and honour Retry-After.

It also adds the one-request calls the connector needs and pyapacheatlas lacks as public methods, and translates
two things at the edge, both ways: TYPE_PREFIX names (type_ownership.TypeNames) and the connector's attributes on
Purview's built-in types, carried as business attributes (business_attributes.BusinessAttributes).
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any, Iterator, Mapping

import requests
from azure.identity import DefaultAzureCredential
from pyapacheatlas.auth import BasicAuthentication
from pyapacheatlas.auth.azcredential import AzCredentialWrapper
from pyapacheatlas.auth.base import AtlasAuthBase
from pyapacheatlas.core import AtlasClient
from pyapacheatlas.core.util import AtlasResponse

from olparser.adapters.catalog.business_attributes import UPDATE_BEHAVIOR, BusinessAttributes
from olparser.adapters.catalog.errors import CatalogHttpError, parse_error_body
from olparser.adapters.catalog.retry import retry_after_seconds
from olparser.adapters.catalog.target import PURVIEW_SCOPE, CatalogTarget
from olparser.adapters.catalog.type_ownership import TypeNames, names_of
from olparser.adapters.catalog.typedefs import load_typedefs
from olparser.settings import TYPEDEFS_DIR

_TOKEN_REFRESH_MARGIN = timedelta(minutes=5)
RESOURCE_SET_RULES_PATH = "/resourceSetRuleConfigs/defaultResourceSetRuleConfig"
RESOURCE_SET_RULES_API_VERSION = "2019-11-01-preview"
COLLECTIONS_PATH = "/account/collections"
COLLECTIONS_API_VERSION = "2019-11-01-preview"
_ATLAS_SUFFIXES = ("/datamap/api/atlas/v2", "/catalog/api/atlas/v2", "/api/atlas/v2")


def account_root(endpoint_url: str) -> str:
    """The account (or catalog server) root of an Atlas v2 endpoint: `https://{account}.purview.azure.com` of
    `.../datamap/api/atlas/v2`, `http://127.0.0.1:21000` of `.../api/atlas/v2`."""
    base = endpoint_url.rstrip("/")
    for suffix in _ATLAS_SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


class PurviewTokenAuth(AzCredentialWrapper):  # type: ignore[misc]  # pyapacheatlas ships no types (Any)
    """AzCredentialWrapper asking for the documented Purview scope and refreshing five minutes before expiry
    (the base class waits until the token has expired, so a call could leave with a token that dies in flight)."""

    def __init__(self, credential: Any, scope: str = PURVIEW_SCOPE) -> None:
        super().__init__(credential)
        self._resource_scope = scope

    def get_authentication_headers(self) -> dict[str, str]:
        if self.access_token is None or self.expiration - _TOKEN_REFRESH_MARGIN <= datetime.now():
            self._set_access_token()
        return {"Authorization": "Bearer " + self.access_token, "Content-Type": "application/json"}


def raise_for_catalog_status(response: requests.Response, *args: Any, **kwargs: Any) -> requests.Response:
    """requests response hook: turn any 4xx/5xx into CatalogHttpError (status, errorCode, Retry-After)."""
    if response.status_code < 400:
        return response
    code, message = parse_error_body(response.text)
    retry_after = retry_after_seconds(response.headers, now=time.time())
    raise CatalogHttpError(response.status_code, code, message or response.reason or "", retry_after)


class AtlasCatalogClient(AtlasClient):  # type: ignore[misc]  # pyapacheatlas ships no types (Any)
    """An AtlasClient with timeouts, a pooled session, typed HTTP errors and an optional api-version."""

    def __init__(
        self,
        endpoint_url: str,
        authentication: AtlasAuthBase | None = None,
        *,
        timeout: float,
        api_version: str | None = None,
        purview: bool = False,
        type_names: TypeNames | None = None,
        business: BusinessAttributes | None = None,
    ) -> None:
        super().__init__(endpoint_url.rstrip("/"), authentication, requests_timeout=timeout)
        self._types = type_names or TypeNames((), "")
        self._business = business or BusinessAttributes({})
        self.type_prefix = self._types.prefix
        self._api_params = {"api-version": api_version} if api_version else {}
        self._purview = purview
        self._discovery: bool | None = None  # whether this Atlas serves Purview's discovery query (None: not asked)
        self._session = requests.Session()
        self._session.hooks["response"].append(raise_for_catalog_status)

    # --- pyapacheatlas' HTTP primitives, routed through the session ----------------------------------------------
    def _send(
        self,
        method: str,
        url: str,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        files: Any = None,
        **kwargs: Any,
    ) -> AtlasResponse:
        headers = self.generate_request_headers(kwargs.get("headers_include"), kwargs.get("headers_exclude"))
        entity_write = method == "POST" and url.rstrip("/").endswith(("/entity", "/entity/bulk"))
        if entity_write and self._business:  # the connector's attributes on Purview's types: business attributes
            json, carried = self._business.outgoing(json)
            if carried:
                params = {**(params or {}), **UPDATE_BEHAVIOR}
        translate = bool(self._types) and "/types/" not in url
        if translate:  # TYPE_PREFIX: the catalog knows the connector's types by their prefixed names
            url, params, json = (
                self._types.outgoing_url(url),
                self._types.outgoing(dict(params or {})),
                self._types.outgoing(json),
            )
        response = self._session.request(
            method,
            url,
            params={**self._api_params, **(params or {})} or None,
            json=json,
            files=files,
            headers=headers,
            **self._requests_args,
        )
        answer = AtlasResponse(response, responseNotJson=kwargs.get("responseNotJson", False))
        if translate:
            answer.body = self._types.incoming(answer.body)
        if method == "GET" and "/entity" in url:
            answer.body = self._business.incoming(answer.body)
        return answer

    def _get_http(self, url: str, params: dict[str, Any] | None = None, **kwargs: Any) -> AtlasResponse:
        return self._send("GET", url, params, **kwargs)

    def _post_http(
        self, url: str, params: dict[str, Any] | None = None, json: Any = None, files: Any = None, **kwargs: Any
    ) -> AtlasResponse:
        return self._send("POST", url, params, json=json, files=files, **kwargs)

    def _put_http(
        self, url: str, params: dict[str, Any] | None = None, json: Any = None, **kwargs: Any
    ) -> AtlasResponse:
        return self._send("PUT", url, params, json=json, **kwargs)

    def _delete_http(
        self, url: str, params: dict[str, Any] | None = None, json: Any = None, **kwargs: Any
    ) -> AtlasResponse:
        return self._send("DELETE", url, params, json=json, **kwargs)

    # --- one request each --------------------------------------------------------------------------------------
    def find_entities(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]:
        """GET /entity/bulk/uniqueAttribute/type/{t}?attr_0:qualifiedName=...: the entities that exist."""
        body = self.get_entity(
            qualifiedName=list(qualified_names), typeName=type_name, ignoreRelationships=True, minExtInfo=True
        )
        return list((body or {}).get("entities") or [])

    def find_entities_with_relationships(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]:
        """`find_entities` with relationship attributes (a dataset's `columns`, a process's inputs...)."""
        body = self.get_entity(
            qualifiedName=list(qualified_names), typeName=type_name, ignoreRelationships=False, minExtInfo=True
        )
        return list((body or {}).get("entities") or [])

    def delete_guids(self, guids: list[str]) -> dict[str, Any]:
        """DELETE /entity/bulk?guid=...: these entities, in one request."""
        return self._delete_http(self.endpoint_url + "/entity/bulk", params={"guid": list(guids)}).body or {}

    def guids_of_type(self, type_name: str, page_size: int = 1000) -> Iterator[str]:
        """The guids of every active entity of this type (subtypes included): Purview's discovery query on Purview,
        Atlas basic search elsewhere, page by page."""
        if self._purview:
            search = self.endpoint_url.rsplit("/atlas/v2", 1)[0] + "/search/query"
            token: str | None = None
            while True:
                body: dict[str, Any] = {"keywords": None, "limit": page_size, "filter": {"entityType": type_name}}
                if token:
                    body["continuationToken"] = token
                page = self._post_http(search, json=body).body or {}
                yield from (item["id"] for item in page.get("value") or [] if isinstance(item.get("id"), str))
                token = page.get("continuationToken")
                if not token:
                    return
        offset = 0
        while True:
            body = {"typeName": type_name, "excludeDeletedEntities": True, "limit": page_size, "offset": offset}
            entities = (self._post_http(self.endpoint_url + "/search/basic", json=body).body or {}).get("entities")
            yield from (e["guid"] for e in entities or [] if isinstance(e.get("guid"), str))
            if not entities or len(entities) < page_size:
                return
            offset += len(entities)

    def search_assets(self, query: dict[str, Any]) -> list[tuple[str, str]]:
        """(typeName, qualifiedName) of the active entities a discovery query finds, one request: Purview's
        `POST .../search/query` (Data Map API) on Purview and on catalogs that serve it (the embedded one), Atlas
        basic search (the entity type, the keywords and attribute equalities as `entityFilters`) on an Apache Atlas,
        which answers 404 to the discovery route (then remembered)."""
        if self._purview or self._discovery is not False:
            url = (
                self.endpoint_url.rsplit("/atlas/v2", 1)[0] + "/search/query"
                if self._purview
                else self.endpoint_url + "/search/query"
            )
            try:
                page = self._post_http(url, json=query).body or {}
            except CatalogHttpError as error:
                if self._purview or error.status not in (404, 405):
                    raise
                self._discovery = False
            else:
                self._discovery = True
                return [
                    (item["entityType"], item["qualifiedName"])
                    for item in page.get("value") or []
                    if isinstance(item.get("entityType"), str) and isinstance(item.get("qualifiedName"), str)
                ]
        return self._basic_search(query)

    def _basic_search(self, query: dict[str, Any]) -> list[tuple[str, str]]:
        clauses = query.get("filter") or {}
        clauses = clauses.get("and") or [clauses]
        type_name = next((c["entityType"] for c in clauses if isinstance(c.get("entityType"), str)), None)
        criteria = [
            {"attributeName": c["attributeName"], "operator": "eq", "attributeValue": c["attributeValue"]}
            for c in clauses
            if "attributeName" in c
        ]
        body: dict[str, Any] = {
            "typeName": type_name,
            "query": query.get("keywords"),
            "excludeDeletedEntities": True,
            "limit": query.get("limit", 100),
        }
        if criteria:
            body["entityFilters"] = {"condition": "AND", "criterion": criteria} if len(criteria) > 1 else criteria[0]
        entities = (self._post_http(self.endpoint_url + "/search/basic", json=body).body or {}).get("entities")
        return [
            (e["typeName"], e["attributes"]["qualifiedName"])
            for e in entities or []
            if isinstance(e.get("typeName"), str) and isinstance((e.get("attributes") or {}).get("qualifiedName"), str)
        ]

    def resource_set_rule_config(self) -> dict[str, Any]:
        """`GET {account}/resourceSetRuleConfigs/defaultResourceSetRuleConfig` (api-version 2019-11-01-preview): the
        account's resource-set rules, on Purview and on the embedded catalog (which serves the same route at its
        root). Raises CatalogHttpError (403 without the permission, 404 where there is no such route)."""
        url = account_root(self.endpoint_url) + RESOURCE_SET_RULES_PATH
        body = self._get_http(url, params={"api-version": RESOURCE_SET_RULES_API_VERSION}).body
        return body if isinstance(body, dict) else {}

    def entities_by_guid(self, guids: list[str]) -> list[dict[str, Any]]:
        """GET /entity/bulk?guid=...: these entities with their relationship attributes, in one request."""
        body = (
            self._get_http(self.endpoint_url + "/entity/bulk", params={"guid": list(guids), "minExtInfo": "true"}).body
            or {}
        )
        return list(body.get("entities") or [])

    def upload_bulk(self, entities: list[dict[str, Any]], collection_id: str | None = None) -> dict[str, Any]:
        """POST /entity/bulk with these entities in one request; `collection_id`: `?collectionId=` (new entities are
        created in that collection, existing ones sent are moved there)."""
        if collection_id is None:
            return self.upload_entities({"entities": entities}) or {}
        return (
            self._post_http(
                self.endpoint_url + "/entity/bulk", params={"collectionId": collection_id}, json={"entities": entities}
            ).body
            or {}
        )

    def collections(self) -> list[dict[str, Any]]:
        """`GET {account}/account/collections` (api-version 2019-11-01-preview), every page: the account's
        collections (`name` is the id, `friendlyName`, `parentCollection.referenceName`)."""
        url: str | None = account_root(self.endpoint_url) + COLLECTIONS_PATH
        params: dict[str, str] | None = {"api-version": COLLECTIONS_API_VERSION}
        found: list[dict[str, Any]] = []
        while url:
            body = self._get_http(url, params=params).body or {}
            found += [c for c in body.get("value") or [] if isinstance(c, dict)]
            url, params = body.get("nextLink"), None  # the next page's link carries its own query
        return found

    def typedef_headers(self) -> list[dict[str, Any]]:
        """GET /types/typedefs/headers: [{name, category, guid}, ...]."""
        return list(self._get_http(self.endpoint_url + "/types/typedefs/headers").body or [])

    def typedefs(self) -> dict[str, Any]:
        """GET /types/typedefs: every type's full definition, by category (enumDefs, entityDefs, ...)."""
        body = self._get_http(self.endpoint_url + "/types/typedefs").body
        return body if isinstance(body, dict) else {}

    def create_typedefs(self, typedefs: dict[str, Any]) -> dict[str, Any]:
        """POST /types/typedefs (new types only; existing ones answer 409)."""
        return self._post_http(self.endpoint_url + "/types/typedefs", json=typedefs).body or {}

    def update_typedefs(self, typedefs: dict[str, Any]) -> dict[str, Any]:
        """PUT /types/typedefs (existing types only)."""
        return self._put_http(self.endpoint_url + "/types/typedefs", json=typedefs).body or {}

    def close(self) -> None:
        self._session.close()


def make_atlas_client(target: CatalogTarget, *, timeout: float, credential: Any = None) -> AtlasCatalogClient:
    """The client for a target. Purview authenticates with `credential` (default: DefaultAzureCredential, created
    here, lazily asked for a token on the first call); Atlas and embedded use basic auth when a user is set."""
    if not target.endpoint:
        raise ValueError(f"the {target.kind} catalog target has no endpoint yet (start it and use with_endpoint)")
    auth: AtlasAuthBase | None
    if target.kind == "purview":
        auth = PurviewTokenAuth(credential if credential is not None else DefaultAzureCredential())
    elif target.username:
        auth = BasicAuthentication(target.username, target.password or "")
    else:
        auth = None
    typedefs = load_typedefs(TYPEDEFS_DIR)
    names = TypeNames(names_of(typedefs), target.type_prefix) if target.type_prefix else None
    return AtlasCatalogClient(
        target.endpoint,
        auth,
        timeout=timeout,
        api_version=target.api_version,
        purview=target.kind == "purview",
        type_names=names,
        business=BusinessAttributes.from_typedefs(typedefs, target.type_prefix),
    )
