"""Mapping results are cached per engine by (namespace, name, workspace url) after mount resolution: a cached answer
is the one the rules give, whatever the mounts, the calls before it or the cache's size."""

from __future__ import annotations

import pytest

from olparser.naming import MappingEngine, MappingResult, MountPoint
from olparser.naming import engine as engine_module
from tests.support.rules import rule

RULES = [
    rule(
        "adls",
        [("prefix", "=", "abfss")],
        "https://{nameSpcBodyParts[1]}/{nameSpcBodyParts[0]}/{nameGroups[0]}",
        "azure_datalake_gen2_path",
    ),
    rule("hive", [("prefix", "=", "hive")], "{nameGroups[0]}@{AdbWorkspaceUrl}", "hive_table"),
    rule("sql", [("prefix", "=", "sqlserver")], "mssql://{nameSpcBodyParts[0]}/{nameGroups[0]}", "azure_sql_table"),
]


@pytest.fixture
def engine() -> MappingEngine:
    return MappingEngine.from_rules(RULES)


def test_the_same_mount_path_maps_through_each_runs_own_mount_points(engine):
    raw = (MountPoint("/mnt/data", "abfss://raw@lake.dfs.core.windows.net/"),)
    gold = (MountPoint("/mnt/data", "abfss://gold@lake.dfs.core.windows.net/"),)

    assert (
        engine.map("dbfs", "/mnt/data/orders", mounts=raw).qualified_name
        == "https://lake.dfs.core.windows.net/raw/orders"
    )
    assert (
        engine.map("dbfs", "/mnt/data/orders", mounts=gold).qualified_name
        == "https://lake.dfs.core.windows.net/gold/orders"
    )
    assert (
        engine.map("dbfs", "/mnt/data/orders", mounts=raw).qualified_name
        == "https://lake.dfs.core.windows.net/raw/orders"
    )


def test_the_workspace_url_is_part_of_the_answer(engine):
    assert (
        engine.map("hive", "sales.orders", workspace_url="adb-1.2.azuredatabricks.net").qualified_name
        == "sales.orders@adb-1.2.azuredatabricks.net"
    )
    assert (
        engine.map("hive", "sales.orders", workspace_url="adb-3.4.azuredatabricks.net").qualified_name
        == "sales.orders@adb-3.4.azuredatabricks.net"
    )
    assert not engine.map("hive", "sales.orders").matched


def test_a_jdbc_namespace_answers_the_same_the_second_time(engine):
    first = engine.map("jdbc:sqlserver://db:1433", "dbo.orders")
    second = engine.map("jdbc:sqlserver://db:1433", "dbo.orders")

    assert first == second == MappingResult("mssql://db/dbo.orders", "azure_sql_table", "sql")


def test_a_full_cache_is_emptied_and_keeps_answering_right(engine, monkeypatch):
    monkeypatch.setattr(engine_module, "RESULT_CACHE_SIZE", 3)
    names = [f"t{i}" for i in range(7)]

    answers = [engine.map("abfss://raw@lake.dfs.core.windows.net", name).qualified_name for name in names * 2]

    assert answers == [f"https://lake.dfs.core.windows.net/raw/t{i}" for i in range(7)] * 2
    assert len(engine._results) <= 3


def test_unmatched_answers_keep_their_reason(engine):
    first = engine.map("s3://bucket", "key")

    assert engine.map("s3://bucket", "key") == first
    assert first.error.startswith("no mapping rule matched (namespace prefix 's3', 3 rules tried)")


def test_new_rules_make_a_new_engine_with_its_own_answers():
    old = MappingEngine.from_rules(RULES)
    assert old.map("s3://bucket", "key").qualified_name is None

    new = MappingEngine.from_rules([*RULES, rule("s3", [("prefix", "=", "s3")], "s3://{nameGroups[0]}", "aws_s3")])

    assert new.map("s3://bucket", "key").qualified_name == "s3://key"
    assert old.map("s3://bucket", "key").qualified_name is None


def test_long_names_are_mapped_every_time_and_not_kept(engine):
    name = "x" * 600

    assert (
        engine.map("abfss://raw@lake.dfs.core.windows.net", name).qualified_name
        == f"https://lake.dfs.core.windows.net/raw/{name}"
    )
    assert engine._results == {}
