"""`qn-tester lint --catalog [URL]`: every rule's `purviewDataType` must be an entity type the target catalog knows.

A rule whose type the catalog lacks passes the offline lint, and then every run it maps is rejected by the catalog
(`ATLAS-400-00-014`). The type names come from `GET {atlas}/types/typedefs/headers`; the connector's own types
(`olparser/lineage/typedefs`) count as known, because the worker registers them before its first upload.

Which catalog: URL (an Atlas v2 base such as http://127.0.0.1:21000/api/atlas/v2, or the embedded catalog's page
URL), else the configured target (PURVIEW_ACCOUNT_NAME or ATLAS_ENDPOINT, with ATLAS_USERNAME / ATLAS_PASSWORD),
else the catalog of the `ol2purview serve` running on the data folder.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from olparser.adapters.catalog import CatalogTarget, load_typedefs, make_atlas_client
from olparser.settings import TYPEDEFS_DIR, Settings

from .catalog_options import catalog_target


class CatalogLintError(Exception):
    """The catalog's types could not be read (no catalog, unreachable, refused): exit code 2."""


@dataclass(frozen=True)
class UnknownTypeFinding:
    rule_index: int
    rule_name: str
    type_name: str
    catalog: str

    def __str__(self) -> str:
        return (
            f"[type] rule {self.rule_index} '{self.rule_name}': purviewDataType {self.type_name!r} is not an "
            f"entity type of the catalog at {self.catalog} (nor one the connector registers): every run it "
            "maps would be rejected (ATLAS-400-00-014)"
        )


def unknown_types(rules: Iterable[Any], known: set[str], catalog: str) -> list[UnknownTypeFinding]:
    """Findings for the rules (raw config dicts) whose purviewDataType is not in `known`."""
    findings = []
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue  # the schema lint reports it
        type_name = rule.get("purviewDataType")
        if isinstance(type_name, str) and type_name not in known:
            findings.append(UnknownTypeFinding(index, str(rule.get("name", "")), type_name, catalog))
    return findings


def connector_types(directory: Path = TYPEDEFS_DIR) -> set[str]:
    """The entity types the connector registers itself before its first upload."""
    return {typedef["name"] for typedef in load_typedefs(directory).get("entityDefs", [])}


def choose_target(url: str | None, env: Mapping[str, str], where: argparse.Namespace | None = None) -> CatalogTarget:
    """The catalog as every tool chooses it (tools/catalog_options.py), `url` standing for `--atlas-url`; `where`:
    the command's `--data` and `--user`."""
    chosen = argparse.Namespace(atlas_url=url, data=getattr(where, "data", None), user=getattr(where, "user", None))
    try:
        return catalog_target(chosen, Settings.from_env(env))
    except ValueError as exc:  # NoCatalog, or a malformed setting
        raise CatalogLintError(str(exc)) from None


def catalog_entity_types(target: CatalogTarget, timeout: float = 30.0) -> set[str]:
    """The entity type names the catalog knows. Raises CatalogLintError saying why they could not be read."""
    client = make_atlas_client(target, timeout=timeout)
    try:
        headers = client.typedef_headers()
    except Exception as exc:  # connection refused, 401, a token failure: one line, no stack trace
        reason = str(exc).splitlines()[0][:300] if str(exc) else ""
        raise CatalogLintError(
            f"cannot read the type names from {target.endpoint}: {type(exc).__name__}{': ' + reason if reason else ''}"
        ) from None
    return {
        h["name"]
        for h in headers
        if isinstance(h, dict) and isinstance(h.get("name"), str) and h.get("category", "ENTITY") == "ENTITY"
    }


def lint_against_catalog(
    rules: list[Any], url: str | None, env: Mapping[str, str], where: argparse.Namespace | None = None
) -> list[UnknownTypeFinding]:
    target = choose_target(url, env, where)
    known = catalog_entity_types(target) | connector_types()
    return unknown_types(rules, known, target.endpoint or target.kind)
