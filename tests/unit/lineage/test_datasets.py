"""Dataset identity: the identity that links (table or location), Unity Catalog, placeholders for unmatched datasets."""

from __future__ import annotations

import pytest

from olparser.lineage import LineageOptions, UnmatchedDataset, build_lineage
from olparser.lineage.datasets import placeholder_qualified_name
from olparser.resolution.model import Identity, NamedDataset, UnityTable
from olparser.runs.model import DatasetFacts, RunSnapshot

HIVE_OUTPUT = DatasetFacts(
    namespace="abfss://lake@acct.dfs.core.windows.net",
    name="warehouse/sales.db/orders",
    facets={
        "symlinks": {"identifiers": [{"namespace": "hive://metastore:9083", "name": "sales.orders", "type": "TABLE"}]},
        "schema": {"fields": [{"name": "id", "type": "long"}]},
    },
)
UNITY_OUTPUT = DatasetFacts(
    namespace="abfss://uc@acct.dfs.core.windows.net",
    name="__unitystorage/tables/1234",
    facets={
        "symlinks": {"identifiers": [{"namespace": "unity-catalog", "name": "Main.Sales.Orders", "type": "TABLE"}]},
        "schema": {
            "fields": [
                {"name": "id", "type": "long", "description": "order id"},
                {"name": "total", "type": "decimal(10,2)"},
            ]
        },
    },
)


def _run(*outputs: DatasetFacts, inputs: tuple[DatasetFacts, ...] = ()) -> RunSnapshot:
    return RunSnapshot(
        run_id="r1",
        job_namespace="etl",
        job_name="app.insert",
        event_type="COMPLETE",
        event_time="2024-05-01T10:00:00Z",
        producer="test",
        inputs=inputs,
        outputs=outputs,
    )


def test_table_identity_represents_a_dataset_by_its_symlink_and_records_the_location(engine):
    plan = build_lineage(_run(HIVE_OUTPUT), engine, LineageOptions(dataset_identity="table"))

    assert plan.external_datasets == (
        {
            "typeName": "hive_table",
            "guid": "-1",
            "attributes": {"qualifiedName": "sales.orders@metastore", "name": "sales.orders"},
        },
    )
    process = plan.entities[-1]["attributes"]
    assert process["outputs"][0]["uniqueAttributes"] == {"qualifiedName": "sales.orders@metastore"}
    assert process["datasetLocations"] == (
        '{"sales.orders@metastore":"https://acct.dfs.core.windows.net/lake/warehouse/sales.db/orders"}'
    )


def test_storage_identity_represents_the_same_dataset_by_its_location(engine):
    plan = build_lineage(_run(HIVE_OUTPUT), engine, LineageOptions(dataset_identity="storage"))

    location = "https://acct.dfs.core.windows.net/lake/warehouse/sales.db/orders"
    assert plan.external_datasets == (
        {
            "typeName": "azure_datalake_gen2_path",
            "guid": "-1",
            "attributes": {"qualifiedName": location, "name": "orders"},
        },
    )
    process = plan.entities[-1]["attributes"]
    assert (process["datasetLocations"], process["datasetTables"]) == (
        "",
        '{"https://acct.dfs.core.windows.net/lake/warehouse/sales.db/orders":"sales.orders@metastore"}',
    )


@pytest.mark.parametrize("identity", ["table", "storage"])
def test_a_unity_catalog_managed_table_is_its_table_not_its_opaque_unitystorage_location(engine, identity):
    # Decision (README "What gets written"): `.../__unitystorage/tables/1234` maps to a path, but nobody can read it;
    # the table's own name represents the dataset whatever DATASET_IDENTITY says, and the location stays on the
    # process.
    plan = build_lineage(_run(UNITY_OUTPUT), engine, LineageOptions(dataset_identity=identity))

    location = "https://acct.dfs.core.windows.net/uc/__unitystorage/tables/1234"
    table = "unity-catalog://main.sales.orders"
    assert plan.external_datasets == ()
    assert plan.entities[1] == {
        "typeName": "databricks_unity_catalog_table",
        "guid": "-2",
        "attributes": {
            "qualifiedName": table,
            "name": "orders",
            "openlineageNamespace": "unity-catalog",
            "openlineageName": "Main.Sales.Orders",
            "storageLocation": location,
        },
    }
    process = plan.entities[-1]["attributes"]
    assert (process["datasetLocations"], process["datasetTables"]) == ('{"%s":"%s"}' % (table, location), "")
    assert plan.unmatched == ()


