"""Which catalog to write to, decided from settings alone (no I/O): Purview, any Atlas endpoint, or the embedded one."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from olparser.adapters.catalog.type_ownership import check_type_prefix
from olparser.settings import Settings

PURVIEW_SCOPE = "https://purview.azure.net/.default"
PURVIEW_API_VERSION = "2023-09-01"
_PURVIEW_BASES = {
    "datamap": "https://{account}.purview.azure.com/datamap/api/atlas/v2",
    "catalog": "https://{account}.purview.azure.com/catalog/api/atlas/v2",
}
_PURVIEW_PATHS = {"datamap": "/datamap/api/atlas/v2", "catalog": "/catalog/api/atlas/v2"}
_ACCOUNT_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$")


@dataclass(frozen=True)
class CatalogTarget:
    """Where the Atlas v2 API is and how to authenticate.

    kind: "purview" (Entra ID token), "atlas" (basic auth, or none) or "embedded" (the local catalog: the caller
    starts it and fills in `endpoint` with `with_endpoint`). `api_version` is sent as `api-version` when set
    (Purview's GA /datamap/ API needs it). `type_prefix` (TYPE_PREFIX) prefixes the connector's type names in the
    catalog (the client translates; the rest of the connector uses the plain names).
    """

    kind: str
    endpoint: str | None
    api_version: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    type_prefix: str = ""

    def with_endpoint(self, url: str) -> "CatalogTarget":
        return replace(self, endpoint=url.rstrip("/"))


def resolve_target(settings: Settings) -> CatalogTarget:
    """PURVIEW_ACCOUNT_NAME or PURVIEW_ENDPOINT -> Purview; ATLAS_ENDPOINT -> that endpoint; none -> embedded. More
    than one is an error. TYPE_PREFIX is checked and carried along."""
    return replace(_resolve_target(settings), type_prefix=check_type_prefix(settings.type_prefix))


def _resolve_target(settings: Settings) -> CatalogTarget:
    # PURVIEW_ENDPOINT wins over PURVIEW_ACCOUNT_NAME (the deployment template always sets the account name)
    given = [
        name
        for name, value in (
            ("PURVIEW_ACCOUNT_NAME", settings.purview_account_name and not settings.purview_endpoint),
            ("PURVIEW_ENDPOINT", settings.purview_endpoint),
            ("ATLAS_ENDPOINT", settings.atlas_endpoint),
        )
        if value
    ]
    if len(given) > 1:
        raise ValueError(
            f"set either PURVIEW_ACCOUNT_NAME (or PURVIEW_ENDPOINT) or ATLAS_ENDPOINT, not both; got "
            f"{' and '.join(given)}"
        )
    if settings.purview_endpoint:
        return purview_endpoint_target(settings.purview_endpoint, settings.purview_api)
    if settings.purview_account_name:
        account = settings.purview_account_name.strip().lower()
        if not _ACCOUNT_NAME.match(account):
            raise ValueError(
                "PURVIEW_ACCOUNT_NAME must be 3-63 letters, digits or hyphens "
                f"(the account name, not a URL); got {settings.purview_account_name!r}"
            )
        if settings.purview_api not in _PURVIEW_BASES:
            raise ValueError(f"PURVIEW_API must be one of {sorted(_PURVIEW_BASES)}; got {settings.purview_api!r}")
        endpoint = _PURVIEW_BASES[settings.purview_api].format(account=account)
        api_version = PURVIEW_API_VERSION if settings.purview_api == "datamap" else None
        return CatalogTarget("purview", endpoint, api_version=api_version)
    if settings.atlas_endpoint:
        endpoint = settings.atlas_endpoint.strip().rstrip("/")
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                f"ATLAS_ENDPOINT must be an http(s) URL such as http://host:21000/api/atlas/v2; "
                f"got {settings.atlas_endpoint!r}"
            )
        return CatalogTarget("atlas", endpoint, username=settings.atlas_username, password=settings.atlas_password)
    return CatalogTarget("embedded", None, username=settings.atlas_username, password=settings.atlas_password)


def purview_endpoint_target(endpoint: str, purview_api: str = "datamap") -> CatalogTarget:
    """PURVIEW_ENDPOINT: any https host (`https://{account}.purview.azure.com`, the new portal's
    `https://api.purview-service.microsoft.com` or `https://{tenantId}-api.purview-service.microsoft.com`); the Data
    Map path and api-version are appended, and the account API (collections, resource-set rules) is on the same
    host. Token auth (scope PURVIEW_SCOPE), as for PURVIEW_ACCOUNT_NAME."""
    given = endpoint.strip()
    parts = urlsplit(given.rstrip("/"))
    if (
        parts.scheme != "https"
        or not parts.hostname
        or parts.path
        or parts.query
        or parts.fragment
        or parts.username
        or parts.password
    ):
        raise ValueError(
            "PURVIEW_ENDPOINT must be an https host with nothing after it, such as "
            f"https://api.purview-service.microsoft.com; got {endpoint!r}"
        )
    if purview_api not in _PURVIEW_PATHS:
        raise ValueError(f"PURVIEW_API must be one of {sorted(_PURVIEW_PATHS)}; got {purview_api!r}")
    api_version = PURVIEW_API_VERSION if purview_api == "datamap" else None
    return CatalogTarget(
        "purview", f"https://{parts.netloc.lower()}{_PURVIEW_PATHS[purview_api]}", api_version=api_version
    )
