"""The candidates of a dataset: every catalog asset that may be the data our rules name, most preferred first.

Pure: plain data in, plain data out. Checking which candidate exists is I/O (`olparser/adapters/catalog/resolver.py`).

A dataset comes from the builder as a `NamedDataset`: the identity it was written as (`default`) and the identities
our rules give it (`identities`: the table and the location, the preferred one first, as `DatasetResolver` decides),
each identity knowing whether it is a Unity Catalog table (`unity`), and the workspace's metastore. Its candidates,
in order:

1. each identity a rule maps to a type the scanners register (the asset our rule was written for);
2. the scanned forms of each identity, in the same order:
   - a storage path (ADLS Gen2, Blob...): the resource sets the scanner registers for a folder Spark wrote
     (`resource_set_names`: `{folder}/{SparkPartitions}`, partition segments `k=v` -> `k={k}`, the account's
     replacers), then a *search* for a partitioned resource set under the folder (Spark names a partitioned output
     by its root only, so the partition keys are unknown: `{folder}/k={...}/.../{SparkPartitions}`);
   - a Unity Catalog table: `databricks_table` `databricks://{metastore}/catalogs/{c}/schemas/{s}/tables/{t}` when
     the metastore and the catalog are known, else a search on the table name (with `schemaName`/`catalogName`)
     whose hits must have exactly that shape;
   - a OneLake name (`abfss://{workspace}@onelake.dfs.fabric.microsoft.com/{lakehouse}/Tables/{table}`):
     `fabric_lakehouse_table` `https://app.fabric.microsoft.com/groups/{workspace}/lakehouses/{lakehouse}/tables/
     {table}` when both are ids (GUIDs), else a search on the table name checked against that shape;
   - a placeholder of a store Purview scans but whose scanned form no source confirms (Oracle, Teradata, Db2,
     Cassandra, BigQuery, Redshift, S3, Fabric Warehouse): a search by the source's `assetType` and the object's
     name, whose one hit must hold the dataset's parts in order (`store_search.py`).

Connector types (placeholders, `databricks_unity_catalog_table`) are never candidates: no scanner registers them.
A storage location under `__unitystorage` (a Unity Catalog managed table's opaque folder) gives no candidates: it
is not what anyone browses, and the table's own candidates stand for the dataset.

A search candidate links only when exactly one hit of its type has the expected qualifiedName shape: two tables of
one name in two metastores (or lakehouses) are ambiguous, and nothing is linked rather than the wrong one.
"""

from __future__ import annotations

import re
from typing import Iterable

from olparser.resolution import unity_catalog
from olparser.resolution.model import (
    PARTITIONS,
    SEGMENT,
    TEXT,
    UNITY_STORAGE_SEGMENT,
    Candidate,
    Identity,
    Key,
    NamedDataset,
    Search,
    Shape,
    UnityTable,
    shape_text,
)
from olparser.resolution.resource_sets import RESOURCE_SET_TYPES, ResourceSetRules, resource_set_names
from olparser.resolution.store_search import store_search_candidates

SPARK_PARTITIONS = "{SparkPartitions}"
FABRIC_TABLE = "fabric_lakehouse_table"
FABRIC_BASE = "https://app.fabric.microsoft.com/groups/"
ONELAKE_HOSTS = ("onelake.dfs.fabric.microsoft.com", "onelake.blob.fabric.microsoft.com")

# SQLAlchemy URL schemes with an optional driver (`mssql+pyodbc`, `postgresql+psycopg2`), host and optional port
_SQLALCHEMY = re.compile(r"^(mssql|postgresql|postgres)(?:\+[A-Za-z0-9_]+)?://([^/:?#@\s]+)(?::\d+)?/?$", re.IGNORECASE)
# (URL scheme without driver, host suffix, scanned type, qualifiedName scheme) of the Azure databases whose scanned
# form is known (purview-and-atlas.md, "Built-in types and their qualified names")
_AZURE_SQL_HOSTS = (
    ("mssql", ".database.windows.net", "azure_sql_table", "mssql://"),
    ("postgresql", ".postgres.database.azure.com", "azure_postgresql_table", "postgresql://"),
    ("postgres", ".postgres.database.azure.com", "azure_postgresql_table", "postgresql://"),
)
_GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_ONELAKE = re.compile(r"^abfss?://([^@/]+)@(onelake\.(?:dfs|blob)\.fabric\.microsoft\.com)/?$", re.IGNORECASE)