def test_unity_catalog_table_with_an_unmatched_location_gets_its_own_type_with_columns(engine):
    output = DatasetFacts(namespace="dbfs", name="/mnt/unmounted/tables/1234", facets=UNITY_OUTPUT.facets)
    plan = build_lineage(_run(output), engine, LineageOptions())

    table = "unity-catalog://main.sales.orders"
    assert plan.entities[1] == {
        "typeName": "databricks_unity_catalog_table",
        "guid": "-2",
        "attributes": {
            "qualifiedName": table,
            "name": "orders",
            "openlineageNamespace": "unity-catalog",
            "openlineageName": "Main.Sales.Orders",
            "storageLocation": "dbfs:/mnt/unmounted/tables/1234",
        },
    }
    assert [
        (e["attributes"]["qualifiedName"], e["attributes"]["description"])
        for e in plan.entities
        if e["typeName"] == "openlineage_column"
    ] == [(f"{table}#id", "order id"), (f"{table}#total", "")]
    assert plan.unmatched == ()


SYNAPSE_OUTPUT = DatasetFacts(  # as Synapse Spark sends it: the symlink's namespace is a bare path
    namespace="abfss://data@synapselake.dfs.core.windows.net",
    name="reference/dim_region",
    facets={
        "symlinks": {"identifiers": [{"namespace": "/reference", "name": "reference.dim_region", "type": "TABLE"}]}
    },
)


@pytest.mark.parametrize("identity", ["table", "storage"])
def test_a_table_no_rule_maps_is_represented_by_its_scanned_location_whatever_the_identity(engine, identity):
    plan = build_lineage(_run(SYNAPSE_OUTPUT), engine, LineageOptions(dataset_identity=identity))

    location = "https://synapselake.dfs.core.windows.net/data/reference/dim_region"
    assert plan.external_datasets == (
        {
            "typeName": "azure_datalake_gen2_path",
            "guid": "-1",
            "attributes": {"qualifiedName": location, "name": "dim_region"},
        },
    )
    assert plan.entities[-1]["attributes"]["datasetTables"] == (
        '{"https://synapselake.dfs.core.windows.net/data/reference/dim_region":"reference/reference.dim_region"}'
    )
    assert plan.unmatched == ()


def test_a_table_that_maps_beside_an_unmatched_location_is_represented_by_the_table_even_for_storage(engine):
    output = DatasetFacts(
        namespace="hdfs://namenode:8020", name="/warehouse/sales.db/orders", facets=HIVE_OUTPUT.facets
    )
    plan = build_lineage(_run(output), engine, LineageOptions(dataset_identity="storage"))

    assert [e["attributes"]["qualifiedName"] for e in plan.external_datasets] == ["sales.orders@metastore"]
    assert plan.entities[-1]["attributes"]["datasetLocations"] == (
        '{"sales.orders@metastore":"hdfs://namenode:8020/warehouse/sales.db/orders"}'
    )
    assert plan.unmatched == ()


@pytest.mark.parametrize(
    "identity, expected",
    [("table", "hive://other:9083/sales.orders"), ("storage", "hdfs://namenode:8020/warehouse/sales.db/orders")],
)
def test_when_neither_identity_maps_the_placeholder_is_the_preferred_one(engine, identity, expected):
    output = DatasetFacts(
        namespace="hdfs://namenode:8020",
        name="/warehouse/sales.db/orders",
        facets={
            "symlinks": {
                "identifiers": [{"namespace": "hive://other:9083", "name": "sales.orders.extra.part", "type": "TABLE"}]
            }
        },
    )
    expected = expected if identity == "storage" else "hive://other:9083/sales.orders.extra.part"
    plan = build_lineage(_run(output), engine, LineageOptions(dataset_identity=identity))

    assert [
        (e["typeName"], e["attributes"]["qualifiedName"])
        for e in plan.entities
        if e["typeName"] == "openlineage_dataset"
    ] == [("openlineage_dataset", expected)]
    assert len(plan.unmatched) == 1


