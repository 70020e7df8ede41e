"""A dataset's candidates, in order: the rule identities, then the scanned forms of each (resource sets, the Unity
Catalog table, the Fabric lakehouse table), exact where a name can be derived and a search otherwise; how a search's
hits are checked; the JSON the re-link registry keeps."""

from __future__ import annotations

import pytest

from olparser.resolution.candidates import dataset_candidates, onelake_table
from olparser.resolution.model import (
    PARTITIONS,
    SEGMENT,
    TEXT,
    Candidate,
    Identity,
    NamedDataset,
    Search,
    UnityTable,
    candidates_from_json,
    candidates_to_json,
    search_match,
)
from olparser.resolution.resource_sets import ResourceSetRules

RULES = ResourceSetRules.default()
LAKE = "https://acct.dfs.core.windows.net/silver"
PATH = "azure_datalake_gen2_path"
SET = "azure_datalake_gen2_resource_set"
METASTORE = "0a1b2c3d-0000-4000-8000-00000000abcd"
WS_ID = "6f3c1a2b-1111-4222-8333-444455556666"
LH_ID = "9e8d7c6b-aaaa-4bbb-8ccc-ddddeeeeffff"


def path(name: str) -> Identity:
    return Identity(PATH, f"{LAKE}/{name}", "abfss://silver@acct.dfs.core.windows.net", name, True)


def dataset(*identities: Identity, metastore: str | None = None) -> NamedDataset:
    return NamedDataset(identities[0].key, identities, metastore)


def shown(candidates: tuple[Candidate, ...]) -> list[tuple[str, str, bool]]:
    return [(c.type_name, c.qualified_name, c.exact) for c in candidates]


def test_a_delta_output_folder_is_its_path_then_its_resource_set_then_a_partitioned_one():
    assert shown(dataset_candidates(dataset(path("orders")), RULES)) == [
        (PATH, f"{LAKE}/orders", True),
        (SET, f"{LAKE}/orders/{{SparkPartitions}}", True),
        (SET, f"{LAKE}/orders[/k={{k}}]+/{{SparkPartitions}}", False),
    ]


def test_the_partitioned_search_asks_for_the_folder_name_among_resource_sets_and_checks_the_partition_shape():
    search = dataset_candidates(dataset(path("sales")), RULES)[-1].search
    assert search == Search(SET, "sales", ((TEXT, f"{LAKE}/sales"), (PARTITIONS, ""), (TEXT, "/{SparkPartitions}")))
    assert search.query() == {"keywords": "sales", "limit": 100, "filter": {"entityType": SET}}
    assert search.matches(SET, f"{LAKE}/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}")
    assert search.matches(SET, f"{LAKE}/sales/region={{region}}/{{SparkPartitions}}")
    assert not search.matches(SET, f"{LAKE}/sales/{{SparkPartitions}}")  # unpartitioned: the exact candidate's
    assert not search.matches(SET, f"{LAKE}/sales_eu/Year={{Year}}/{{SparkPartitions}}")  # another folder
    assert not search.matches(SET, f"{LAKE}/sales/2024/Year={{Year}}/{{SparkPartitions}}")  # a folder deeper
    assert not search.matches("azure_blob_resource_set", f"{LAKE}/sales/Year={{Year}}/{{SparkPartitions}}")


def test_an_output_named_with_its_partition_folders_gets_the_exact_partitioned_resource_set():
    # Purview's docs: ".../my-partitioned-data/Year={Year}/Month={Month}/Day={Day}/{SparkPartitions}"
    candidates = dataset_candidates(dataset(path("sales/Year=2024/Month=05")), RULES)
    assert shown(candidates) == [
        (PATH, f"{LAKE}/sales/Year=2024/Month=05", True),
        (SET, f"{LAKE}/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}", True),
    ]


def test_a_table_and_its_location_come_in_the_preferred_order_identities_first_then_their_scanned_forms():
    table = Identity("hive_table", "sales.orders@adb-1.2.azuredatabricks.net", "hive://h", "sales.orders", True)
    assert shown(dataset_candidates(dataset(table, path("warehouse/sales.db/orders")), RULES)) == [
        ("hive_table", "sales.orders@adb-1.2.azuredatabricks.net", True),
        (PATH, f"{LAKE}/warehouse/sales.db/orders", True),
        (SET, f"{LAKE}/warehouse/sales.db/orders/{{SparkPartitions}}", True),
        (SET, f"{LAKE}/warehouse/sales.db/orders[/k={{k}}]+/{{SparkPartitions}}", False),
    ]


def test_a_placeholder_without_scanned_forms_has_no_candidates():
    placeholder = Identity("openlineage_dataset", "kafka://broker:9092/orders", "kafka://broker:9092", "orders", False)
    assert dataset_candidates(dataset(placeholder), RULES) == ()