def _search(
    type_name: str, keywords: str, shape: Shape, origin: str, attributes: tuple[tuple[str, str], ...] = ()
) -> Candidate:
    search = Search(type_name, keywords, shape, attributes)
    return Candidate(type_name, shape_text(shape), origin, search)


# --- the candidates --------------------------------------------------------------------------------------------------


def dataset_candidates(dataset: NamedDataset, rules: ResourceSetRules) -> tuple[Candidate, ...]:
    """The dataset's candidates, most preferred first, each key once (see the module docstring)."""
    found: list[Candidate] = []
    for identity in dataset.identities:
        if identity.scanned_type and not _opaque(identity):
            found.append(Candidate(identity.type_name, identity.qualified_name, "rule identity"))
    for identity in dataset.identities:
        found += _scanned_forms(identity, dataset.metastore, rules)
    return _unique(found)


def _scanned_forms(identity: Identity, metastore: str | None, rules: ResourceSetRules) -> list[Candidate]:
    forms: list[Candidate] = []
    if identity.type_name in RESOURCE_SET_TYPES and not _opaque(identity):
        forms += storage_candidates(identity.type_name, identity.qualified_name, rules)
    if identity.unity is not None:
        forms += unity_candidates(identity.unity, identity.unity.metastore if identity.unity.host else metastore)
    forms += fabric_candidates(identity.namespace, identity.name)
    if not identity.scanned_type:
        forms += sql_table_search_candidates(identity.namespace, identity.name)
        forms += store_search_candidates(identity.namespace, identity.name)
    return forms


def storage_candidates(path_type: str, path_qualified_name: str, rules: ResourceSetRules) -> list[Candidate]:
    """The resource sets a folder may be registered as (exact), then a search for a partitioned one under it."""
    set_type = RESOURCE_SET_TYPES[path_type]
    folder = path_qualified_name.rstrip("/")
    found = [Candidate(set_type, name, "resource set") for name in resource_set_names(folder, rules, folder=True)]
    segment = folder.rsplit("/", 1)[-1]
    if "=" not in segment and "{" not in folder and folder.count("/") > 3:
        shape: Shape = ((TEXT, folder), (PARTITIONS, ""), (TEXT, "/" + SPARK_PARTITIONS))
        found.append(_search(set_type, segment, shape, "partitioned resource set (search)"))
    return found


def unity_candidates(unity: UnityTable, metastore: str | None) -> list[Candidate]:
    """The `databricks_table` the Unity Catalog scan registers: exact with a metastore and a catalog, else a search
    on the table name (and schema, catalog) checked against the name's shape."""
    schema, table = unity.schema.strip("`").lower(), unity.table.strip("`").lower()
    catalog = unity.catalog.strip("`").lower() if unity.catalog else None
    if metastore and catalog:
        return [
            Candidate(
                unity_catalog.DATABRICKS_TABLE,
                unity_catalog.table_qualified_name(metastore, catalog, schema, table),
                "Unity Catalog scan",
            )
        ]
    shape: Shape = (
        (TEXT, unity_catalog.SCHEME),
        (SEGMENT, ""),
        *(
            ((TEXT, f"/catalogs/{catalog}/schemas/"),)
            if catalog
            else ((TEXT, "/catalogs/"), (SEGMENT, ""), (TEXT, "/schemas/"))
        ),
        (TEXT, f"{schema}/tables/{table}"),
    )
    attributes = (("schemaName", schema),) + ((("catalogName", catalog),) if catalog else ())
    return [
        _search(
            unity_catalog.DATABRICKS_TABLE, table, shape, "Unity Catalog scan (search: metastore unknown)", attributes
        )
    ]


