"""The HTTP edge: a pyapacheatlas AtlasClient wired for production use.

pyapacheatlas 0.16 calls the module-level `requests.get/post/put/delete` (a new connection per call, no hooks) and
reports errors as `AtlasException`, a BaseException without a status code. `AtlasCatalogClient` keeps every public
pyapacheatlas method but routes its four protected HTTP primitives through one pooled `requests.Session` that

- sends a timeout on every call and the `api-version` query parameter when the target needs one;
- carries a response hook that raises `CatalogHttpError(status, errorCode, message, retry_after)` for every
  error response before pyapacheatlas parses it, so retries can tell 429 from 400 and honour Retry-After.

It also adds the three one-request calls the connector needs and pyapacheatlas lacks as public methods.
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

from .errors import CatalogHttpError, parse_error_body
from .retry import retry_after_seconds
from .target import PURVIEW_SCOPE, CatalogTarget

_TOKEN_REFRESH_MARGIN = timedelta(minutes=5)


class PurviewTokenAuth(AzCredentialWrapper):
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


class AtlasCatalogClient(AtlasClient):
    """An AtlasClient with timeouts, a pooled session, typed HTTP errors and an optional api-version."""

    def __init__(self, endpoint_url: str, authentication: AtlasAuthBase | None = None, *, timeout: float,
                 api_version: str | None = None, purview: bool = False) -> None:
        super().__init__(endpoint_url.rstrip("/"), authentication, requests_timeout=timeout)
        self._api_params = {"api-version": api_version} if api_version else {}
        self._purview = purview
        self._session = requests.Session()
        self._session.hooks["response"].append(raise_for_catalog_status)

    # --- pyapacheatlas' HTTP primitives, routed through the session ----------------------------------------------
    def _send(self, method: str, url: str, params: Mapping[str, Any] | None = None, json: Any = None,
              files: Any = None, **kwargs: Any) -> AtlasResponse:
        headers = self.generate_request_headers(kwargs.get("headers_include"), kwargs.get("headers_exclude"))
        response = self._session.request(method, url, params={**self._api_params, **(params or {})} or None,
                                         json=json, files=files, headers=headers, **self._requests_args)
        return AtlasResponse(response, responseNotJson=kwargs.get("responseNotJson", False))

    def _get_http(self, url: str, params: dict | None = None, **kwargs: Any) -> AtlasResponse:
        return self._send("GET", url, params, **kwargs)

    def _post_http(self, url: str, params: dict | None = None, json: Any = None, files: Any = None,
                   **kwargs: Any) -> AtlasResponse:
        return self._send("POST", url, params, json=json, files=files, **kwargs)

    def _put_http(self, url: str, params: dict | None = None, json: Any = None, **kwargs: Any) -> AtlasResponse:
        return self._send("PUT", url, params, json=json, **kwargs)

    def _delete_http(self, url: str, params: dict | None = None, json: Any = None, **kwargs: Any) -> AtlasResponse:
        return self._send("DELETE", url, params, json=json, **kwargs)

    # --- one request each --------------------------------------------------------------------------------------
    def find_entities(self, type_name: str, qualified_names: list[str]) -> list[dict]:
        """GET /entity/bulk/uniqueAttribute/type/{t}?attr_0:qualifiedName=...: the entities that exist."""
        body = self.get_entity(qualifiedName=list(qualified_names), typeName=type_name,
                               ignoreRelationships=True, minExtInfo=True)
        return list((body or {}).get("entities") or [])

    def find_entities_with_relationships(self, type_name: str, qualified_names: list[str]) -> list[dict]:
        """`find_entities` with relationship attributes (a dataset's `columns`, a process's inputs...)."""
        body = self.get_entity(qualifiedName=list(qualified_names), typeName=type_name,
                               ignoreRelationships=False, minExtInfo=True)
        return list((body or {}).get("entities") or [])

    def delete_guids(self, guids: list[str]) -> dict:
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

    def entities_by_guid(self, guids: list[str]) -> list[dict]:
        """GET /entity/bulk?guid=...: these entities with their relationship attributes, in one request."""
        body = self._get_http(self.endpoint_url + "/entity/bulk",
                              params={"guid": list(guids), "minExtInfo": "true"}).body or {}
        return list(body.get("entities") or [])

    def upload_bulk(self, entities: list[dict]) -> dict:
        """POST /entity/bulk with these entities in one request."""
        return self.upload_entities({"entities": entities}) or {}

    def typedef_headers(self) -> list[dict]:
        """GET /types/typedefs/headers: [{name, category, guid}, ...]."""
        return list(self._get_http(self.endpoint_url + "/types/typedefs/headers").body or [])

    def create_typedefs(self, typedefs: dict) -> dict:
        """POST /types/typedefs (new types only; existing ones answer 409)."""
        return self._post_http(self.endpoint_url + "/types/typedefs", json=typedefs).body or {}

    def update_typedefs(self, typedefs: dict) -> dict:
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
    return AtlasCatalogClient(target.endpoint, auth, timeout=timeout, api_version=target.api_version,
                              purview=target.kind == "purview")