UC = UnityTable("Main", "Sales", "Orders")
OPAQUE = Identity(
    PATH,
    "https://acct.dfs.core.windows.net/uc/__unitystorage/catalogs/1/tables/2",
    "abfss://uc@acct.dfs.core.windows.net",
    "__unitystorage/catalogs/1/tables/2",
    True,
)


def test_a_unity_catalog_table_of_a_known_metastore_is_exactly_its_databricks_table_and_never_its_opaque_folder():
    table = Identity(
        "databricks_table",
        f"databricks://{METASTORE}/catalogs/main/schemas/sales/tables/orders",
        "unity-catalog",
        "Main.Sales.Orders",
        True,
        UC,
    )
    assert shown(dataset_candidates(dataset(table, OPAQUE, metastore=METASTORE), RULES)) == [
        ("databricks_table", f"databricks://{METASTORE}/catalogs/main/schemas/sales/tables/orders", True)
    ]


def test_a_unity_catalog_table_of_an_unknown_metastore_is_searched_by_name_schema_and_catalog():
    table = Identity(
        "databricks_unity_catalog_table",
        "unity-catalog://main.sales.orders",
        "unity-catalog",
        "Main.Sales.Orders",
        False,
        UC,
    )
    (candidate,) = dataset_candidates(dataset(table, OPAQUE), RULES)
    assert candidate.search.query() == {
        "keywords": "orders",
        "limit": 100,
        "filter": {
            "and": [
                {"entityType": "databricks_table"},
                {"attributeName": "schemaName", "operator": "eq", "attributeValue": "sales"},
                {"attributeName": "catalogName", "operator": "eq", "attributeValue": "main"},
            ]
        },
    }
    assert candidate.qualified_name == "databricks://{*}/catalogs/main/schemas/sales/tables/orders"
    assert candidate.search.matches(
        "databricks_table", f"databricks://{METASTORE}/catalogs/main/schemas/sales/tables/orders"
    )
    assert not candidate.search.matches(
        "databricks_table", f"databricks://{METASTORE}/catalogs/main/schemas/sales/tables/orders_v2"
    )
    assert not candidate.search.matches(
        "databricks_view", f"databricks://{METASTORE}/catalogs/main/schemas/sales/tables/orders"
    )


def test_an_older_symlink_without_its_catalog_searches_any_catalog_of_that_schema():
    table = Identity(
        "databricks_unity_catalog_table",
        "unity-catalog://sales.orders",
        "abfss://uc@acct/x",
        "sales.orders",
        False,
        UnityTable(None, "sales", "orders"),
    )
    (candidate,) = dataset_candidates(dataset(table), RULES)
    assert candidate.search.attributes == (("schemaName", "sales"),)
    assert candidate.search.matches(
        "databricks_table", f"databricks://{METASTORE}/catalogs/any/schemas/sales/tables/orders"
    )
    assert not candidate.search.matches(
        "databricks_table", f"databricks://{METASTORE}/catalogs/a/b/schemas/sales/tables/orders"
    )


def onelake(workspace: str, name: str) -> Identity:
    namespace = f"abfss://{workspace}@onelake.dfs.fabric.microsoft.com"
    return Identity("openlineage_dataset", f"{namespace}/{name}", namespace, name, False)


def test_a_onelake_table_named_by_ids_is_exactly_its_fabric_lakehouse_table():
    candidates = dataset_candidates(dataset(onelake(WS_ID, f"{LH_ID}/Tables/orders")), RULES)
    assert shown(candidates) == [
        (
            "fabric_lakehouse_table",
            f"https://app.fabric.microsoft.com/groups/{WS_ID}/lakehouses/{LH_ID}/tables/orders",
            True,
        )
    ]


def test_a_onelake_table_of_a_schema_enabled_lakehouse_escapes_the_slash_as_the_fabric_scan_does():
    candidates = dataset_candidates(dataset(onelake(WS_ID.upper(), f"/{LH_ID}/Tables/dbo/orders")), RULES)
    assert shown(candidates) == [
        (
            "fabric_lakehouse_table",
            f"https://app.fabric.microsoft.com/groups/{WS_ID}/lakehouses/{LH_ID}/tables/dbo%252Forders",
            True,
        )
    ]


