"""Dataset identity: which (type, qualifiedName) represents an OpenLineage dataset in the catalog.

- A dataset is known by its location (namespace, name) and, when it carries a `symlinks` identifier of type TABLE
  (Hive metastore, Unity Catalog, Synapse), by that table too. Both go through the mapping rules (mount points and
  workspace host from the run), and the identity that links to an asset a scanner created wins:
  the table when only the table matches a rule, the location when only the location does, and when both do,
  `dataset_identity` decides ("table", the default: Purview scans metastore tables as hive_table and people think in
  tables; "storage": the location). The other identity is kept on the process (`datasetLocations` for a table's
  location, `datasetTables` for a location's table).
- Unity Catalog (`catalog.schema.table` in `unity-catalog`, the naming spec's `unitycatalog://{host}[:port]`, or
  dbt-databricks' `databricks://{workspace host}`, as the dataset or as its TABLE symlink): when the metastore is
  known (`DATABRICKS_METASTORE_IDS`: the run's workspace for `unity-catalog`; the namespace's host, or the run's
  workspace when it is that host, otherwise), the table is the `databricks_table` that Purview's Unity Catalog scan
  registers,
  `databricks://{metastore id}/catalogs/{catalog}/schemas/{schema}/tables/{table}` (a scanner type: referenced when it
  exists, created otherwise, and the scan later updates that same entity). Otherwise, unless a rule maps it, it
  becomes a `databricks_unity_catalog_table` with qualifiedName `unity-catalog://{catalog}.{schema}.{table}` (lower
  case, as Unity Catalog stores names), and resolution searches for the scanned table by name. The metastore is not in the events and a table is shared by every workspace
  attached to its metastore, so the workspace host is not part of the name. Older openlineage-spark (before 1.51)
  named the symlink `schema.table` with the table's parent folder as namespace: with Unity Catalog evidence (a
  `catalog` facet of type `unity`, a `storage` facet with layer `unity`, or a `__unitystorage` location) that symlink
  is read as the same Unity Catalog table (its catalog from the `catalog` facet) instead of a path under the parent
  folder. A managed table's location (`.../__unitystorage/...`, opaque ids) never represents it: the table does,
  whatever `dataset_identity` says.
- A dataset no rule matches (neither identity) is kept as a placeholder `openlineage_dataset` named
  `{namespace}/{name}` (normalised) of the identity `dataset_identity` prefers, with its schema columns, and reported
  as unmatched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Mapping

from olparser.naming import MappingEngine, MountPoint
from olparser.naming.engine import CACHED_CHARS
from olparser.resolution import unity_catalog
from olparser.resolution.model import UNITY_STORAGE_SEGMENT, Identity, NamedDataset, UnityTable
from olparser.runs.model import DatasetFacts, RunSnapshot

from .context import RunContext, run_context
from .options import LineageOptions
from .plan import COLUMN_TYPE  # noqa: F401  (re-exported: columns belong to their dataset)

PLACEHOLDER_TYPE = "openlineage_dataset"
UNITY_CATALOG_TYPE = "databricks_unity_catalog_table"
UNITY_CATALOG_NAMESPACE = unity_catalog.NAMESPACE
UNITY_CATALOG_SCAN_RULE = "Unity Catalog scan (metastore from DATABRICKS_METASTORE_IDS)"
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
    location: str | None = None  # the storage location's qualifiedName, when a table represents the dataset
    table: str | None = None  # the table's qualifiedName, when the location represents a dataset that has one
    columns: tuple[Column, ...] = ()
    unmatched_reason: str | None = None
    rule: str | None = None  # the mapping rule that produced the type (None for placeholders)
    alternate: "ResolvedDataset | None" = None  # the identity not chosen (the location of a table, or its table)
    unity: UnityTable | None = None  # set when this identity is a Unity Catalog table

    @cached_property
    def key(self) -> tuple[str, str]:
        return self.type_name, self.qualified_name

    @property
    def matched(self) -> bool:
        """True when a mapping rule gave the type and qualifiedName (an asset a scanner may own)."""
        return self.rule is not None

    def identity(self) -> Identity:
        return Identity(self.type_name, self.qualified_name, self.namespace, self.name, self.matched, self.unity)

    @cached_property
    def identities(self) -> tuple[Identity, ...]:
        """The chosen identity, then the other one (kept with the dataset: a remembered dataset builds them once)."""
        return (self.identity(),) if self.alternate is None else (self.identity(), self.alternate.identity())

    def named(self, metastore: str | None) -> NamedDataset:
        """This dataset for resolution: its identities, the chosen one first."""
        return NamedDataset(self.key, self.identities, metastore)


@dataclass(frozen=True)
class DatasetResolver:
    """Maps datasets of one run (its mount points, workspace host and Unity Catalog metastore) through the rules."""

    engine: MappingEngine
    mounts: tuple[MountPoint, ...]
    workspace_url: str | None
    options: LineageOptions
    metastore_id: str | None = None  # the Unity Catalog metastore of the run's workspace, when known

    def resolve(self, facts: DatasetFacts) -> ResolvedDataset:
        """The dataset of an input/output; with its columns (from the `schema` facet) when the connector owns it."""
        location = self.resolve_name(facts.namespace, facts.name, facts.facets)
        symlink = _table_symlink(facts.facets)
        if symlink is None:
            return location
        older_unity = _older_unity_table(symlink, facts)
        if older_unity is not None:
            table = self._unity_dataset(symlink[0], symlink[1], older_unity, facts.facets)
        else:
            table = self.resolve_name(symlink[0], symlink[1], facts.facets)
        if table.unity is not None and _opaque(location):
            use_table = True
        elif table.matched != location.matched:
            use_table = table.matched
        else:
            use_table = self.options.dataset_identity == "table"
        pair = (location, table, use_table)
        met = self.engine.datasets_met
        known = met.get((id(location), id(table), use_table))
        if known is not None and known[0] == pair:  # the very datasets (`is`, then ==), so the same result
            found: ResolvedDataset = known[1]
            return found
        if use_table:
            dataset = replace(table, location=location.qualified_name, alternate=location)
        else:
            dataset = replace(location, table=table.qualified_name, alternate=table)
        if _is_remembered(met, location) and _is_remembered(met, table):  # met again, as the same objects
            _remember(met, (id(location), id(table), use_table), (pair, dataset))
        return dataset

    def resolve_name(self, namespace: str, name: str, facets: Mapping[str, Any] | None = None) -> ResolvedDataset:
        """A bare (namespace, name), e.g. an input field of column lineage or a symlink. Columns are read from
        `facets` only for datasets the connector owns (a scanner owns the columns of the others)."""
        result = self.engine.map(namespace, name, mounts=self.mounts, workspace_url=self.workspace_url)
        if result.matched:
            # a matched dataset follows from (namespace, name) and the engine's answer, which the engine keeps
            known = self.engine.datasets_met.get((namespace, name))
            if known is not None and known[0] is result:
                remembered: ResolvedDataset = known[1]
                return remembered
        is_unity, host = unity_catalog.unity_namespace(namespace)
        three_parts = unity_catalog.split_three_part_name(name) if is_unity else None
        unity = (
            None if three_parts is None else UnityTable(*three_parts, host=host, metastore=self._host_metastore(host))
        )
        if result.matched:
            # Both names are set when the result matched (MappingResult.matched).
            type_name: str = result.purview_type  # type: ignore[assignment]
            qualified_name: str = result.qualified_name  # type: ignore[assignment]
            dataset = ResolvedDataset(
                type_name=type_name,
                qualified_name=qualified_name,
                display_name=display_name(namespace, name),
                owned=False,
                namespace=namespace,
                name=name,
                rule=result.rule_name or "",
                unity=unity,
            )
            # the engine keeps no answer for a longer one; a Unity Catalog host's metastore depends on the options
            if len(namespace) + len(name) <= CACHED_CHARS and (unity is None or unity.host is None):
                _remember(self.engine.datasets_met, (namespace, name), (result, dataset))
            return dataset
        if unity is not None:
            return self._unity_dataset(namespace, name, unity, facets)
        columns = schema_columns(facets) if facets else ()
        return ResolvedDataset(
            type_name=PLACEHOLDER_TYPE,
            qualified_name=placeholder_qualified_name(namespace, name),
            display_name=display_name(namespace, name),
            owned=True,
            namespace=namespace,
            name=name,
            columns=columns,
            unmatched_reason=result.error or NO_RULE,
        )

    def _unity_dataset(
        self, namespace: str, name: str, unity: UnityTable, facets: Mapping[str, Any] | None
    ) -> ResolvedDataset:
        """A Unity Catalog table: the scan's `databricks_table` when the metastore (and the catalog) are known,
        else the connector's `databricks_unity_catalog_table` (with its columns)."""
        table = unity.table.strip("`").lower()
        metastore = unity.metastore if unity.host else self.metastore_id
        if metastore and unity.catalog:
            qualified_name = unity_catalog.table_qualified_name(metastore, unity.catalog, unity.schema, unity.table)
            return ResolvedDataset(
                type_name=unity_catalog.DATABRICKS_TABLE,
                qualified_name=qualified_name,
                display_name=table,
                owned=False,
                namespace=namespace,
                name=name,
                rule=UNITY_CATALOG_SCAN_RULE,
                unity=unity,
            )
        parts = [p.strip("`").lower() for p in (unity.catalog, unity.schema, unity.table) if p]
        return ResolvedDataset(
            type_name=UNITY_CATALOG_TYPE,
            qualified_name=f"{UNITY_CATALOG_NAMESPACE}://{'.'.join(parts)}",
            display_name=table,
            owned=True,
            namespace=namespace,
            name=name,
            columns=schema_columns(facets) if facets else (),
            unity=unity,
        )

    def _host_metastore(self, host: str | None) -> str | None:
        """The metastore of the host a Unity Catalog namespace names (DATABRICKS_METASTORE_IDS), else the run's when
        the host is the run's workspace; None when unknown (resolution then searches by name)."""
        if host is None:
            return None
        found = self.options.metastore_for(host)
        if found is None and self.workspace_url and host == self.workspace_url.strip().lower():
            return self.metastore_id
        return found


