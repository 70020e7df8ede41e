"""Purview's account API on the embedded catalog: the resource-set rule configuration.

`GET|PUT|DELETE {account}/resourceSetRuleConfigs/defaultResourceSetRuleConfig?api-version=2019-11-01-preview` and
`GET {account}/resourceSetRuleConfigs` (the list), also under `/account/` (the spec's endpoint is
`https://{account}.purview.azure.com/account/`). Until a PUT replaces it the configuration is Purview's default
(`olparser.resolution.resource_sets.default_account_config`); a PUT is checked by the same parser the connector and
`ol2purview catalog scan` use, stored in the catalog's database and answered back; a DELETE restores the default.
Errors have the account API's shape, `{"error": {"code", "message"}}`.
"""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from olparser.jsontypes import JSON
from olparser.resolution.resource_sets import ResourceSetRules, default_account_config

from .store import CatalogStore

CONFIG_NAME = "defaultResourceSetRuleConfig"
API_VERSIONS = ("2019-11-01-preview", "2022-10-01-preview")
PREFIXES = ("", "/account")
CONFIG_PATH = "/resourceSetRuleConfigs/defaultResourceSetRuleConfig"
LIST_PATH = "/resourceSetRuleConfigs"
_SETTING = "resourceSetRuleConfig"
_CONFIG_METHODS = ("GET", "PUT", "DELETE")


def account_error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


class AccountApi:
    def __init__(self, store: CatalogStore) -> None:
        self.store = store

    def _current(self) -> JSON:
        with self.store.read() as session:
            return session.account_setting(_SETTING) or default_account_config()

    async def config(self, request: Request) -> Response:
        if request.method not in _CONFIG_METHODS:
            return account_error(
                405,
                "MethodNotAllowed",
                f"{request.method} is not supported on {request.url.path} (use {', '.join(_CONFIG_METHODS)})",
            )
        refused = api_version_problem(request)
        if refused is not None:
            return refused
        if request.method == "GET":
            return JSONResponse(await run_in_threadpool(self._current))
        if request.method == "DELETE":
            await run_in_threadpool(self._write, None)
            return Response(status_code=204)
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError as exc:
            return account_error(400, "BadRequest", f"the body is not valid JSON ({exc})")
        try:
            ResourceSetRules.from_account_config(body)
        except ValueError as exc:
            return account_error(400, "BadRequest", str(exc))
        stored = {**body, "name": CONFIG_NAME}
        await run_in_threadpool(self._write, stored)
        return JSONResponse(stored)

    def _write(self, body: JSON | None) -> None:
        with self.store.write() as session:
            if body is None:
                session.delete_account_setting(_SETTING)
            else:
                session.save_account_setting(_SETTING, body)

    async def configs(self, request: Request) -> Response:
        refused = api_version_problem(request)
        if refused is not None:
            return refused
        return JSONResponse({"count": 1, "value": [await run_in_threadpool(self._current)]})

    def router(self) -> Router:
        routes = []
        for prefix in PREFIXES:
            routes += [
                Route(prefix + CONFIG_PATH, self.config, methods=[*_CONFIG_METHODS, "POST", "PATCH"]),
                Route(prefix + LIST_PATH, self.configs, methods=["GET"]),
            ]
        return Router(routes=routes, redirect_slashes=False)


def api_version_problem(request: Request, versions: tuple[str, ...] = API_VERSIONS) -> Response | None:
    """The account API's 400 for a missing or unsupported api-version, else None."""
    version = request.query_params.get("api-version")
    if version is None:
        return account_error(
            400,
            "MissingApiVersionParameter",
            "The api-version query parameter (?api-version=) is required for all requests.",
        )
    if version not in versions:
        return account_error(
            400,
            "InvalidApiVersionParameter",
            f"The api-version '{version}' is invalid. The supported versions are '{', '.join(versions)}'.",
        )
    return None
