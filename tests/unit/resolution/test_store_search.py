"""Stores Purview scans whose form no source confirms: what each naming-spec dataset is (store, host, port, parts),
the discovery query by the source's assetType and the object's name, and the one hit whose qualifiedName holds the
dataset's parts in order (whole words, the object last, case as the store treats it)."""

from __future__ import annotations

import pytest

from olparser.resolution.candidates import dataset_candidates
from olparser.resolution.model import (
    HOST,
    IPART,
    KEY,
    PART,
    Identity,
    NamedDataset,
    candidates_from_json,
    candidates_to_json,
    search_hits,
    search_match,
)
from olparser.resolution.resource_sets import ResourceSetRules
from olparser.resolution.store_search import store_dataset, store_search_candidates

# The inputs are the naming spec's forms: OpenLineage website/docs/spec/naming.md (commit 8f02abfb), the line of
# each store's row.
EXTRACTED = [
    # L34 Oracle: `oracle://{host}:{port}` + `{serviceName}.{schema}.{table} or {sid}.{schema}.{table}`
    (
        "oracle://Ora.Example.com:1521",
        "ORCL.SALES.ORDERS",
        ("Oracle", "ora.example.com", 1521, (("service", "ORCL"), ("schema", "SALES"), ("table", "ORDERS"))),
    ),
    # L36 Teradata: `teradata://{host}:{port}` + `{database}.{table}`
    (
        "teradata://td.example.com:1025",
        "sales.orders",
        ("Teradata", "td.example.com", 1025, (("database", "sales"), ("table", "orders"))),
    ),
    # L30 DB2: `db2://{host}:{port}` + `{database}.{schema}.{table}`
    (
        "db2://db2.example.com:50000",
        "SALES.APP.ORDERS",
        ("Db2", "db2.example.com", 50000, (("database", "SALES"), ("schema", "APP"), ("table", "ORDERS"))),
    ),
    # L25 Cassandra: `cassandra://{host}:{port}` + `{keyspace}.{table}`
    (
        "cassandra://cass.example.com:9042",
        "shop.orders",
        ("Cassandra", "cass.example.com", 9042, (("keyspace", "shop"), ("table", "orders"))),
    ),
    # L24 BigQuery: `bigquery` + `{project id}.{dataset name}.{table name}`
    (
        "bigquery",
        "analytics-prod.sales.Orders",
        ("Google BigQuery", None, None, (("project", "analytics-prod"), ("dataset", "sales"), ("table", "Orders"))),
    ),
    # L37 Redshift: `redshift://{cluster_identifier}.{region_name}:{port}` + `{database}.{schema}.{table}`
    (
        "redshift://cluster1.eu-west-1:5439",
        "dev.public.orders",
        (
            "Amazon Redshift",
            "cluster1.eu-west-1",
            5439,
            (("database", "dev"), ("schema", "public"), ("table", "orders")),
        ),
    ),
    # L51 S3: `s3://{bucket name}` + `{object key}`
    (
        "s3://raw-bucket",
        "landing/Orders.parquet",
        ("Amazon S3", "raw-bucket", None, (("key", "landing/Orders.parquet"),)),
    ),
    # L27 Microsoft Fabric Warehouse: `fabric-warehouse://{sql analytics endpoint}[:{port}]` +
    # `{database}.{schema}.{table}`
    (
        "fabric-warehouse://xyz.datawarehouse.fabric.microsoft.com:1433",
        "wh.dbo.orders",
        (
            "Microsoft Fabric Warehouse",
            "xyz.datawarehouse.fabric.microsoft.com",
            1433,
            (("database", "wh"), ("schema", "dbo"), ("table", "orders")),
        ),
    ),
]


@pytest.mark.parametrize("namespace, name, expected", EXTRACTED)
def test_each_store_dataset_is_its_store_host_port_and_parts(namespace, name, expected):
    found = store_dataset(namespace, name)
    assert found is not None
    assert (found.store.name, found.host, found.port, found.parts) == expected