def sql_table_search_candidates(namespace: str, name: str) -> list[Candidate]:
    """The Azure SQL / Azure PostgreSQL table of a name that lacks its database: Great Expectations names a SQL table
    `{SQLAlchemy scheme}://{host}` + `{schema}.{table}` (great_expectations/action.py `_source`: scheme and host
    only), so the scanner's `mssql://{host}/{db}/{schema}/{table}` is searched by the table name and checked against
    that shape with any database; two databases holding that table are ambiguous and link nothing."""
    match = _SQLALCHEMY.match(namespace.strip())
    if match is None:
        return []
    parts = [p.strip().strip('[]"') for p in name.split(".")]
    if len(parts) != 2 or not all(parts):
        return []
    host, (schema, table) = match.group(2).lower(), parts
    for url_scheme, suffix, type_name, scheme in _AZURE_SQL_HOSTS:
        if match.group(1).lower() == url_scheme and host.endswith(suffix):
            shape: Shape = ((TEXT, f"{scheme}{host}/"), (SEGMENT, ""), (TEXT, f"/{schema}/{table}"))
            return [_search(type_name, table, shape, "SQL table, database not in the name (search)")]
    return []


def fabric_candidates(namespace: str, name: str) -> list[Candidate]:
    """The `fabric_lakehouse_table` of a OneLake table path: exact when the workspace and the lakehouse are ids, a
    search on the table name otherwise (`MyWorkspace@onelake...`, `MyLakehouse.Lakehouse/Tables/t`)."""
    parts = onelake_table(namespace, name)
    if parts is None:
        return []
    workspace, lakehouse, table_path = parts
    table = table_path.replace("/", "%252F")  # a schema-enabled lakehouse: tables/{schema}%252F{table}
    if _GUID.match(workspace) and _GUID.match(lakehouse):
        qualified_name = f"{FABRIC_BASE}{workspace.lower()}/lakehouses/{lakehouse.lower()}/tables/{table}"
        return [Candidate(FABRIC_TABLE, qualified_name, "Fabric scan")]
    shape: Shape = (
        (TEXT, FABRIC_BASE),
        (SEGMENT, ""),
        (TEXT, "/lakehouses/"),
        (SEGMENT, ""),
        (TEXT, f"/tables/{table}"),
    )
    return [_search(FABRIC_TABLE, table_path.rsplit("/", 1)[-1], shape, "Fabric scan (search: names, not ids)")]


def onelake_table(namespace: str, name: str) -> tuple[str, str, str] | None:
    """(workspace, lakehouse, `table` or `schema/table`) of a OneLake Tables path, or None. The lakehouse may be
    named (`Sales.Lakehouse`: the name without the suffix is returned) or an id."""
    match = _ONELAKE.match(namespace.strip())
    if match is None:
        return None
    segments = [s for s in name.strip().split("/") if s]
    if len(segments) not in (3, 4) or segments[1].lower() != "tables":
        return None
    lakehouse = segments[0]
    if lakehouse.lower().endswith(".lakehouse"):
        lakehouse = lakehouse[: -len(".lakehouse")]
    if not lakehouse:
        return None
    return match.group(1), lakehouse, "/".join(segments[2:])


def _opaque(identity: Identity) -> bool:
    """A Unity Catalog managed table's storage folder (`.../__unitystorage/...`): opaque ids, never linked."""
    return f"/{UNITY_STORAGE_SEGMENT}/" in f"/{identity.qualified_name}/"


def _unique(candidates: Iterable[Candidate]) -> tuple[Candidate, ...]:
    seen: dict[Key, Candidate] = {}
    for candidate in candidates:
        seen.setdefault(candidate.key, candidate)
    return tuple(seen.values())
