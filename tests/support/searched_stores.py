"""The stores found by search (olparser/resolution/store_search.py) as a scan would register them: a plausible type
per store with its source (`serviceType`, which the embedded catalog answers as the asset's `assetType`), registered
through the Atlas typedef API, and each store's naming-spec example with scanned qualifiedNames in more than one
plausible layout (no source confirms Purview's)."""

from __future__ import annotations

from dataclasses import dataclass

import requests


@dataclass(frozen=True)
class SearchedStore:
    """One store: the naming spec's (namespace, name) of a table (the spec's row is cited where used), a plausible
    scanned type and its source, and scanned qualifiedNames of that table in two layouts."""

    store: str
    namespace: str
    name: str
    type_name: str
    service_type: str
    layouts: tuple[str, str]


# naming spec (OpenLineage website/docs/spec/naming.md, commit 8f02abfb): Oracle L34, Teradata L36, DB2 L30,
# Cassandra L25, BigQuery L24, Redshift L37, S3 L51, Microsoft Fabric Warehouse L27
STORES = (
    SearchedStore(
        "Oracle",
        "oracle://ora.example.com:1521",
        "ORCL.SALES.ORDERS",
        "oracle_table",
        "Oracle",
        ("oracle://ora.example.com:1521/ORCL/SALES/ORDERS", "oracle://ora.example.com/orcl.sales.orders"),
    ),
    SearchedStore(
        "Teradata",
        "teradata://td.example.com:1025",
        "sales.orders",
        "teradata_table",
        "Teradata",
        ("teradata://td.example.com/sales/orders", "teradata://td.example.com:1025/SALES.ORDERS"),
    ),
    SearchedStore(
        "Db2",
        "db2://db2.example.com:50000",
        "SALES.APP.ORDERS",
        "db2_table",
        "DB2",
        ("db2://db2.example.com:50000/SALES/APP/ORDERS", "db2://db2.example.com/databases/SALES/schemas/APP/ORDERS"),
    ),
    SearchedStore(
        "Cassandra",
        "cassandra://cass.example.com:9042",
        "shop.orders",
        "cassandra_table",
        "Cassandra",
        ("cassandra://cass.example.com/shop/orders", "cassandra://cass.example.com:9042/keyspaces/shop/tables/orders"),
    ),
    SearchedStore(
        "Google BigQuery",
        "bigquery",
        "analytics-prod.sales.orders",
        "bigquery_table",
        "Google BigQuery",
        (
            "bigquery://analytics-prod/sales/orders",
            "https://bigquery.googleapis.com/projects/analytics-prod/datasets/sales/tables/orders",
        ),
    ),
    SearchedStore(
        "Amazon Redshift",
        "redshift://cluster1.eu-west-1:5439",
        "dev.public.orders",
        "aws_redshift_table",
        "Amazon Redshift",
        (
            "redshift://cluster1.abc123xyz.eu-west-1.redshift.amazonaws.com:5439/dev/public/orders",
            "redshift://cluster1.eu-west-1/dev.public.orders",
        ),
    ),
    SearchedStore(
        "Amazon S3",
        "s3://raw-bucket",
        "landing/Orders.parquet",
        "aws_s3_v2_object",
        "Amazon S3",
        ("s3://raw-bucket/landing/Orders.parquet", "https://raw-bucket.s3.amazonaws.com/landing/Orders.parquet"),
    ),
    SearchedStore(
        "Microsoft Fabric Warehouse",
        "fabric-warehouse://xyz.datawarehouse.fabric.microsoft.com",
        "wh.dbo.orders",
        "fabric_warehouse_table",
        "Microsoft Fabric",
        (
            "mssql://xyz.datawarehouse.fabric.microsoft.com/wh/dbo/orders",
            "https://xyz.datawarehouse.fabric.microsoft.com/wh.dbo.orders",
        ),
    ),
)


def register_store_types(atlas_url: str) -> None:
    """Each store's type (a DataSet of its source), unless the catalog has it (aws_s3_v2_object is built in)."""
    known = {d["name"] for d in requests.get(f"{atlas_url}/types/typedefs", timeout=10).json()["entityDefs"]}
    defs = [
        {"name": s.type_name, "superTypes": ["DataSet"], "serviceType": s.service_type, "attributeDefs": []}
        for s in STORES
        if s.type_name not in known
    ]
    if defs:
        requests.post(f"{atlas_url}/types/typedefs", json={"entityDefs": defs}, timeout=10).raise_for_status()


def register_assets(atlas_url: str, *assets: tuple[str, str]) -> None:
    """Scanned assets (type, qualifiedName), named by their qualifiedName's last segment, through the Atlas API."""
    body = {
        "entities": [
            {
                "typeName": t,
                "guid": f"-{i}",
                "attributes": {"qualifiedName": q, "name": q.rsplit("/", 1)[-1]},
            }
            for i, (t, q) in enumerate(assets, 1)
        ]
    }
    requests.post(f"{atlas_url}/entity/bulk", json=body, timeout=10).raise_for_status()
