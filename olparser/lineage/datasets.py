"""Dataset identity: which (type, qualifiedName) represents an OpenLineage dataset in the catalog.

- Identity: with `dataset_identity="table"` a dataset that has a `symlinks` identifier of type TABLE is represented
  by that table (Hive metastore / Unity Catalog): Purview's scanners register tables as such (hive_table
  `{db}.{table}@{host}`) and users think in tables. Its storage location is kept (`location`) and written on the
  process (`datasetLocations`). With "storage" the location itself is the dataset.
- Every identity goes through the mapping rules (mount points and workspace host from the run).
- Unity Catalog (`unity-catalog` / `catalog.schema.table`) has no Purview built-in type: unless a rule maps it, it
  becomes a `databricks_unity_catalog_table` with qualifiedName `unity-catalog://{catalog}.{schema}.{table}`
  (lower case, as Unity Catalog stores names). The metastore is not in the events and a table is shared by every
  workspace attached to its metastore, so the workspace host is not part of the name.
- A dataset no rule matches is kept as a placeholder `openlineage_dataset` named `{namespace}/{name}` (normalised),
  with its schema columns, and reported as unmatched.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

from olparser.naming import MappingEngine, MountPoint
from olparser.runs.model import DatasetFacts

from .options import LineageOptions

PLACEHOLDER_TYPE = "openlineage_dataset"
COLUMN_TYPE = "openlineage_column"
UNITY_CATALOG_TYPE = "databricks_unity_catalog_table"
UNITY_CATALOG_NAMESPACE = "unity-catalog"
NO_RULE = "no mapping rule matched"


@dataclass(frozen=True)
class Column:
    name: str
    data_type: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class ResolvedDataset:
    """One dataset as the catalog will know it."""

    type_name: str
    qualified_name: str
    display_name: str
    owned: bool  # True: the connector creates it (placeholder, Unity Catalog); False: a scanner type, may exist
    namespace: str  # the OpenLineage identity that was mapped (the symlink's when the table represents it)
    name: str
    location: str | None = None  # the storage location, when a table represents the dataset
    columns: tuple[Column, ...] = ()
    unmatched_reason: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.type_name, self.qualified_name


@dataclass(frozen=True)
class DatasetResolver:
    """Maps datasets of one run (its mount points and workspace host) through the rules."""

    engine: MappingEngine
    mounts: tuple[MountPoint, ...]
    workspace_url: str | None
    options: LineageOptions

    def resolve(self, facts: DatasetFacts) -> ResolvedDataset:
        """The dataset of an input/output; with its columns (from the `schema` facet) when the connector owns it."""
        table = _table_symlink(facts.facets) if self.options.dataset_identity == "table" else None
        if table is None:
            return self.resolve_name(facts.namespace, facts.name, facts.facets)
        location = self.resolve_name(facts.namespace, facts.name).qualified_name
        resolved = self.resolve_name(table[0], table[1], facts.facets)
        return replace(resolved, location=location)

    def resolve_name(self, namespace: str, name: str, facets: Mapping[str, Any] | None = None) -> ResolvedDataset:
        """A bare (namespace, name), e.g. an input field of column lineage or a symlink. Columns are read from
        `facets` only for datasets the connector owns (a scanner owns the columns of the others)."""
        result = self.engine.map(namespace, name, mounts=self.mounts, workspace_url=self.workspace_url)
        if result.matched:
            return ResolvedDataset(type_name=result.purview_type, qualified_name=result.qualified_name,
                                   display_name=display_name(namespace, name), owned=False,
                                   namespace=namespace, name=name)
        columns = schema_columns(facets) if facets else ()
        if namespace == UNITY_CATALOG_NAMESPACE and len(name.split(".")) == 3:
            return ResolvedDataset(type_name=UNITY_CATALOG_TYPE,
                                   qualified_name=f"{UNITY_CATALOG_NAMESPACE}://{name.lower()}",
                                   display_name=name.split(".")[-1].lower(), owned=True,
                                   namespace=namespace, name=name, columns=columns)
        return ResolvedDataset(type_name=PLACEHOLDER_TYPE, qualified_name=placeholder_qualified_name(namespace, name),
                               display_name=display_name(namespace, name), owned=True, namespace=namespace,
                               name=name, columns=columns, unmatched_reason=result.error or NO_RULE)


def _table_symlink(facets: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first TABLE identifier of the `symlinks` facet, as (namespace, name)."""
    symlinks = facets.get("symlinks")
    identifiers = symlinks.get("identifiers") if isinstance(symlinks, dict) else None
    for identifier in identifiers if isinstance(identifiers, list) else ():
        if (isinstance(identifier, dict) and identifier.get("type", "TABLE") == "TABLE"
                and isinstance(identifier.get("namespace"), str) and isinstance(identifier.get("name"), str)
                and identifier["name"]):
            return identifier["namespace"], identifier["name"]
    return None


def schema_columns(facets: Mapping[str, Any]) -> tuple[Column, ...]:
    """Columns of the `schema` facet, in their order (nested fields are not expanded)."""
    schema = facets.get("schema")
    fields = schema.get("fields") if isinstance(schema, dict) else None
    columns: list[Column] = []
    seen: set[str] = set()
    for item in fields if isinstance(fields, list) else ():
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or item["name"] in seen:
            continue
        seen.add(item["name"])
        data_type, description = item.get("type"), item.get("description")
        columns.append(Column(name=item["name"], data_type=data_type if isinstance(data_type, str) else None,
                              description=description if isinstance(description, str) else None))
    return tuple(columns)


def display_name(namespace: str, name: str) -> str:
    """The last path segment of the name (a dotted table name is kept whole), else the namespace."""
    segment = name.rstrip("/").rsplit("/", 1)[-1]
    return segment or namespace


_SCHEME_AUTHORITY = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)(.*)$")
_BARE_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")


def placeholder_qualified_name(namespace: str, name: str) -> str:
    """`{namespace}/{name}`, normalised: scheme and host lower-cased, duplicate and trailing slashes removed; a bare
    scheme namespace with an absolute path reads as a URI (`dbfs` + `/a/b` gives `dbfs:/a/b`)."""
    namespace, name = namespace.strip(), name.strip()
    if _BARE_SCHEME.match(namespace) and name.startswith("/"):
        return f"{namespace.lower()}:/{_collapse(name)}"
    match = _SCHEME_AUTHORITY.match(namespace)
    prefix, rest = "", namespace
    if match:
        prefix = f"{match.group(1).lower()}://{match.group(2).lower()}"
        rest = match.group(3)
    joined = _collapse("/".join(part for part in (rest, name) if part.strip("/")))
    if prefix:
        return f"{prefix}/{joined}" if joined else prefix
    return joined or namespace


def _collapse(path: str) -> str:
    """The path without leading, trailing and repeated slashes."""
    return "/".join(part for part in path.split("/") if part)
