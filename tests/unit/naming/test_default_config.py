"""The default config on the forms modern (1.x) and older (0.x) OpenLineage sends, per the naming table."""

from __future__ import annotations

import pytest

WORKSPACE = "adb-123.4.azuredatabricks.net"

CASES = [
    (
        'abfss://raw@acct.dfs.core.windows.net',
        'data/sales/2024',
        'https://acct.dfs.core.windows.net/raw/data/sales/2024',
        'azure_datalake_gen2_path',
    ),
    (
        'abfss://raw@acct.dfs.core.windows.net',
        '/data/sales/',
        'https://acct.dfs.core.windows.net/raw/data/sales',
        'azure_datalake_gen2_path',
    ),
    (
        'abfss://raw@acct.dfs.core.windows.net',
        '',
        'https://acct.dfs.core.windows.net/raw',
        'azure_datalake_gen2_filesystem',
    ),
    (
        'abfss://raw@acct.dfs.core.windows.net',
        '/',
        'https://acct.dfs.core.windows.net/raw',
        'azure_datalake_gen2_filesystem',
    ),
    (
        'abfs://raw@acct.dfs.core.windows.net',
        'x',
        'https://acct.dfs.core.windows.net/raw/x',
        'azure_datalake_gen2_path',
    ),
    (
        'abfss://raw@acct.blob.core.windows.net',
        'x/y',
        'https://acct.dfs.core.windows.net/raw/x/y',
        'azure_datalake_gen2_path',
    ),
    (
        'abfss://raw@acct.blob.core.windows.net',
        '',
        'https://acct.dfs.core.windows.net/raw',
        'azure_datalake_gen2_filesystem',
    ),
    (
        'abfss://Raw@Acct.DFS.core.windows.net',
        'a//b',
        'https://acct.dfs.core.windows.net/Raw/a/b',
        'azure_datalake_gen2_path',
    ),
    (
        'wasbs://c@acct.blob.core.windows.net',
        'k/v.csv',
        'https://acct.blob.core.windows.net/c/k/v.csv',
        'azure_blob_path',
    ),
    ('wasb://c@acct.blob.core.windows.net', '/k', 'https://acct.blob.core.windows.net/c/k', 'azure_blob_path'),
    ('wasbs://c@acct.blob.core.windows.net', '', 'https://acct.blob.core.windows.net/c', 'azure_blob_container'),
    (
        'adl://gen1.azuredatalakestore.net',
        '/folder/f.csv',
        'adl://gen1.azuredatalakestore.net/folder/f.csv',
        'azure_datalake_gen1_path',
    ),
    (
        'adl://gen1.azuredatalakestore.net',
        'folder',
        'adl://gen1.azuredatalakestore.net/folder',
        'azure_datalake_gen1_path',
    ),
    (
        'sqlserver://srv.database.windows.net:1433;database=sales;',
        'orders',
        'mssql://srv.database.windows.net/sales/dbo/orders',
        'azure_sql_table',
    ),
    (
        'sqlserver://srv.database.windows.net:1433;database=sales;',
        '[crm].[orders]',
        'mssql://srv.database.windows.net/sales/crm/orders',
        'azure_sql_table',
    ),
    (
        'sqlserver://srv.database.windows.net:1433;database=sales;',
        'crm.orders',
        'mssql://srv.database.windows.net/sales/crm/orders',
        'azure_sql_table',
    ),
    (
        'sqlserver://srv.database.windows.net:1433',
        'sales.crm.orders',
        'mssql://srv.database.windows.net/sales/crm/orders',
        'azure_sql_table',
    ),
    (
        'sqlserver://srv.database.windows.net:1433',
        'sales.orders',
        'mssql://srv.database.windows.net/sales/dbo/orders',
        'azure_sql_table',
    ),
    (
        'sqlserver://SRV.Database.Windows.net:1433',
        'sales.crm.orders',
        'mssql://srv.database.windows.net/sales/crm/orders',
        'azure_sql_table',
    ),
    (
        'sqlserver://ws.sql.azuresynapse.net:1433',
        'pool1.dbo.fact',
        'mssql://ws.sql.azuresynapse.net/pool1/dbo/fact',
        'azure_synapse_dedicated_sql_table',
    ),
    (
        'sqlserver://ws.sql.azuresynapse.net:1433',
        'pool1.fact',
        'mssql://ws.sql.azuresynapse.net/pool1/dbo/fact',
        'azure_synapse_dedicated_sql_table',
    ),
    ('sqlserver://ws.sql.azuresynapse.net:1433', 'COMPLEX', None, None),
    ('sqlserver://ws.sql.azuresynapse.net:1433;database=pool1', 'COMPLEX', None, None),
    ('sqlserver://10.1.2.3:1433', 'db.s.t', 'mssql://10.1.2.3/MSSQLSERVER/db/s/t', 'mssql_table'),
    ('sqlserver://10.1.2.3:1433/SQLEXPRESS', 'db.s.t', 'mssql://10.1.2.3/SQLEXPRESS/db/s/t', 'mssql_table'),
    ('sqlserver://onprem;database=db', 't', 'mssql://onprem/MSSQLSERVER/db/dbo/t', 'mssql_table'),
    (
        'postgres://pg.postgres.database.azure.com:5432',
        'app.public.users',
        'postgresql://pg.postgres.database.azure.com/app/public/users',
        'azure_postgresql_table',
    ),
    (
        'postgres://10.0.0.5:5432',
        'app.sales.orders',
        'postgresql://servers/10.0.0.5:5432/dbs/app/schemas/sales/tables/orders',
        'postgresql_table',
    ),
    (
        'postgresql://pg.postgres.database.azure.com:5432/app?sslmode=require',
        'users',
        'postgresql://pg.postgres.database.azure.com/app/public/users',
        'azure_postgresql_table',
    ),
    (
        'postgresql://pg.postgres.database.azure.com/app',
        's.users',
        'postgresql://pg.postgres.database.azure.com/app/s/users',
        'azure_postgresql_table',
    ),
    (
        'postgresql://pghost/app',
        'users',
        'postgresql://servers/pghost:5432/dbs/app/schemas/public/tables/users',
        'postgresql_table',
    ),
    (
        'mysql://my.mysql.database.azure.com:3306',
        'shop.items',
        'mysql://my.mysql.database.azure.com/shop/items',
        'azure_mysql_table',
    ),
    (
        'mysql://my.mysql.database.azure.com:3306/shop',
        'items',
        'mysql://my.mysql.database.azure.com/shop/items',
        'azure_mysql_table',
    ),
    ('mysql://10.0.0.9:3306', 'shop.items', 'mysql://servers/10.0.0.9:3306/dbs/shop/tables/items', 'mysql_table'),
    ('mysql://10.0.0.9:3306/shop', 'items', 'mysql://servers/10.0.0.9:3306/dbs/shop/tables/items', 'mysql_table'),
    (
        'azurekusto://adx.westeurope.kusto.windows.net/telemetry',
        'Events',
        'https://adx.westeurope.kusto.windows.net/telemetry/Events',
        'azure_data_explorer_table',
    ),
    (
        'azurekusto://adx.westeurope.kusto.windows.net',
        'telemetry.Events',
        'https://adx.westeurope.kusto.windows.net/telemetry/Events',
        'azure_data_explorer_table',
    ),
    ('azurekusto://adx.westeurope.kusto.windows.net/telemetry', 'COMPLEX', None, None),
    (
        'azurecosmos://acct.documents.azure.com/dbs/shop',
        '/colls/orders',
        'https://acct.documents.azure.com/dbs/shop/colls/orders',
        'azure_cosmosdb_sqlapi_collection',
    ),
    (
        'azurecosmos://acct.documents.azure.com/dbs/shop',
        'orders',
        'https://acct.documents.azure.com/dbs/shop/colls/orders',
        'azure_cosmosdb_sqlapi_collection',
    ),
    (
        'snowflake://myorg-myacct',
        'DB.PUBLIC.ORDERS',
        'snowflake://myorg-myacct.snowflakecomputing.com/databases/DB/schemas/PUBLIC/tables/ORDERS',
        'snowflake_table',
    ),
    (
        'snowflake://xy123.east-us-2.azure.snowflakecomputing.com',
        'DB.PUBLIC.ORDERS',
        'snowflake://xy123.east-us-2.azure.snowflakecomputing.com/databases/DB/schemas/PUBLIC/tables/ORDERS',
        'snowflake_table',
    ),
    ('dbfs', 'user/hive/warehouse/sales.db/orders', 'sales.orders@adb-123.4.azuredatabricks.net', 'hive_table'),
    ('dbfs', 'dbfs:/user/hive/warehouse/orders', 'default.orders@adb-123.4.azuredatabricks.net', 'hive_table'),
    ('file', '/dbfs/user/hive/warehouse/orders', 'default.orders@adb-123.4.azuredatabricks.net', 'hive_table'),
    ('dbfs:/user/hive/warehouse', 'sales.orders', 'sales.orders@adb-123.4.azuredatabricks.net', 'hive_table'),
    ('hive://metastore.example.com:9083', 'sales.orders', 'sales.orders@metastore.example.com', 'hive_table'),
    ('unity-catalog', 'main.sales.orders', None, None),
    ('kafka://b:9092', 'topic', None, None),
    ('s3://bucket', 'key', None, None),
    ('bigquery', 'p.d.t', None, None),
    ('file', '/tmp/x', None, None),
]


@pytest.mark.parametrize(
    "namespace, name, qualified_name, purview_type", CASES, ids=[f"{ns} {n}" for ns, n, _q, _t in CASES]
)
def test_default_config(default_engine, namespace, name, qualified_name, purview_type):
    result = default_engine.map(namespace, name, workspace_url=WORKSPACE)
    assert (result.qualified_name, result.purview_type) == (qualified_name, purview_type)
    assert result.matched is (qualified_name is not None)


def test_hive_tables_need_the_workspace_url(default_engine):
    assert default_engine.map("dbfs", "/user/hive/warehouse/orders").matched is False


def test_unity_catalog_identifiers_are_left_unmatched_for_the_pipeline(default_engine):
    assert default_engine.map("unity-catalog", "main.sales.orders", workspace_url=WORKSPACE).matched is False