def test_unmatched_source_is_kept_as_a_placeholder_with_its_columns(engine):
    source = DatasetFacts(
        namespace="sqlserver://db.example.com:1433",
        name="sales.dbo.customers",
        facets={"schema": {"fields": [{"name": "id", "type": "int"}, {"name": "name", "type": "nvarchar"}]}},
    )
    plan = build_lineage(_run(HIVE_OUTPUT, inputs=(source,)), engine, LineageOptions())

    placeholder = "sqlserver://db.example.com:1433/sales.dbo.customers"
    assert plan.entities[1:4] == (
        {
            "typeName": "openlineage_dataset",
            "guid": "-3",
            "attributes": {
                "qualifiedName": placeholder,
                "name": "sales.dbo.customers",
                "openlineageNamespace": "sqlserver://db.example.com:1433",
                "openlineageName": "sales.dbo.customers",
                "storageLocation": "",
            },
        },
        {
            "typeName": "openlineage_column",
            "guid": "-4",
            "attributes": {
                "qualifiedName": f"{placeholder}#id",
                "name": "id",
                "dataType": "int",
                "description": "",
                "position": 0,
            },
            "relationshipAttributes": {
                "dataset": {
                    "guid": "-3",
                    "typeName": "openlineage_dataset",
                    "uniqueAttributes": {"qualifiedName": placeholder},
                    "relationshipType": "openlineage_dataset_columns",
                }
            },
        },
        {
            "typeName": "openlineage_column",
            "guid": "-5",
            "attributes": {
                "qualifiedName": f"{placeholder}#name",
                "name": "name",
                "dataType": "nvarchar",
                "description": "",
                "position": 1,
            },
            "relationshipAttributes": {
                "dataset": {
                    "guid": "-3",
                    "typeName": "openlineage_dataset",
                    "uniqueAttributes": {"qualifiedName": placeholder},
                    "relationshipType": "openlineage_dataset_columns",
                }
            },
        },
    )
    assert plan.unmatched == (
        UnmatchedDataset(
            "sqlserver://db.example.com:1433", "sales.dbo.customers", "no rule for sqlserver://db.example.com:1433"
        ),
    )
    assert [i["uniqueAttributes"]["qualifiedName"] for i in plan.entities[-1]["attributes"]["inputs"]] == [placeholder]


@pytest.mark.parametrize(
    "namespace, name, expected",
    [
        ("dbfs", "/user//hive/warehouse/t/", "dbfs:/user/hive/warehouse/t"),
        ("file", "/tmp/out", "file:/tmp/out"),
        ("S3://Bucket/", "/raw//x/", "s3://bucket/raw/x"),
        ("kafka://broker:9092", "orders", "kafka://broker:9092/orders"),
        ("bigquery", "project.dataset.table", "bigquery/project.dataset.table"),
        ("file:/tmp/cll_test", "default.tbl1", "file:/tmp/cll_test/default.tbl1"),
    ],
)
def test_placeholder_qualified_names_are_normalised(namespace, name, expected):
    assert placeholder_qualified_name(namespace, name) == expected


def test_unknown_dataset_identity_is_refused():
    with pytest.raises(ValueError, match="dataset_identity must be one of table, storage: got 'path'"):
        LineageOptions(dataset_identity="path")


UNITY_ENVIRONMENT = {
    "environment-properties": {
        "_producer": "test",
        "environment-properties": {"spark.databricks.clusterUsageTags.clusterOwnerOrgId": "5550001112223334"},
    }
}


@pytest.mark.parametrize("workspace", ["5550001112223334", "adb-5550001112223334.4.azuredatabricks.net"])
def test_unity_catalog_table_of_a_known_metastore_is_the_table_the_unity_catalog_scan_registers(engine, workspace):
    run = RunSnapshot(
        run_id="r1",
        job_namespace="etl",
        job_name="app.insert",
        event_type="COMPLETE",
        event_time="2024-05-01T10:00:00Z",
        producer="test",
        run_facets=UNITY_ENVIRONMENT,
        outputs=(UNITY_OUTPUT,),
    )
    options = LineageOptions(
        workspace_metastores=((workspace, "0a1b2c3d-0000-4000-8000-00000000abcd"),),
        workspace_hosts=(("5550001112223334", "adb-5550001112223334.4.azuredatabricks.net"),),
    )
    plan = build_lineage(run, engine, options)

    table = "databricks://0a1b2c3d-0000-4000-8000-00000000abcd/catalogs/main/schemas/sales/tables/orders"
    assert plan.external_datasets == (
        {"typeName": "databricks_table", "guid": "-1", "attributes": {"qualifiedName": table, "name": "orders"}},
    )
    process = plan.entities[-1]["attributes"]
    assert process["outputs"] == [
        {"guid": "-1", "typeName": "databricks_table", "uniqueAttributes": {"qualifiedName": table}}
    ]
    assert process["datasetLocations"] == (
        '{"%s":"https://acct.dfs.core.windows.net/uc/__unitystorage/tables/1234"}' % table
    )
    assert plan.unmatched == ()