def dataset_resolver(
    run: RunSnapshot, engine: MappingEngine, options: LineageOptions, ctx: RunContext | None = None
) -> DatasetResolver:
    """How the datasets of `run` are named: the rules with the run's mount points, workspace host and Unity Catalog
    metastore (`qn-tester --event` names an event's datasets with it, as the builder does)."""
    ctx = ctx or run_context(run, options)
    return naming_resolver(
        engine, options, mount_points=ctx.mount_points, workspace_host=ctx.workspace_host, workspace_id=ctx.workspace_id
    )


def naming_resolver(
    engine: MappingEngine,
    options: LineageOptions,
    *,
    mount_points: Any = None,
    workspace_host: str | None = None,
    workspace_id: str | None = None,
    metastore: str | None = None,
) -> DatasetResolver:
    """How a dataset is named for a run with these settings: `mount_points` as the environment facet lists them, the
    workspace's host and id, its Unity Catalog metastore from DATABRICKS_METASTORE_IDS (`options`) unless `metastore`
    is given. The builder's (through `dataset_resolver`) and `qn-tester`'s one way of naming a dataset."""
    found = metastore or options.metastore_for(workspace_id, workspace_host)
    return DatasetResolver(engine, engine.mount_memo.read(mount_points), workspace_host, options, metastore_id=found)