@pytest.mark.parametrize(
    "namespace, name, keywords, filter_, shape",
    [
        (
            "oracle://ora.example.com:1521",
            "ORCL.SALES.ORDERS",
            "ORDERS",
            {"assetType": "Oracle"},
            ((HOST, "ora.example.com"), (IPART, "ORCL"), (IPART, "SALES"), (IPART, "ORDERS")),
        ),
        (
            "db2://db2.example.com:50000",
            "SALES.APP.ORDERS",
            "ORDERS",
            {"or": [{"assetType": "Db2"}, {"assetType": "DB2"}]},
            ((HOST, "db2.example.com"), (IPART, "SALES"), (IPART, "APP"), (IPART, "ORDERS")),
        ),
        (
            "bigquery",
            "analytics-prod.sales.Orders",
            "Orders",
            {"assetType": "Google BigQuery"},
            ((PART, "analytics-prod"), (PART, "sales"), (PART, "Orders")),
        ),
        (
            "redshift://cluster1.eu-west-1:5439",
            "dev.public.orders",
            "orders",
            {"assetType": "Amazon Redshift"},
            ((HOST, "cluster1"), (IPART, "eu-west-1"), (IPART, "dev"), (IPART, "public"), (IPART, "orders")),
        ),
        (
            "s3a://raw-bucket",
            "/landing/Orders.parquet",
            "Orders.parquet",
            {"assetType": "Amazon S3"},
            ((HOST, "raw-bucket"), (KEY, "landing/Orders.parquet")),
        ),
        (
            "fabric-warehouse://xyz.datawarehouse.fabric.microsoft.com",
            "wh.dbo.orders",
            "orders",
            {"assetType": "Microsoft Fabric"},
            ((HOST, "xyz.datawarehouse.fabric.microsoft.com"), (PART, "wh"), (PART, "dbo"), (PART, "orders")),
        ),
    ],
)
def test_the_search_asks_for_the_sources_assets_by_the_objects_name(namespace, name, keywords, filter_, shape):
    (candidate,) = store_search_candidates(namespace, name)
    assert candidate.search is not None and not candidate.exact
    assert candidate.search.shape == shape
    assert candidate.search.query() == {"keywords": keywords, "limit": 100, "filter": filter_}


ORACLE = store_search_candidates("oracle://ora.example.com:1521", "ORCL.SALES.ORDERS")[0].search
S3 = store_search_candidates("s3://raw-bucket", "landing/Orders.parquet")[0].search
BIGQUERY = store_search_candidates("bigquery", "analytics-prod.sales.Orders")[0].search
REDSHIFT = store_search_candidates("redshift://cluster1.eu-west-1:5439", "dev.public.orders")[0].search


