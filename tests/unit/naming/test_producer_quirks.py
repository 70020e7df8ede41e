"""Real producer quirks (#10): `jdbc:` namespaces, leading slashes, Microsoft Fabric OneLake."""

from __future__ import annotations

import pytest

from olparser.naming import MappingEngine
from tests.support.rules import rule

WORKSPACE = "adb-123.4.azuredatabricks.net"


@pytest.mark.parametrize(
    "namespace, name, qualified_name, purview_type",
    [
        (
            "jdbc:postgresql://pg.postgres.database.azure.com:5432/app",
            "public.users",
            "postgresql://pg.postgres.database.azure.com/app/public/users",
            "azure_postgresql_table",
        ),
        (
            "jdbc:postgresql://10.0.0.5:5432/app",
            "sales.orders",
            "postgresql://servers/10.0.0.5:5432/dbs/app/schemas/sales/tables/orders",
            "postgresql_table",
        ),
        (
            "jdbc:sqlserver://srv.database.windows.net:1433;databaseName=sales",
            "crm.orders",
            "mssql://srv.database.windows.net/sales/crm/orders",
            "azure_sql_table",
        ),
        (
            "jdbc:sqlserver://srv.database.windows.net:1433;databaseName=sales;encrypt=true",
            "orders",
            "mssql://srv.database.windows.net/sales/dbo/orders",
            "azure_sql_table",
        ),
        (
            "jdbc:mysql://my.mysql.database.azure.com:3306/shop",
            "items",
            "mysql://my.mysql.database.azure.com/shop/items",
            "azure_mysql_table",
        ),
        (
            "jdbc:mysql://10.0.0.9:3306/shop",
            "items",
            "mysql://servers/10.0.0.9:3306/dbs/shop/tables/items",
            "mysql_table",
        ),
        (
            "JDBC:mysql://10.0.0.9:3306/shop",
            "items",
            "mysql://servers/10.0.0.9:3306/dbs/shop/tables/items",
            "mysql_table",
        ),
    ],
)
def test_jdbc_namespaces_map_as_their_plain_forms(
    default_engine, namespace, name, qualified_name, purview_type
) -> None:
    result = default_engine.map(namespace, name)
    assert (result.qualified_name, result.purview_type) == (qualified_name, purview_type)
    plain = default_engine.map(namespace[5:], name)
    assert (plain.qualified_name, plain.purview_type) == (qualified_name, purview_type)


def test_a_rule_written_for_the_raw_jdbc_form_wins() -> None:
    engine = MappingEngine.from_rules(
        [
            rule("plainPostgres", [("prefix", "=", "postgresql")], "plain://{nameSpcBodyParts[0]}/{nameGroups[0]}"),
            rule("jdbcPostgres", [("prefix", "=", "jdbc:postgresql")], "jdbc://{nameSpcBodyParts[0]}/{nameGroups[0]}"),
        ]
    )
    result = engine.map("jdbc:postgresql://h:5432/db", "t")
    assert (result.qualified_name, result.rule_name) == ("jdbc://h/t", "jdbcPostgres")


def test_an_unmatched_jdbc_namespace_says_both_forms_were_tried(default_engine) -> None:
    result = default_engine.map("jdbc:oracle:thin:@//h:1521/svc", "s.t")
    assert result.error == (
        "no mapping rule matched (namespace prefix 'jdbc:oracle:thin:', 55 rules tried); "
        "nor as its plain form without 'jdbc:': "
        "no mapping rule matched (namespace prefix 'oracle:thin:', 55 rules tried)"
    )


def test_jdbc_is_stripped_once_only(default_engine) -> None:
    result = default_engine.map("jdbc:jdbc:mysql://10.0.0.9:3306/shop", "items")
    assert result.matched is False


