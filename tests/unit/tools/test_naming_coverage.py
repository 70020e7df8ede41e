"""Naming-spec coverage: every form of the naming spec and of today's producers gets the scanner's identity, a
search, or a documented treatment; `qn-tester coverage` prints it; docs/guides/producers-and-names.md is that table."""

from __future__ import annotations

import io
import re

import pytest

from olparser.naming import MappingEngine, stores
from olparser.naming.tokens import tokenize_namespace
from tests.support.repository import PROJECT_ROOT
from tests.support.rules import MAPPINGS_PATH
from tools import qn_tester
from tools.naming_coverage import (
    FORMS,
    GUIDE_END,
    GUIDE_START,
    OTHER,
    SCANNER,
    SEARCH,
    counts,
    coverage_rows,
    guide_with_table,
    markdown_table,
    mismatches,
)

GUIDE = PROJECT_ROOT / "docs" / "guides" / "producers-and-names.md"


@pytest.fixture(scope="module")
def rows():
    return coverage_rows(MappingEngine.from_path(MAPPINGS_PATH))


def test_every_form_is_named_as_documented(rows):
    assert mismatches(rows) == []


def test_the_counts_of_the_table(rows):
    assert counts(rows) == {SCANNER: 26, SEARCH: 12, OTHER: 10}
    assert len(rows) == len(FORMS) == 48


def test_a_placeholder_is_never_beside_a_scanner_form_of_a_store_purview_scans(rows):
    # the "documented other" forms are exactly the stores no scanner registers; those Purview scans but whose form
    # is unconfirmed are searched by their source's assetType
    assert sorted({r.form.store for r in rows if r.status == OTHER}) == [
        "Amazon Athena",
        "Azure Event Hubs (Kafka endpoint)",
        "DBFS (not the Hive warehouse)",
        "Google Cloud Storage",
        "Google Pub/Sub",
        "HDFS",
        "In memory",
        "Kafka",
        "Local file system",
        "Trino",
    ]
    assert {r.type_name for r in rows if r.status == OTHER} == {"openlineage_dataset"}
    assert {
        r.form.store: (r.type_name, r.qualified_name) for r in rows if r.form.purview.startswith(stores.SEARCHED)
    } == {
        "Oracle": ("assetType Oracle", "…//ora.example.com…ORCL…SALES…ORDERS"),
        "Teradata": ("assetType Teradata", "…//td.example.com…sales…orders"),
        "Db2": ("assetType Db2 or DB2", "…//db2.example.com…SALES…APP…ORDERS"),
        "Cassandra": ("assetType Cassandra", "…//cass.example.com…shop…orders"),
        "Google BigQuery": ("assetType Google BigQuery", "…project…dataset…orders"),
        "Amazon Redshift": ("assetType Amazon Redshift", "…//cluster…eu-west-1…dev…public…orders"),
        "Amazon S3": ("assetType Amazon S3", "…//bucket…/raw/orders.parquet"),
        "Microsoft Fabric Warehouse": (
            "assetType Microsoft Fabric",
            "…//xyz.datawarehouse.fabric.microsoft.com…wh…dbo…orders",
        ),
    }


def _row(rows, namespace: str, name: str):
    return next(
        (r.qualified_name, r.type_name, r.status) for r in rows if (r.form.namespace, r.form.name) == (namespace, name)
    )


@pytest.mark.parametrize(
    "namespace, name",
    [
        # openlineage-spark SqlServerJdbcExtractor (1.40+): sqlserver://{host}:{port}, {database}.{schema}.{table}
        ("sqlserver://srv.database.windows.net:1433", "sales.crm.orders"),
        # openlineage-spark 0.x: ;database= in the namespace, {schema}.{table}
        ("sqlserver://srv.database.windows.net:1433;database=sales", "crm.orders"),
        # naming.md MSSQL row `mssql://{host}:{port}` + `{database}.{schema}.{table}`; Airflow's MSSQL provider
        # (MsSqlHook.get_openlineage_database_info: scheme "mssql", authority host:port); dbt-ol processor.py
        # extract_namespace Adapter.SQLSERVER: f"mssql://{profile['server']}:{profile['port']}"
        ("mssql://srv.database.windows.net:1433", "sales.crm.orders"),
    ],
)
def test_one_azure_sql_table_sent_by_three_producers_is_one_identity(rows, namespace, name):
    assert _row(rows, namespace, name) == (
        "mssql://srv.database.windows.net/sales/crm/orders",
        "azure_sql_table",
        SCANNER,
    )


@pytest.mark.parametrize(
    "namespace, name, qualified_name, type_name",
    [
        # naming.md MSSQL row on other SQL Server hosts and Synapse: the same identities as Spark JDBC's form
        (
            "mssql://ws.sql.azuresynapse.net:1433",
            "pool1.dbo.fact",
            "mssql://ws.sql.azuresynapse.net/pool1/dbo/fact",
            "azure_synapse_dedicated_sql_table",
        ),
        ("mssql://10.1.2.3:1433", "sales.dbo.orders", "mssql://10.1.2.3/MSSQLSERVER/sales/dbo/orders", "mssql_table"),
        (
            "mssql+pymssql://SRV.database.windows.net:1433",
            "Sales.crm.Orders",
            "mssql://srv.database.windows.net/Sales/crm/Orders",
            "azure_sql_table",
        ),
    ],
)
def test_the_spec_mssql_form_maps_like_spark_jdbc(namespace, name, qualified_name, type_name):
    result = MappingEngine.from_path(MAPPINGS_PATH).map(namespace, name)
    assert (result.qualified_name, result.purview_type) == (qualified_name, type_name)


