"""Unity Catalog by any name: `unity-catalog`, the naming spec's `unitycatalog://host[:port]`, dbt-databricks'
`databricks://host`, and a `unitycatalog://` TABLE symlink on a storage path (Spark 4's open-source Unity Catalog
connector) all name the `databricks_table` Purview's Unity Catalog scan registers: through the host's metastore
(DATABRICKS_METASTORE_IDS), else a search by name."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olparser.lineage import LineageOptions, build_lineage
from olparser.lineage.datasets import DatasetResolver
from olparser.naming import MappingEngine
from olparser.resolution import unity_catalog
from olparser.resolution.candidates import dataset_candidates
from olparser.resolution.resource_sets import ResourceSetRules
from olparser.runs.model import DatasetFacts, RunSnapshot
from tests.support.rules import MAPPINGS_PATH

WORKSPACE = "adb-5550001112223334.4.azuredatabricks.net"
METASTORE = "0a1b2c3d-0000-4000-8000-00000000abcd"
TABLE_QN = f"databricks://{METASTORE}/catalogs/main/schemas/sales/tables/orders"
INPUT_QN = f"databricks://{METASTORE}/catalogs/main/schemas/sales/tables/customers"
KNOWN = LineageOptions(workspace_metastores=((WORKSPACE, METASTORE),))


def _run(output: DatasetFacts, *inputs: DatasetFacts, run_facets: dict | None = None) -> RunSnapshot:
    return RunSnapshot(
        run_id="r1",
        job_namespace="dbt",
        job_name="jaffle.sales.orders",
        event_type="COMPLETE",
        event_time="2026-05-01T10:00:00Z",
        producer="test",
        inputs=inputs,
        outputs=(output,),
        run_facets=run_facets or {},
    )


@pytest.mark.parametrize(
    "namespace, host",
    [
        ("unity-catalog", None),  # openlineage-spark 1.51+ (#4660): the TABLE symlink's namespace
        # website/docs/spec/naming.md, Unity Catalog row: `unitycatalog://{host}` or `unitycatalog://{host}:{port}`
        ("unitycatalog://uc.example.com:8080", "uc.example.com"),
        ("unitycatalog://UC.Example.com", "uc.example.com"),
        # integration/common/src/openlineage/common/provider/dbt/processor.py extract_namespace:
        # `return f"databricks://{profile['host']}"`
        (f"databricks://{WORKSPACE}", WORKSPACE),
        ("abfss://uc@acct.dfs.core.windows.net", None),
        ("databricks://host/path", None),
    ],
)
def test_unity_namespaces_and_the_host_they_name(namespace, host):
    expected_unity = not namespace.startswith("abfss") and namespace != "databricks://host/path"
    assert unity_catalog.unity_namespace(namespace) == (expected_unity, host)


def test_dbt_databricks_table_is_the_scanned_databricks_table_through_its_hosts_metastore(engine):
    # dbt-ol (processor.py extract_namespace, Adapter.DATABRICKS): namespace databricks://{profile host}, name
    # {database}.{schema}.{identifier} where dbt-databricks' database is the Unity Catalog catalog.
    run = _run(
        DatasetFacts(f"databricks://{WORKSPACE}", "main.sales.orders"),
        DatasetFacts(f"databricks://{WORKSPACE}", "main.sales.customers"),
    )
    plan = build_lineage(run, engine, KNOWN)

    process = plan.entities[-1]["attributes"]
    assert [i["uniqueAttributes"]["qualifiedName"] for i in process["inputs"]] == [INPUT_QN]
    assert [o["uniqueAttributes"]["qualifiedName"] for o in process["outputs"]] == [TABLE_QN]
    assert {d["typeName"] for d in plan.external_datasets} == {"databricks_table"}
    assert plan.unmatched == ()
    assert [
        e["typeName"]
        for e in plan.entities
        if e["typeName"] != process.get("typeName")
        and e["typeName"] in ("openlineage_dataset", "databricks_unity_catalog_table")
    ] == []


def test_unitycatalog_namespace_of_the_spec_is_the_scanned_table_through_its_hosts_metastore(engine):
    # website/docs/spec/naming.md: Unity Catalog | `unitycatalog://{host}:{port}` | `{catalog}.{schema}.{table}`
    options = LineageOptions(workspace_metastores=((WORKSPACE, METASTORE),))
    plan = build_lineage(_run(DatasetFacts(f"unitycatalog://{WORKSPACE}:443", "Main.Sales.Orders")), engine, options)

    assert plan.entities[-1]["attributes"]["outputs"][0]["uniqueAttributes"] == {"qualifiedName": TABLE_QN}


def test_a_host_without_a_metastore_is_the_connectors_table_and_is_found_by_search(engine):
    plan = build_lineage(
        _run(DatasetFacts("unitycatalog://uc.example.com:8080", "main.sales.orders")),
        engine,
        LineageOptions(workspace_metastores=(("other-host", "m-other"),)),
    )

    assert [
        e["attributes"]["qualifiedName"] for e in plan.entities if e["typeName"] == "databricks_unity_catalog_table"
    ] == ["unity-catalog://main.sales.orders"]
    candidates = dataset_candidates(plan.datasets[0], ResourceSetRules.default())
    assert [(c.type_name, c.origin, c.search.keywords if c.search else None) for c in candidates] == [
        ("databricks_table", "Unity Catalog scan (search: metastore unknown)", "orders")
    ]
    assert candidates[0].search.attributes == (("schemaName", "sales"), ("catalogName", "main"))


def test_a_host_namespace_never_borrows_the_runs_metastore_of_another_workspace(engine):
    # the run is on workspace 555...; the table names another host whose metastore is not configured
    environment = {
        "environment-properties": {
            "_producer": "test",
            "environment-properties": {"spark.databricks.clusterUsageTags.clusterOwnerOrgId": "5550001112223334"},
        }
    }
    options = LineageOptions(
        workspace_metastores=(("5550001112223334", METASTORE),), workspace_hosts=(("5550001112223334", WORKSPACE),)
    )
    plan = build_lineage(
        _run(DatasetFacts("databricks://adb-999.9.azuredatabricks.net", "main.sales.orders"), run_facets=environment),
        engine,
        options,
    )
    assert plan.external_datasets == ()
    candidates = dataset_candidates(plan.datasets[0], ResourceSetRules.default())
    assert [c.origin for c in candidates] == ["Unity Catalog scan (search: metastore unknown)"]

    same_host = build_lineage(
        _run(DatasetFacts(f"databricks://{WORKSPACE}", "main.sales.orders"), run_facets=environment), engine, options
    )
    assert [d["attributes"]["qualifiedName"] for d in same_host.external_datasets] == [TABLE_QN]


def test_spark4_unitycatalog_symlink_on_a_storage_path_links_the_table_and_keeps_the_path(engine):
    # spark40 UnityCatalogHandler.getDatasetIdentifier: the location is the identifier, with the symlink
    # unityCatalogName (catalog.schema.table) in unityCatalogNamespace(serverUri) = `unitycatalog://{authority}`, TABLE
    output = DatasetFacts(
        "abfss://ext@acct.dfs.core.windows.net",
        "tables/orders",
        facets={
            "symlinks": {
                "identifiers": [
                    {"namespace": f"unitycatalog://{WORKSPACE}", "name": "main.sales.orders", "type": "TABLE"}
                ]
            }
        },
    )
    plan = build_lineage(_run(output), engine, KNOWN)

    process = plan.entities[-1]["attributes"]
    assert process["outputs"][0]["uniqueAttributes"] == {"qualifiedName": TABLE_QN}
    assert process["datasetLocations"] == ('{"%s":"https://acct.dfs.core.windows.net/ext/tables/orders"}' % TABLE_QN)


def test_the_unity_catalog_symlink_of_openlineage_spark_still_uses_the_runs_metastore(engine):
    output = DatasetFacts(
        "abfss://uc@acct.dfs.core.windows.net",
        "__unitystorage/catalogs/c/tables/t",
        facets={
            "symlinks": {"identifiers": [{"namespace": "unity-catalog", "name": "main.sales.orders", "type": "TABLE"}]}
        },
    )
    environment = {
        "environment-properties": {
            "_producer": "test",
            "environment-properties": {"spark.databricks.clusterUsageTags.clusterOwnerOrgId": "5550001112223334"},
        }
    }
    plan = build_lineage(
        _run(output, run_facets=environment),
        engine,
        LineageOptions(workspace_metastores=(("5550001112223334", METASTORE),)),
    )
    assert plan.entities[-1]["attributes"]["outputs"][0]["uniqueAttributes"] == {"qualifiedName": TABLE_QN}


# --- whatever the form: one identity ------------------------------------------------------------------------------
_IDENT = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,11}", fullmatch=True)
_REAL_ENGINE = MappingEngine.from_path(MAPPINGS_PATH)


@settings(max_examples=60, deadline=None)
@given(
    catalog=_IDENT, schema=_IDENT, table=_IDENT, port=st.sampled_from(["", ":443", ":8080"]), upper_host=st.booleans()
)
def test_every_unity_catalog_form_of_one_table_is_one_identity(catalog, schema, table, port, upper_host):
    host = WORKSPACE.upper() if upper_host else WORKSPACE
    resolver = DatasetResolver(_REAL_ENGINE, (), WORKSPACE, KNOWN, metastore_id=METASTORE)
    name = f"{catalog}.{schema}.{table}"
    keys = {
        resolver.resolve_name(namespace, name).key
        for namespace in ("unity-catalog", f"unitycatalog://{host}{port}", f"databricks://{host}")
    }
    assert keys == {("databricks_table", unity_catalog.table_qualified_name(METASTORE, catalog, schema, table))}


@settings(max_examples=60, deadline=None)
@given(
    database=_IDENT,
    schema=_IDENT,
    table=_IDENT,
    server=st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True).filter(lambda s: "azuresynapse" not in s),
    scheme=st.sampled_from(["mssql", "mssql+pyodbc", "mssql+pymssql", "sqlserver"]),
)
def test_every_sql_server_form_of_one_azure_sql_table_is_one_identity(database, schema, table, server, scheme):
    # Spark JDBC `sqlserver://`, naming.md's / Airflow's / dbt-sqlserver's `mssql://`, SQLAlchemy `mssql+driver://`
    result = _REAL_ENGINE.map(f"{scheme}://{server}.database.windows.net:1433", f"{database}.{schema}.{table}")
    assert (result.qualified_name, result.purview_type) == (
        f"mssql://{server}.database.windows.net/{database}/{schema}/{table}",
        "azure_sql_table",
    )
