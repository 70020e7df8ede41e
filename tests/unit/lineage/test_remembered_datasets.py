"""Datasets met before are remembered (one lookup instead of building them again): a remembered dataset is exactly
the one the rules and options in use give, whatever was resolved before it, with which engine or which options."""

from __future__ import annotations

from olparser.lineage import LineageOptions
from olparser.lineage import datasets as datasets_module
from olparser.lineage.datasets import DatasetResolver
from olparser.naming import MappingEngine
from olparser.runs.model import DatasetFacts


def _rule(name: str, prefix: str, qualified_name: str, purview_type: str) -> dict:
    return {
        "name": name,
        "parserConditions": [{"op1": "prefix", "compare": "=", "op2": prefix}],
        "qualifiedName": qualified_name,
        "purviewDataType": purview_type,
    }


ADLS = _rule(
    "adls", "abfss", "https://{nameSpcBodyParts[1]}/{nameSpcBodyParts[0]}/{nameGroups[0]}", "azure_datalake_gen2_path"
)
HIVE = _rule("hive", "hive", "{nameGroups[0]}@{AdbWorkspaceUrl}", "hive_table")
ADLS_AS_FOLDER = _rule("folder", "abfss", "abfss://{nameSpcBodyParts[0]}/{nameGroups[0]}", "adls_gen2_folder")
ORDERS = DatasetFacts(
    namespace="abfss://raw@lake.dfs.core.windows.net",
    name="sales/orders",
    facets={"symlinks": {"identifiers": [{"namespace": "hive://metastore", "name": "sales.orders", "type": "TABLE"}]}},
)
LOCATION = "https://lake.dfs.core.windows.net/raw/sales/orders"
TABLE = "sales.orders@adb-1.2.azuredatabricks.net"


def _resolver(engine: MappingEngine, identity: str = "table") -> DatasetResolver:
    return DatasetResolver(engine, (), "adb-1.2.azuredatabricks.net", LineageOptions(dataset_identity=identity))


def test_each_engine_and_each_identity_choice_gets_its_own_dataset_met_in_any_order():
    adls_only, both = MappingEngine.from_rules([ADLS]), MappingEngine.from_rules([ADLS, HIVE])
    folders = MappingEngine.from_rules([ADLS_AS_FOLDER, HIVE])
    resolvers = [_resolver(both), _resolver(adls_only), _resolver(both, "storage"), _resolver(folders, "storage")]

    seen = [
        (d.type_name, d.qualified_name, d.location, d.table, d.rule)
        for d in [resolver.resolve(ORDERS) for resolver in resolvers * 2]
    ]

    by_table = ("hive_table", TABLE, LOCATION, None, "hive")
    placeholder_table = ("azure_datalake_gen2_path", LOCATION, None, "hive://metastore/sales.orders", "adls")
    by_location = ("azure_datalake_gen2_path", LOCATION, None, TABLE, "adls")
    by_folder = ("adls_gen2_folder", "abfss://raw/sales/orders", None, TABLE, "folder")
    assert seen == [by_table, placeholder_table, by_location, by_folder] * 2


def test_a_dataset_met_again_is_the_same_object_with_its_identities_built_once():
    engine = MappingEngine.from_rules([ADLS, HIVE])

    first, again = _resolver(engine).resolve(ORDERS), _resolver(engine).resolve(ORDERS)

    assert again is first and again.named(None).identities is first.named("m").identities
    assert [(i.type_name, i.qualified_name) for i in first.identities] == [
        ("hive_table", TABLE),
        ("azure_datalake_gen2_path", LOCATION),
    ]


def test_remembered_datasets_are_bounded(monkeypatch):
    monkeypatch.setattr(datasets_module, "REMEMBERED_DATASETS", 3)
    engine = MappingEngine.from_rules([ADLS])
    resolver = _resolver(engine)

    names = [resolver.resolve_name("abfss://raw@lake.dfs.core.windows.net", f"t{i}").qualified_name for i in range(7)]

    assert names == [f"https://lake.dfs.core.windows.net/raw/t{i}" for i in range(7)]
    assert list(engine.datasets_met) == [("abfss://raw@lake.dfs.core.windows.net", "t6")]  # emptied at t3 and t6


def test_only_what_can_be_met_again_is_remembered():
    engine = MappingEngine.from_rules([ADLS])
    adls_only = _resolver(engine)
    long_name = "x" * 600  # the engine keeps no answer for it, so its dataset would never be met again

    assert (
        adls_only.resolve_name("abfss://raw@lake.dfs.core.windows.net", long_name).qualified_name
        == f"https://lake.dfs.core.windows.net/raw/{long_name}"
    )
    assert adls_only.resolve(ORDERS).table == "hive://metastore/sales.orders"  # a placeholder table: built each time

    assert list(engine.datasets_met) == [("abfss://raw@lake.dfs.core.windows.net", "sales/orders")]