def test_explain_shows_the_raw_attempt_then_the_plain_form(default_engine) -> None:
    explanation = default_engine.explain("jdbc:mysql://10.0.0.9:3306/shop", "items")
    assert explanation.tokens["prefix"] == "jdbc:mysql"
    assert all(not trace.matched for trace in explanation.rules)
    assert explanation.plain_form is not None
    assert explanation.plain_form.namespace == "mysql://10.0.0.9:3306/shop"
    assert explanation.plain_form.tokens["prefix"] == "mysql"
    assert explanation.result == default_engine.map("jdbc:mysql://10.0.0.9:3306/shop", "items")
    text = explanation.to_text()
    assert (
        "no rule matched the jdbc: namespace as sent; tried again as its plain form 'mysql://10.0.0.9:3306/shop':"
    ) in text
    assert text.splitlines()[-1] == "winner: mySql -> mysql://servers/10.0.0.9:3306/dbs/shop/tables/items (mysql_table)"


def test_explain_of_a_plain_namespace_has_no_plain_form(default_engine) -> None:
    assert default_engine.explain("mysql://10.0.0.9:3306/shop", "items").plain_form is None


@pytest.mark.parametrize(
    "namespace, name",
    [
        ("abfss://raw@acct.dfs.core.windows.net", "data/sales/2024"),
        ("abfss://raw@acct.blob.core.windows.net", "data/sales"),
        ("wasbs://c@acct.blob.core.windows.net", "k/v.csv"),
        ("adl://gen1.azuredatalakestore.net", "folder/f.csv"),
        ("dbfs", "user/hive/warehouse/sales.db/orders"),
        ("dbfs", "mnt/x/abc"),
        ("azurecosmos://acct.documents.azure.com/dbs/shop", "colls/orders"),
        ("azurekusto://adx.westeurope.kusto.windows.net/telemetry", "Events"),
        ("abfss://ws@onelake.dfs.fabric.microsoft.com", "lh.Lakehouse/Tables/sales"),
    ],
)
def test_names_with_or_without_a_leading_slash_map_the_same(default_engine, reference_mounts, namespace, name) -> None:
    without = default_engine.map(namespace, name, mounts=reference_mounts, workspace_url=WORKSPACE)
    with_slash = default_engine.map(namespace, "/" + name, mounts=reference_mounts, workspace_url=WORKSPACE)
    assert (with_slash.qualified_name, with_slash.purview_type) == (without.qualified_name, without.purview_type)


@pytest.mark.parametrize(
    "namespace, name",
    [
        ("abfss://sales@onelake.dfs.fabric.microsoft.com", "lakehouse1.Lakehouse/Tables/orders"),
        ("abfss://sales@onelake.dfs.fabric.microsoft.com", "lakehouse1.Lakehouse/Files/raw/orders.csv"),
        (
            "abfss://5f0c3e2a-1111-2222-3333-444455556666@onelake.dfs.fabric.microsoft.com",
            "9a8b7c6d-aaaa-bbbb-cccc-ddddeeeeffff/Tables/dbo/orders",
        ),
        ("abfss://sales@onelake.blob.fabric.microsoft.com", "lakehouse1.Lakehouse/Files/x"),
        ("wasbs://sales@onelake.blob.fabric.microsoft.com", "lakehouse1.Lakehouse/Files/x"),
        ("abfss://sales@onelake.dfs.fabric.microsoft.com", ""),
    ],
)
def test_fabric_onelake_is_left_to_the_readable_placeholder(default_engine, namespace, name) -> None:
    """Purview does not scan OneLake tables and files, so no default rule maps them (in particular not as ADLS Gen2
    paths of a storage account that does not exist); the pipeline keeps them as `openlineage_dataset` placeholders."""
    result = default_engine.map(namespace, name)
    assert (result.matched, result.error) == (
        False,
        "no mapping rule matched (namespace prefix 'abfss', 55 rules tried)"
        if namespace.startswith("abfss")
        else "no mapping rule matched (namespace prefix 'wasbs', 55 rules tried)",
    )


def test_adls_gen2_in_other_clouds_still_maps(default_engine) -> None:
    result = default_engine.map("abfss://raw@acct.dfs.core.chinacloudapi.cn", "x")
    assert (result.qualified_name, result.purview_type) == (
        "https://acct.dfs.core.chinacloudapi.cn/raw/x",
        "azure_datalake_gen2_path",
    )