@pytest.mark.parametrize(
    "namespace, name",
    [
        # great_expectations/action.py `_source`: Source(scheme=url.scheme, authority=url.hostname) -> namespace
        # `{scheme}://{hostname}`, name `{schema}.{table}`: the database is not in the dataset's identity
        ("mssql+pyodbc://srv.database.windows.net", "crm.orders"),
        ("postgresql+psycopg2://pg.postgres.database.azure.com", "public.users"),
        # spark40 UnityCatalogHandler.unityCatalogNamespace: `unitycatalog://{authority}` of the server uri
        ("unitycatalog://uc.example.com:8080", "main.sales.orders"),
    ],
)
def test_forms_missing_a_part_of_the_scanners_name_are_found_by_search(rows, namespace, name):
    qualified_name, type_name, status = _row(rows, namespace, name)
    assert status == SEARCH and "{*}" in qualified_name
    assert not MappingEngine.from_path(MAPPINGS_PATH).map(namespace, name).matched


@pytest.mark.parametrize(
    "namespace",
    [
        "unity-catalog",  # openlineage-spark 1.51+ (#4660)
        # naming.md Unity Catalog row: `unitycatalog://{host}:{port}`
        "unitycatalog://adb-1234567890123456.7.azuredatabricks.net:443",
        # dbt-ol processor.py extract_namespace, Adapter.DATABRICKS: f"databricks://{profile['host']}"
        "databricks://adb-1234567890123456.7.azuredatabricks.net",
    ],
)
def test_unity_catalog_by_any_name_is_the_scanned_databricks_table(rows, namespace):
    assert _row(rows, namespace, "main.sales.orders") == (
        "databricks://0a1b2c3d-0000-4000-8000-00000000abcd/catalogs/main/schemas/sales/tables/orders",
        "databricks_table",
        SCANNER,
    )


def test_the_guide_holds_the_generated_table(rows):
    page = GUIDE.read_text(encoding="utf-8")
    assert page == guide_with_table(page, markdown_table(rows)), (
        "regenerate the table: qn-tester coverage --guide docs/guides/producers-and-names.md"
    )


def test_writing_the_guide_replaces_only_the_table(tmp_path):
    page = tmp_path / "guide.md"
    page.write_text(f"# Title\n\n{GUIDE_START}| old |\n{GUIDE_END}\n\nAfter.\n", encoding="utf-8")
    out = io.StringIO()
    assert qn_tester.run_coverage(str(MAPPINGS_PATH), out, guide=str(page)) == 0
    table = markdown_table(coverage_rows(MappingEngine.from_path(MAPPINGS_PATH)))
    assert page.read_text(encoding="utf-8") == f"# Title\n\n{GUIDE_START}{table}{GUIDE_END}\n\nAfter.\n"
    with pytest.raises(ValueError, match="no coverage table markers"):
        guide_with_table("no markers", table)


def test_the_markdown_table_has_one_row_per_form_and_the_counts(rows):
    table = markdown_table(rows)
    assert len([line for line in table.splitlines() if line.startswith("| ") and "`" in line]) == 48
    assert table.endswith("Counts: scanner form 26, search 12, documented other 10 (48 forms).\n")


def test_qn_tester_coverage_prints_the_table_and_exits_0(monkeypatch):
    out = io.StringIO()
    assert qn_tester.run_coverage(str(MAPPINGS_PATH), out) == 0
    assert out.getvalue() == markdown_table(coverage_rows(MappingEngine.from_path(MAPPINGS_PATH)))


def test_qn_tester_coverage_json_and_a_config_that_loses_a_form_exits_1(tmp_path):
    out = io.StringIO()
    assert qn_tester.run_coverage(str(MAPPINGS_PATH), out, as_json=True) == 0
    lines = out.getvalue().splitlines()
    assert len(lines) == 49 and lines[-1] == '{"counts": {"scanner form": 26, "search": 12, "documented other": 10}}'

    text = MAPPINGS_PATH.read_text(encoding="utf-8")
    without_mssql = re.sub(r'"mssql", "mssql\+pyodbc", "mssql\+pymssql"', '"nothing"', text)
    config = tmp_path / "rules.json"
    config.write_text(without_mssql, encoding="utf-8")
    out = io.StringIO()
    assert qn_tester.run_coverage(str(config), out) == 1
    assert out.getvalue().count("not as documented: mssql://") == 3


def test_every_documented_other_store_says_why_when_it_is_not_matched(rows):
    engine = MappingEngine.from_path(MAPPINGS_PATH)
    for row in rows:
        if row.status != OTHER:
            continue
        prefix = tokenize_namespace(row.form.namespace).prefix
        error = engine.map(row.form.namespace, row.form.name).error
        assert error.endswith(f"; {stores.store_note(prefix)}"), (row.form.namespace, error)
        assert stores.STORES[prefix][1] in row.form.purview
