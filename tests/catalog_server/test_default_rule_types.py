"""Every type the shipped rules write is a type the embedded catalog knows, as Purview's scanners do: otherwise every
run mapped by such a rule would be rejected (ATLAS-400-00-014) when the page or the tests use the embedded catalog.
The same for the types Purview's scanners create that the README and issue 19 name (resource sets, Unity Catalog,
Fabric), which `ol2purview catalog scan` and the resolution tests register; none of them is one of the connector's
own types (olparser/lineage/typedefs), which the worker registers itself."""

from __future__ import annotations

import json
import re

from olparser.resolution.resource_sets import CONTAINER_TYPES, RESOURCE_SET_TYPES
from olparser.resolution.unity_catalog import DATABRICKS_TABLE, DATABRICKS_TABLE_COLUMN, DATABRICKS_VIEW
from tests.support.rules import MAPPINGS_PATH
from tools.catalog.builtin_types import builtin_typedefs

KNOWN = {typedef["name"] for typedef in builtin_typedefs()}
# families of Purview type names; a README identifier in one of them that is not a type is listed below
TYPE_PREFIXES = (
    "azure_",
    "aws_s3_",
    "databricks_",
    "fabric_",
    "hive_",
    "mssql_",
    "mysql_",
    "postgresql_",
    "snowflake_",
    "openlineage_",
    "spark_",
)
README_NAMES_THAT_ARE_NOT_TYPES = {
    "databricks_shell",  # the generic Spark application name on Databricks
    "spark_version",  # a run facet of older openlineage-spark
    "spark_properties",  # the run facet of Spark properties (docs/guides/job-identity.md)
    "openlineage_sql",  # the OpenLineage SQL parser's Python package (docs/development.md: it ships no types)
}


def _connector_types(project_root) -> set[str]:
    names = set()
    for path in (project_root / "olparser" / "lineage" / "typedefs").glob("*.json"):
        body = json.loads(path.read_text(encoding="utf-8"))
        names |= {d["name"] for key in ("entityDefs", "relationshipDefs") for d in body.get(key, [])}
    return names


def test_the_embedded_catalog_knows_every_type_the_default_rules_write():
    rules = json.loads(MAPPINGS_PATH.read_text(encoding="utf-8"))
    rules = rules["olToPurviewMappings"] if isinstance(rules, dict) else rules
    written = {rule["purviewDataType"] for rule in rules}
    assert sorted(written - KNOWN) == []
    assert {"azure_blob_container", "mysql_table"} <= written


def test_the_embedded_catalog_knows_the_types_purview_scanners_create():
    resource_sets = set(RESOURCE_SET_TYPES) | set(RESOURCE_SET_TYPES.values()) | set(CONTAINER_TYPES.values())
    unity_catalog = {
        DATABRICKS_TABLE,
        DATABRICKS_VIEW,
        DATABRICKS_TABLE_COLUMN,
        "databricks_view_column",
        "databricks_metastore",
        "databricks_catalog",
        "databricks_schema",
    }
    fabric = {
        "fabric_lakehouse_table",
        "fabric_lakehouse_path",
        "fabric_lake_warehouse",
        "fabric_lakehouse_table_column",
    }
    assert sorted((resource_sets | unity_catalog | fabric) - KNOWN) == []
    assert {
        "azure_datalake_gen2_resource_set",
        "azure_blob_resource_set",
        "azure_datalake_gen1_resource_set",
        "azure_file_resource_set",
        "aws_s3_v2_resource_set",
    } <= resource_sets


def test_tables_and_their_columns_are_related_as_purview_relates_them():
    relationships = {
        d["name"]: (d["endDef1"]["type"], d["endDef1"]["name"], d["endDef2"]["type"], d["endDef2"]["name"])
        for d in builtin_typedefs()
        if d["category"] == "RELATIONSHIP"
    }
    assert relationships["databricks_table_columns"] == (
        "databricks_table",
        "columns",
        "databricks_table_column",
        "table",
    )
    assert relationships["databricks_schema_tables"] == ("databricks_schema", "tables", "databricks_table", "schema")
    assert relationships["fabric_lakehouse_table_columns"] == (
        "fabric_lakehouse_table",
        "columns",
        "fabric_lakehouse_table_column",
        "table",
    )


def test_every_type_the_readme_and_the_docs_name_is_known(project_root):
    pages = [project_root / "README.md", *sorted((project_root / "docs").rglob("*.md"))]
    readme = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    named = {name for name in re.findall(r"`([a-z0-9]+(?:_[a-z0-9]+)+)`", readme) if name.startswith(TYPE_PREFIXES)}
    named -= README_NAMES_THAT_ARE_NOT_TYPES
    assert {"azure_datalake_gen2_path", "databricks_table", "openlineage_dataset"} <= named
    assert sorted(named - KNOWN - _connector_types(project_root)) == []


def test_no_scanner_type_is_redefined_by_the_connector(project_root):
    assert sorted(KNOWN & _connector_types(project_root)) == []
