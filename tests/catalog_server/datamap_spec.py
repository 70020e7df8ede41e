"""Microsoft's Data Map API specification (../shared/purview-datamap/2023-09-01/purviewdatamap.json, Swagger 2.0) as
JSON Schema validators: which operation a request is, and whether its body and its answer fit the operation's
schemas. Swagger's own keys (x-ms-*, readOnly, discriminator) are annotations to jsonschema; `format` is not checked."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft4Validator

from tests.support.repository import PROJECT_ROOT

SPEC_DIR = PROJECT_ROOT.parent / "shared" / "purview-datamap" / "2023-09-01"
SPEC_PATH = SPEC_DIR / "purviewdatamap.json"
EXAMPLES = SPEC_DIR / "examples"
# where the Data Map paths start in a URL: Purview's /datamap/api, and the embedded catalog's Atlas bases
_BASES = ("/datamap/api", "/catalog/api", "/api")


@lru_cache(maxsize=1)
def spec() -> dict[str, Any]:
    return json.loads(SPEC_PATH.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str
    template: str
    body_schema: dict | None
    response_schema: dict | None


@lru_cache(maxsize=1)
def operations() -> tuple[tuple[re.Pattern, Operation], ...]:
    found = []
    for template, item in spec()["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$")
        for method, op in item.items():
            if not isinstance(op, dict) or "operationId" not in op:
                continue
            body = next((p["schema"] for p in op.get("parameters", []) if p.get("in") == "body"), None)
            response = (op["responses"].get("200") or {}).get("schema")
            found.append((pattern, Operation(op["operationId"], method.upper(), template, body, response)))
    # literal paths before templated ones (…/entity/bulk/uniqueAttribute/… is not …/entity/guid/{guid})
    return tuple(sorted(found, key=lambda item: item[1].template.count("{")))


def operation_for(method: str, path: str) -> Operation | None:
    """The spec's operation for a request path as sent to Purview or to the embedded catalog; None when the spec has
    none (the account API, the catalog's own routes)."""
    for base in _BASES:
        if path.startswith(base + "/"):
            path = path[len(base) :]
            break
    if path.startswith("/atlas/v2/search/") or path == "/atlas/v2/search/query":
        path = path[len("/atlas/v2") :]  # the embedded catalog also serves Purview's search under its Atlas base
    for pattern, op in operations():
        if op.method == method.upper() and pattern.match(path):
            return op
    return None


def _validator(schema: dict) -> Draft4Validator:
    return Draft4Validator({**schema, "definitions": spec()["definitions"]})


def problems(schema: dict | None, value: Any) -> list[str]:
    """Where `value` does not fit `schema` (each: JSON path and message); [] when it fits or there is no schema.
    A null where the schema names a type is not a problem: Swagger 2.0 properties are nullable unless marked
    `x-nullable: false`, and the spec's own examples answer `"description": null`."""
    if schema is None:
        return []
    return sorted(
        f"{'/'.join(map(str, error.absolute_path)) or '$'}: {error.message}"
        for error in _validator(schema).iter_errors(value)
        if not (error.validator == "type" and error.instance is None)
    )


def example(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))


def examples_of(operation_id: str) -> list[str]:
    """The names of the example files the spec lists for an operation and that the shared folder holds."""
    for item in spec()["paths"].values():
        for op in item.values():
            if isinstance(op, dict) and op.get("operationId") == operation_id:
                return sorted(
                    name
                    for name, ref in (op.get("x-ms-examples") or {}).items()
                    if (EXAMPLES / Path(ref["$ref"]).name).exists()
                )
    return []


def examples_listed(operation_id: str) -> list[str]:
    for item in spec()["paths"].values():
        for op in item.values():
            if isinstance(op, dict) and op.get("operationId") == operation_id:
                return sorted(op.get("x-ms-examples") or {})
    return []