@pytest.mark.parametrize(
    "search, qualified_name, matches",
    [
        # any layout holding the parts in order, any entity type of the source
        (ORACLE, "oracle://ora.example.com:1521/ORCL/SALES/ORDERS", True),
        (ORACLE, "oracle://ora.example.com/orcl.sales.orders", True),  # Oracle identifiers: any case
        (ORACLE, "ORA.EXAMPLE.COM/services/ORCL/schemas/SALES/tables/ORDERS", True),
        (ORACLE, "oracle://ora.example.com:1521/ORCL/ORDERS/SALES", False),  # out of order
        (ORACLE, "oracle://ora.example.com:1521/PROD/SALES/ORDERS", False),  # another service
        (ORACLE, "oracle://ora2.example.com:1521/ORCL/SALES/ORDERS", False),  # another host, not a word of it
        (ORACLE, "oracle://ora.example.com:1521/ORCL/SALES/ORDERS_ARCHIVE", False),  # a longer name
        (ORACLE, "oracle://ora.example.com:1521/ORCL/SALES/PREORDERS", False),
        (ORACLE, "oracle://ora.example.com:1521/ORCL/SALES/ORDERS/ID", False),  # a column: the object is last
        (ORACLE, "oracle://ora.example.com:1521/ORCL/SALES/ORDERS#ID", False),
        (S3, "s3://raw-bucket/landing/Orders.parquet", True),
        (S3, "https://raw-bucket.s3.amazonaws.com/landing/Orders.parquet", True),
        (S3, "s3://raw-bucket/landing/orders.parquet", False),  # S3 keys are case-sensitive
        (S3, "s3://raw-bucket/old/landing/Orders.parquet", False),  # another object: the key follows the bucket
        (S3, "s3://other/raw-bucket/landing/Orders.parquet", False),  # the bucket is the host, after `//`
        (S3, "s3://raw-bucket/landing/Orders.parquet.bak", False),
        (BIGQUERY, "https://bigquery.googleapis.com/projects/analytics-prod/datasets/sales/tables/Orders", True),
        (BIGQUERY, "bigquery://analytics-prod/sales/orders", False),  # BigQuery table names are case-sensitive
        (REDSHIFT, "redshift://cluster1.abc123xyz.eu-west-1.redshift.amazonaws.com:5439/dev/public/orders", True),
        (REDSHIFT, "redshift://cluster1.eu-west-1/DEV.PUBLIC.ORDERS", True),
        (REDSHIFT, "redshift://cluster1.abc123xyz.us-east-1.redshift.amazonaws.com:5439/dev/public/orders", False),
    ],
)
def test_a_hit_counts_when_its_qualified_name_holds_the_parts_in_order(search, qualified_name, matches):
    assert search.matches("any_scanned_type", qualified_name) is matches


def test_one_hit_of_that_shape_links_two_are_ambiguous_and_none_is_none():
    one = ("oracle_table", "oracle://ora.example.com:1521/ORCL/SALES/ORDERS")
    other = ("oracle_table", "oracle://ora.example.com/ORCL.SALES.ORDERS")
    archive = ("oracle_table", "oracle://ora.example.com:1521/ORCL/SALES/ORDERS_ARCHIVE")
    assert search_match(ORACLE, [archive, one]) == one
    assert search_match(ORACLE, [one, archive, other]) is None
    assert search_hits(ORACLE, [one, archive, other, one]) == [one, other]
    assert search_match(ORACLE, [archive]) is None


@pytest.mark.parametrize(
    "namespace, name",
    [
        ("oracle://ora.example.com:1521", "SALES.ORDERS"),  # no service: not the spec's form
        ("teradata://td.example.com:1025", "db.sales.orders"),
        ("bigquery", "sales.orders"),
        ("bigquery://analytics-prod", "analytics-prod.sales.orders"),
        ("s3://raw-bucket", "landing/"),  # a folder, not an object
        ("oracle://ora.example.com:1521/extra", "ORCL.SALES.ORDERS"),
        ("kafka://broker:9092", "orders"),  # not a store found by search
    ],
)
def test_a_name_not_in_the_stores_spec_form_gets_no_search(namespace, name):
    assert store_search_candidates(namespace, name) == []


def test_a_placeholder_of_such_a_store_has_the_search_as_its_candidate_and_it_survives_the_registry():
    placeholder = Identity(
        "openlineage_dataset",
        "db2://db2.example.com:50000/SALES.APP.ORDERS",
        "db2://db2.example.com:50000",
        "SALES.APP.ORDERS",
        False,
    )
    candidates = dataset_candidates(NamedDataset(placeholder.key, (placeholder,)), ResourceSetRules.default())
    assert [(c.type_name, c.qualified_name, c.origin) for c in candidates] == [
        (
            "",
            "…//db2.example.com…SALES…APP…ORDERS",
            "Db2 scan (search: assetType Db2 or DB2, the dataset's parts in order)",
        )
    ]
    assert candidates_from_json(candidates_to_json(candidates)) == candidates
    assert candidates_to_json(candidates)[0]["search"]["assetTypes"] == ["Db2", "DB2"]