# Datasets met before, so that a dataset named again is one dict lookup (and its identities are built once): a matched
# dataset by its (namespace, name) with the engine's answer it came from, and a dataset with a table symlink by the
# two datasets it was chosen from. Entries hold the objects they are keyed by or compared with, so ids stay theirs.
# The engine keeps them (`MappingEngine.datasets_met`: they go with its rules); bounded here: emptied when full.
REMEMBERED_DATASETS = 4096


def _remember(met: dict[tuple[Any, ...], tuple[Any, Any]], key: tuple[Any, ...], entry: tuple[Any, Any]) -> None:
    if len(met) >= REMEMBERED_DATASETS:
        met.clear()
    met[key] = entry


def _is_remembered(met: dict[tuple[Any, ...], tuple[Any, Any]], dataset: ResolvedDataset) -> bool:
    known = met.get((dataset.namespace, dataset.name))
    return known is not None and known[1] is dataset


def _opaque(dataset: ResolvedDataset) -> bool:
    """A Unity Catalog managed table's storage folder: `.../__unitystorage/catalogs/<uuid>/tables/<uuid>`."""
    return f"/{UNITY_STORAGE_SEGMENT}/" in f"/{dataset.name.strip('/')}/"


def _older_unity_table(symlink: tuple[str, str], facts: DatasetFacts) -> UnityTable | None:
    """The Unity Catalog table of an older openlineage-spark symlink (`schema.table` or `catalog.schema.table`, the
    table's parent folder as namespace), when the dataset shows Unity Catalog evidence; else None."""
    if "catalog" not in facts.facets and "storage" not in facts.facets and UNITY_STORAGE_SEGMENT not in facts.name:
        return None  # no Unity Catalog evidence (most datasets), told without building it
    namespace, name = symlink
    if unity_catalog.unity_namespace(namespace)[0]:
        return None
    catalog_facet = facts.facets.get("catalog")
    catalog_facet = catalog_facet if isinstance(catalog_facet, dict) else {}
    storage = facts.facets.get("storage")
    storage_layer = storage.get("storageLayer") if isinstance(storage, dict) else None
    unity_catalog_facet = str(catalog_facet.get("type", "")).lower() == "unity"
    if not (
        unity_catalog_facet
        or str(storage_layer or "").lower() == "unity"
        or f"/{UNITY_STORAGE_SEGMENT}/" in f"/{facts.name.strip('/')}/"
    ):
        return None
    parts = [p.strip().strip("`") for p in name.split(".")]
    if not all(parts):
        return None
    if len(parts) == 3:
        return UnityTable(*parts)
    if len(parts) == 2:
        catalog = catalog_facet.get("name") if unity_catalog_facet else None
        return UnityTable(catalog.strip() if isinstance(catalog, str) and catalog.strip() else None, *parts)
    return None


def _table_symlink(facets: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first TABLE identifier of the `symlinks` facet, as (namespace, name)."""
    symlinks = facets.get("symlinks")
    identifiers = symlinks.get("identifiers") if isinstance(symlinks, dict) else None
    for identifier in identifiers if isinstance(identifiers, list) else ():
        if (
            isinstance(identifier, dict)
            and identifier.get("type", "TABLE") == "TABLE"
            and isinstance(identifier.get("namespace"), str)
            and isinstance(identifier.get("name"), str)
            and identifier["name"]
        ):
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
        columns.append(
            Column(
                name=item["name"],
                data_type=data_type if isinstance(data_type, str) else None,
                description=description if isinstance(description, str) else None,
            )
        )
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
