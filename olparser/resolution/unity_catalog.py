"""Unity Catalog tables as Purview's Azure Databricks Unity Catalog scan registers them.

`databricks_table` (views `databricks_view`, columns `databricks_table_column`), qualifiedName
`databricks://{metastore id}/catalogs/{catalog}/schemas/{schema}/tables/{table}`; a column appends
`/columns/{column}`. Unity Catalog keeps names in lower case, so the names are lower-cased here; the metastore id
(a UUID) is lower-cased too. One implementation for the live resolution and for `ol2purview spark system-lineage`.
"""

from __future__ import annotations

import re

DATABRICKS_TABLE = "databricks_table"
DATABRICKS_VIEW = "databricks_view"
DATABRICKS_TABLE_COLUMN = "databricks_table_column"
SCHEME = "databricks://"
# The namespaces a Unity Catalog `catalog.schema.table` comes in: openlineage-spark's `unity-catalog` (1.51+), the
# naming spec's `unitycatalog://{host}[:port]` (also Spark 4's open-source Unity Catalog connector, as a TABLE
# symlink of the storage path: spark40 UnityCatalogHandler.unityCatalogNamespace) and dbt-databricks'
# `databricks://{workspace host}` (integration/common/.../dbt/processor.py, extract_namespace).
NAMESPACE = "unity-catalog"
_HOST_NAMESPACE = re.compile(r"^(?:unitycatalog|databricks)://([^/:?#@\s]+)(?::\d+)?/?$", re.IGNORECASE)


def table_qualified_name(metastore_id: str, catalog: str, schema: str, table: str) -> str:
    """`databricks://{metastore}/catalogs/{catalog}/schemas/{schema}/tables/{table}` (lower case)."""
    parts = (metastore_id, catalog, schema, table)
    if not all(isinstance(p, str) and p.strip() for p in parts):
        raise ValueError("a Unity Catalog table needs a metastore id, a catalog, a schema and a table name")
    metastore, cat, sch, tbl = (p.strip().strip("`").lower() for p in parts)
    return f"{SCHEME}{metastore}/catalogs/{cat}/schemas/{sch}/tables/{tbl}"


def column_qualified_name(table_qn: str, column: str) -> str:
    return f"{table_qn}/columns/{column}"


def split_three_part_name(name: str) -> tuple[str, str, str] | None:
    """`catalog.schema.table` (backticks allowed around each part) as its three parts, or None."""
    parts = [p.strip().strip("`") for p in name.split(".")]
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def unity_namespace(namespace: str) -> tuple[bool, str | None]:
    """(whether `namespace` holds Unity Catalog tables, the host it names): `unity-catalog` -> (True, None);
    `unitycatalog://{host}[:port]` and `databricks://{host}` -> (True, host in lower case); else (False, None)."""
    if namespace == NAMESPACE:
        return True, None
    if namespace[:1] not in "udUD":  # most namespaces: one comparison
        return False, None
    match = _HOST_NAMESPACE.match(namespace.strip())
    return (True, match.group(1).lower()) if match else (False, None)
