"""When `[...]` is a name group (SQL-style names) and when it is part of a storage path; the scan is linear."""

from __future__ import annotations

import pytest

from olparser.naming.tokens import sql_name_groups, tokenize_name

SQL_NS = "sqlserver://srv.database.windows.net:1433;database=sales;"


@pytest.mark.parametrize(
    "name, groups",
    [
        ("[dbo].[orders]", ("dbo", "orders")),
        ("[mytest].[tablename.will.mark]", ("mytest", "tablename.will.mark")),
        ("[myname.test][for.you]", ("myname.test", "for.you")),
        ("[crm].orders", ("crm", "orders")),
        ("sales.[crm].[orders]", ("sales", "crm", "orders")),
        ("[only]", ("only",)),
        ("/[dbo].[orders]/", ("dbo", "orders")),
    ],
)
def test_sql_style_names_give_one_group_per_part(name: str, groups: tuple[str, ...]) -> None:
    assert tokenize_name(name).groups == groups


@pytest.mark.parametrize(
    "name, group",
    [
        ("raw/sales[2024]/part", "raw/sales[2024]/part"),
        ("/raw/sales[2024]/part-0001.parquet", "raw/sales[2024]/part-0001.parquet"),
        ("data[1].csv", "data[1].csv"),
        ("[2024]/file.csv", "[2024]/file.csv"),
        ("logs/[a]", "logs/[a]"),
        ("[unclosed", "[unclosed"),
        ("[a]..[b]", "[a]..[b]"),
        ("[a].", "[a]."),
        ("[a]x", "[a]x"),
        ("[[x]]", "[[x]]"),
        ("[" * 4000, "[" * 4000),
    ],
)
def test_other_names_with_brackets_stay_one_group_the_whole_name(name: str, group: str) -> None:
    assert tokenize_name(name).groups == (group,)


def test_a_storage_path_with_brackets_maps_to_its_whole_path(default_engine) -> None:
    result = default_engine.map("abfss://raw@acct.dfs.core.windows.net", "raw/sales[2024]/part")
    assert (result.qualified_name, result.purview_type) == (
        "https://acct.dfs.core.windows.net/raw/raw/sales[2024]/part",
        "azure_datalake_gen2_path",
    )


def test_a_bracketed_schema_with_a_plain_table_maps_both(default_engine) -> None:
    result = default_engine.map(SQL_NS, "[crm].orders")
    assert (result.qualified_name, result.purview_type) == (
        "mssql://srv.database.windows.net/sales/crm/orders",
        "azure_sql_table",
    )


def test_group_parts_split_on_dots_and_slashes() -> None:
    assert tokenize_name("[a.b].[c/d]").parts == (("a", "b"), ("c", "d"))


def test_a_plain_name_is_not_sql() -> None:
    assert sql_name_groups("dbo.orders") is None