def test_a_onelake_table_named_by_names_is_a_search_on_the_table_name_checked_against_the_id_shape():
    (candidate,) = dataset_candidates(dataset(onelake("Sales WS", "Gold.Lakehouse/Tables/orders")), RULES)
    assert candidate.search == Search(
        "fabric_lakehouse_table",
        "orders",
        (
            (TEXT, "https://app.fabric.microsoft.com/groups/"),
            (SEGMENT, ""),
            (TEXT, "/lakehouses/"),
            (SEGMENT, ""),
            (TEXT, "/tables/orders"),
        ),
    )
    assert candidate.search.matches(
        "fabric_lakehouse_table", f"https://app.fabric.microsoft.com/groups/{WS_ID}/lakehouses/{LH_ID}/tables/orders"
    )


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("abfss://ws@onelake.dfs.fabric.microsoft.com", "lh.Lakehouse/Tables/t", ("ws", "lh", "t")),
        ("abfss://ws@onelake.blob.fabric.microsoft.com", "lh/Tables/s/t", ("ws", "lh", "s/t")),
        ("abfss://ws@onelake.dfs.fabric.microsoft.com", "lh.Lakehouse/Files/raw/x.csv", None),
        ("abfss://ws@onelake.dfs.fabric.microsoft.com", "lh/Tables/s/t/extra", None),
        ("abfss://ws@onelake.dfs.fabric.microsoft.com", ".Lakehouse/Tables/t", None),
        ("abfss://silver@acct.dfs.core.windows.net", "lh/Tables/t", None),
    ],
)
def test_onelake_table_paths(namespace, name, expected):
    assert onelake_table(namespace, name) == expected


SEARCH = Search(
    "databricks_table",
    "orders",
    ((TEXT, "databricks://"), (SEGMENT, ""), (TEXT, "/catalogs/main/schemas/sales/tables/orders")),
)
M1 = ("databricks_table", "databricks://m1/catalogs/main/schemas/sales/tables/orders")
M2 = ("databricks_table", "databricks://m2/catalogs/main/schemas/sales/tables/orders")


@pytest.mark.parametrize(
    ("hits", "expected"),
    [
        ([M1], M1),
        ([M1, M1], M1),  # one asset listed twice
        ([M1, ("databricks_table", "databricks://m1/catalogs/main/schemas/sales/tables/orders_old")], M1),
        ([M1, M2], None),  # two metastores: ambiguous, nothing linked
        ([("databricks_view", M1[1])], None),
        ([], None),
    ],
)
def test_a_search_links_only_the_one_hit_of_its_type_and_shape(hits, expected):
    assert search_match(SEARCH, hits) == expected


def test_candidates_survive_their_json_form():
    table = Identity(
        "databricks_unity_catalog_table",
        "unity-catalog://main.sales.orders",
        "unity-catalog",
        "main.sales.orders",
        False,
        UC,
    )
    candidates = dataset_candidates(dataset(path("orders"), table), RULES)
    assert candidates_from_json(candidates_to_json(candidates)) == candidates


@pytest.mark.parametrize(
    "bad",
    [
        {},
        [1],
        [{"typeName": "t"}],
        [{"typeName": "t", "qualifiedName": "q", "search": {"shape": [["regex", ".*"]]}}],
        [{"typeName": "t", "qualifiedName": "q", "search": {"shape": []}}],
    ],
)
def test_unreadable_candidate_json_is_refused(bad):
    with pytest.raises(ValueError):
        candidates_from_json(bad)


# --- SQL tables named without their database (Great Expectations) --------------------------------------------------
# great_expectations/action.py `_source`: namespace `{SQLAlchemy scheme}://{hostname}`, name `{schema}.{table}`


def test_a_sql_table_without_its_database_is_searched_and_any_database_of_that_shape_matches():
    from olparser.resolution.candidates import sql_table_search_candidates

    [candidate] = sql_table_search_candidates("mssql+pyodbc://SRV.database.windows.net", "crm.orders")
    assert (candidate.type_name, candidate.search.keywords, candidate.search.query()["filter"]) == (
        "azure_sql_table",
        "orders",
        {"entityType": "azure_sql_table"},
    )
    assert candidate.search.matches("azure_sql_table", "mssql://srv.database.windows.net/sales/crm/orders")
    assert not candidate.search.matches("azure_sql_table", "mssql://srv.database.windows.net/sales/dbo/orders")
    assert not candidate.search.matches("azure_sql_table", "mssql://other.database.windows.net/sales/crm/orders")
    assert not candidate.search.matches("azure_sql_table", "mssql://srv.database.windows.net/a/b/crm/orders")


@pytest.mark.parametrize(
    "namespace, name",
    [
        ("mssql+pyodbc://10.0.0.1", "crm.orders"),  # not Azure SQL: no confirmed scanned form to search for
        ("mssql+pyodbc://srv.database.windows.net", "orders"),  # no schema
        ("postgresql+psycopg2://pg.postgres.database.azure.com", "a.b.c"),
        ("mysql+pymysql://my.mysql.database.azure.com", "shop.items"),
    ],
)
def test_no_sql_search_without_a_known_scanned_form(namespace, name):
    from olparser.resolution.candidates import sql_table_search_candidates

    assert sql_table_search_candidates(namespace, name) == []