def test_unity_catalog_table_of_another_workspace_is_the_connectors_unity_catalog_table(engine):
    run = RunSnapshot(
        run_id="r1",
        job_namespace="etl",
        job_name="app.insert",
        event_type="COMPLETE",
        event_time="2024-05-01T10:00:00Z",
        producer="test",
        run_facets=UNITY_ENVIRONMENT,
        outputs=(UNITY_OUTPUT,),
    )
    plan = build_lineage(run, engine, LineageOptions(workspace_metastores=(("999", "other"),)))

    assert plan.external_datasets == ()
    assert [
        e["attributes"]["qualifiedName"] for e in plan.entities if e["typeName"] == "databricks_unity_catalog_table"
    ] == ["unity-catalog://main.sales.orders"]


def _older_unity(location: str, symlink_name: str, **facets) -> DatasetFacts:
    """openlineage-spark before 1.51: the symlink is `schema.table` (or `catalog.schema.table`) with the table's
    parent folder as namespace."""
    parent = location.rsplit("/", 1)[0]
    return DatasetFacts(
        namespace="abfss://uc@acct.dfs.core.windows.net",
        name=location,
        facets={
            "symlinks": {
                "identifiers": [
                    {
                        "namespace": f"abfss://uc@acct.dfs.core.windows.net/{parent}",
                        "name": symlink_name,
                        "type": "TABLE",
                    }
                ]
            },
            **facets,
        },
    )


def test_an_older_unity_catalog_symlink_is_read_as_the_table_not_as_a_path_under_the_parent_folder(engine):
    output = _older_unity(
        "__unitystorage/catalogs/c1/tables/t1",
        "sales.orders",
        catalog={"framework": "delta", "type": "unity", "name": "Main"},
    )
    plan = build_lineage(_run(output), engine, LineageOptions())

    assert [
        e["attributes"]["qualifiedName"] for e in plan.entities if e["typeName"] == "databricks_unity_catalog_table"
    ] == ["unity-catalog://main.sales.orders"]
    assert plan.external_datasets == ()  # not https://acct.dfs.core.windows.net/uc/__unitystorage/.../sales.orders


def test_an_older_unity_catalog_symlink_of_an_external_table_leaves_the_scanned_location_in_front(engine):
    output = _older_unity("ext/orders", "main.sales.orders", storage={"storageLayer": "unity", "fileFormat": "delta"})
    plan = build_lineage(_run(output), engine, LineageOptions())

    location = "https://acct.dfs.core.windows.net/uc/ext/orders"
    assert [d["attributes"]["qualifiedName"] for d in plan.external_datasets] == [location]
    assert plan.entities[-1]["attributes"]["datasetTables"] == '{"%s":"unity-catalog://main.sales.orders"}' % location


def test_an_older_symlink_without_unity_catalog_evidence_still_goes_through_the_rules(engine):
    output = DatasetFacts(
        namespace="abfss://lake@acct.dfs.core.windows.net",
        name="warehouse/sales.db/orders",
        facets={
            "symlinks": {
                "identifiers": [{"namespace": "hive://metastore:9083", "name": "sales.orders", "type": "TABLE"}]
            }
        },
    )
    plan = build_lineage(_run(output), engine, LineageOptions())
    assert [d["typeName"] for d in plan.external_datasets] == ["hive_table"]


def test_the_plan_names_each_dataset_for_resolution_with_both_identities_and_the_metastore(engine):
    run = RunSnapshot(
        run_id="r1",
        job_namespace="etl",
        job_name="app.insert",
        event_type="COMPLETE",
        event_time="2024-05-01T10:00:00Z",
        producer="test",
        run_facets=UNITY_ENVIRONMENT,
        outputs=(UNITY_OUTPUT, HIVE_OUTPUT),
    )
    plan = build_lineage(run, engine, LineageOptions(workspace_metastores=(("5550001112223334", "m-1"),)))

    table = "databricks://m-1/catalogs/main/schemas/sales/tables/orders"
    location = "https://acct.dfs.core.windows.net/uc/__unitystorage/tables/1234"
    hive_location = "https://acct.dfs.core.windows.net/lake/warehouse/sales.db/orders"
    assert plan.datasets == (
        NamedDataset(
            ("databricks_table", table),
            (
                Identity(
                    "databricks_table",
                    table,
                    "unity-catalog",
                    "Main.Sales.Orders",
                    True,
                    UnityTable("Main", "Sales", "Orders"),
                ),
                Identity("azure_datalake_gen2_path", location, UNITY_OUTPUT.namespace, UNITY_OUTPUT.name, True),
            ),
            "m-1",
        ),
        NamedDataset(
            ("hive_table", "sales.orders@metastore"),
            (
                Identity("hive_table", "sales.orders@metastore", "hive://metastore:9083", "sales.orders", True),
                Identity("azure_datalake_gen2_path", hive_location, HIVE_OUTPUT.namespace, HIVE_OUTPUT.name, True),
            ),
            "m-1",
        ),
    )
