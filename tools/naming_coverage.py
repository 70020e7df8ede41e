"""The naming spec's coverage: each dataset form producers send -> the catalog identity it gets, and why.

`FORMS` lists the forms of the OpenLineage naming spec (`website/docs/spec/naming.md`) and the forms today's
producers really send (openlineage-spark, Airflow providers, dbt-ol, Great Expectations, Flink), one example each,
with where the input comes from and what confirms Purview's form (or why there is none). `coverage_rows` runs every
example through the same naming and resolution code as the builder (`DatasetResolver`, `dataset_candidates`), so
the table says what the connector does, not what it was meant to do:

- "scanner form": a rule (or the Unity Catalog / Fabric naming) gives the type and qualifiedName a Purview scanner
  registers; `purview` cites the source of that form;
- "search": the scanner's qualifiedName cannot be built from the event (a metastore, a database or an id is
  missing), or no source confirms it (Oracle, Teradata, ...: olparser/resolution/store_search.py), so resolution
  searches the catalog by name and type (or source) and links the one hit of the expected shape;
- "documented other": no Purview scanner registers the store: the
  dataset is the connector's readable placeholder `openlineage_dataset`, reported as unmatched, and `purview` says
  why. A rule added for the store (docs/guides/producers-and-names.md) moves it to "scanner form".

`expected` is what each form is documented as; `mismatches` lists the forms whose computed status differs (a test
keeps it empty), and `markdown_table` is the table of docs/guides/producers-and-names.md (a test keeps them equal).
"""

from __future__ import annotations

from dataclasses import dataclass

from olparser.lineage.datasets import DatasetResolver
from olparser.lineage.options import LineageOptions
from olparser.naming import MappingEngine, stores
from olparser.resolution.candidates import dataset_candidates
from olparser.resolution.resource_sets import ResourceSetRules
from olparser.resolution.store_search import (
    BIGQUERY,
    CASSANDRA,
    DB2,
    FABRIC_WAREHOUSE,
    ORACLE,
    REDSHIFT,
    S3,
    TERADATA,
    Store,
)

SCANNER, SEARCH, OTHER = "scanner form", "search", "documented other"
STATUSES = (SCANNER, SEARCH, OTHER)

# The example run: a Databricks workspace whose Unity Catalog metastore is configured (DATABRICKS_METASTORE_IDS)
WORKSPACE = "adb-1234567890123456.7.azuredatabricks.net"
METASTORE = "0a1b2c3d-0000-4000-8000-00000000abcd"

SPEC = "naming spec"  # website/docs/spec/naming.md of the OpenLineage repository, the row of the store
BUILT_IN = "Purview's built-in types and their qualified names (its type definitions, the Data Map API)"
ESTATE = "Purview qualifiedNames of scanned assets (public search answers and connectors)"
SCANNED = "how Purview's scanners name what they find (Microsoft Learn, public search answers)"
LEARN_SOURCES = "Microsoft Learn, Supported data sources and file types (microsoft-purview-connector-overview)"
NOT_SCANNED = f"{stores.NOT_SCANNED} ({LEARN_SOURCES})"


def _searched(store: Store) -> str:
    return f"{stores.SEARCHED}: assetType {' or '.join(repr(a) for a in store.asset_types)} ({store.asset_type_source})"


@dataclass(frozen=True)
class Form:
    """One dataset form: the store, who sends it (and the code or spec line the example comes from), an example
    (namespace, name), what it is documented as, and what confirms Purview's form or why there is none."""

    store: str
    producer: str
    namespace: str
    name: str
    expected: str
    purview: str


@dataclass(frozen=True)
class CoverageRow:
    form: Form
    qualified_name: str
    type_name: str
    status: str


FORMS: tuple[Form, ...] = (
    # --- storage -------------------------------------------------------------------------------------------------
    Form(
        "ADLS Gen2",
        f"{SPEC} (ABFSS); openlineage-spark 1.51+",
        "abfss://raw@acct.dfs.core.windows.net",
        "data/sales",
        SCANNER,
        BUILT_IN,
    ),
    Form(
        "ADLS Gen2",
        "openlineage-spark before 1.51 (abfs://, #4661)",
        "abfs://raw@acct.dfs.core.windows.net",
        "/data/sales",
        SCANNER,
        BUILT_IN,
    ),
    Form(
        "Azure Blob Storage",
        f"{SPEC} (WASBS)",
        "wasbs://files@acct.blob.core.windows.net",
        "k/v.csv",
        SCANNER,
        BUILT_IN,
    ),
    Form(
        "ADLS Gen1",
        "openlineage-spark (Hadoop adl:// paths)",
        "adl://gen1.azuredatalakestore.net",
        "/folder/f.csv",
        SCANNER,
        BUILT_IN,
    ),
    Form(
        "Microsoft Fabric lakehouse",
        "openlineage-spark on Fabric (OneLake ids)",
        "abfss://5f0c3e2a-1111-2222-3333-444455556666@onelake.dfs.fabric.microsoft.com",
        "9a8b7c6d-aaaa-bbbb-cccc-ddddeeeeffff/Tables/orders",
        SCANNER,
        SCANNED,
    ),
    Form(
        "Microsoft Fabric lakehouse",
        "openlineage-spark on Fabric (OneLake friendly names)",
        "abfss://Sales@onelake.dfs.fabric.microsoft.com",
        "Lakehouse1.Lakehouse/Tables/orders",
        SEARCH,
        SCANNED,
    ),
    # --- Databricks ----------------------------------------------------------------------------------------------
    Form(
        "Hive metastore (Databricks)",
        "openlineage-spark, managed table location",
        "dbfs",
        "/user/hive/warehouse/sales.db/orders",
        SCANNER,
        SCANNED,
    ),
    Form(
        "Hive metastore",
        f"{SPEC} (Hive); openlineage-spark TABLE symlink",
        "hive://metastore.example.com:9083",
        "sales.orders",
        SCANNER,
        BUILT_IN,
    ),
    Form(
        "Unity Catalog",
        "openlineage-spark 1.51+ (TABLE symlink, #4660)",
        "unity-catalog",
        "main.sales.orders",
        SCANNER,
        ESTATE,
    ),
    Form(
        "Unity Catalog",
        f"{SPEC} (Unity Catalog), host in DATABRICKS_METASTORE_IDS",
        f"unitycatalog://{WORKSPACE}:443",
        "main.sales.orders",
        SCANNER,
        ESTATE,
    ),
    Form(
        "Unity Catalog",
        "dbt-ol, dbt-databricks (processor.py extract_namespace)",
        f"databricks://{WORKSPACE}",
        "main.sales.orders",
        SCANNER,
        ESTATE,
    ),
    Form(
        "Unity Catalog",
        "Spark 4 open-source Unity Catalog connector (spark40 UnityCatalogHandler), server not "
        "in DATABRICKS_METASTORE_IDS",
        "unitycatalog://uc.example.com:8080",
        "main.sales.orders",
        SEARCH,
        ESTATE,
    ),
    # --- SQL Server family ---------------------------------------------------------------------------------------
    Form(
        "Azure SQL Database",
        "openlineage-spark 1.40+ JDBC (SqlServerJdbcExtractor)",
        "sqlserver://srv.database.windows.net:1433",
        "sales.crm.orders",
        SCANNER,
        BUILT_IN,
    ),
    Form(
        "Azure SQL Database",
        "openlineage-spark 0.x JDBC",
        "sqlserver://srv.database.windows.net:1433;database=sales",
        "crm.orders",
        SCANNER,
        BUILT_IN,
    ),
    Form(
        "Azure SQL Database",
        f"{SPEC} (MSSQL); Airflow MSSQL provider; dbt-sqlserver",
        "mssql://srv.database.windows.net:1433",
        "sales.crm.orders",
        SCANNER,
        BUILT_IN,
    ),
    Form(
        "Azure SQL Database",
        "Great Expectations (SQLAlchemy URL scheme and host, no database)",
        "mssql+pyodbc://srv.database.windows.net",
        "crm.orders",
        SEARCH,
        BUILT_IN,
    ),
    Form(
        "Azure Synapse dedicated pool",
        "openlineage-spark JDBC",
        "sqlserver://ws.sql.azuresynapse.net:1433",
        "pool1.dbo.fact",
        SCANNER,
        BUILT_IN,
    ),
    Form(
        "Azure Synapse dedicated pool",
        f"{SPEC} (MSSQL form); dbt-sqlserver",
        "mssql://ws.sql.azuresynapse.net:1433",
        "pool1.dbo.fact",
        SCANNER,
        BUILT_IN,
    ),
    Form("SQL Server", "openlineage-spark JDBC", "sqlserver://10.1.2.3:1433", "sales.dbo.orders", SCANNER, BUILT_IN),
    Form(
        "SQL Server",
        f"{SPEC} (MSSQL); Airflow MSSQL provider",
        "mssql://10.1.2.3:1433",
        "sales.dbo.orders",
        SCANNER,
        BUILT_IN,
    ),
    # --- other databases -----------------------------------------------------------------------------------------
    Form(
        "Azure Database for PostgreSQL",
        f"{SPEC} (Postgres); openlineage-spark 1.x JDBC; dbt-postgres; Airflow",
        "postgres://pg.postgres.database.azure.com:5432",
        "app.public.users",
        SCANNER,
        ESTATE,
    ),
    Form(
        "Azure Database for PostgreSQL",
        "Great Expectations (postgresql+psycopg2, no database)",
        "postgresql+psycopg2://pg.postgres.database.azure.com",
        "public.users",
        SEARCH,
        ESTATE,
    ),
    Form("PostgreSQL", f"{SPEC} (Postgres)", "postgres://10.0.0.5:5432", "app.sales.orders", SCANNER, BUILT_IN),
    Form(
        "Azure Database for MySQL",
        f"{SPEC} (MySQL)",
        "mysql://my.mysql.database.azure.com:3306",
        "shop.items",
        SCANNER,
        ESTATE,
    ),
    Form("MySQL", f"{SPEC} (MySQL)", "mysql://10.0.0.9:3306", "shop.items", SCANNER, BUILT_IN),
    Form(
        "Azure Data Explorer",
        f"{SPEC} (Azure Data Explorer)",
        "azurekusto://adx.westeurope.kusto.windows.net",
        "telemetry/Events",
        SCANNER,
        ESTATE,
    ),
    Form(
        "Azure Data Explorer",
        "openlineage-spark Kusto connector (database in the namespace)",
        "azurekusto://adx.westeurope.kusto.windows.net/telemetry",
        "Events",
        SCANNER,
        ESTATE,
    ),
    Form(
        "Azure Cosmos DB",
        f"{SPEC} (Azure Cosmos DB)",
        "azurecosmos://acct.documents.azure.com/dbs/shop",
        "colls/orders",
        SCANNER,
        ESTATE,
    ),
    Form(
        "Snowflake",
        f"{SPEC} (Snowflake, orgname-account); dbt-snowflake",
        "snowflake://myorg-myacct",
        "DB.PUBLIC.ORDERS",
        SCANNER,
        ESTATE,
    ),
    Form(
        "Snowflake",
        f"{SPEC} (Snowflake, account locator)",
        "snowflake://xy123.east-us-2.azure",
        "DB.PUBLIC.ORDERS",
        SCANNER,
        ESTATE,
    ),
    # --- scanned by Purview, form unconfirmed: found by search (olparser/resolution/store_search.py) ----------------
    Form("Oracle", f"{SPEC} (Oracle)", "oracle://ora.example.com:1521", "ORCL.SALES.ORDERS", SEARCH, _searched(ORACLE)),
    Form(
        "Teradata", f"{SPEC} (Teradata)", "teradata://td.example.com:1025", "sales.orders", SEARCH, _searched(TERADATA)
    ),
    Form("Db2", f"{SPEC} (DB2)", "db2://db2.example.com:50000", "SALES.APP.ORDERS", SEARCH, _searched(DB2)),
    Form(
        "Cassandra",
        f"{SPEC} (Cassandra)",
        "cassandra://cass.example.com:9042",
        "shop.orders",
        SEARCH,
        _searched(CASSANDRA),
    ),
    Form(
        "Google BigQuery",
        f"{SPEC} (BigQuery); dbt-bigquery",
        "bigquery",
        "project.dataset.orders",
        SEARCH,
        _searched(BIGQUERY),
    ),
    Form(
        "Amazon Redshift",
        f"{SPEC} (Redshift)",
        "redshift://cluster.eu-west-1:5439",
        "dev.public.orders",
        SEARCH,
        _searched(REDSHIFT),
    ),
    Form("Amazon S3", f"{SPEC} (S3)", "s3://bucket", "raw/orders.parquet", SEARCH, _searched(S3)),
    Form(
        "Microsoft Fabric Warehouse",
        f"{SPEC} (Fabric Warehouse); dbt-fabric",
        "fabric-warehouse://xyz.datawarehouse.fabric.microsoft.com",
        "wh.dbo.orders",
        SEARCH,
        _searched(FABRIC_WAREHOUSE),
    ),
    # --- not scanned by Purview ----------------------------------------------------------------------------------
    Form(
        "Kafka",
        f"{SPEC} (Kafka); Flink Kafka source and sink",
        "kafka://broker.example.com:9092",
        "orders",
        OTHER,
        NOT_SCANNED,
    ),
    Form(
        "Azure Event Hubs (Kafka endpoint)",
        "Flink / Spark through the Kafka protocol",
        "kafka://ns.servicebus.windows.net:9093",
        "orders",
        OTHER,
        NOT_SCANNED,
    ),
    Form("Google Cloud Storage", f"{SPEC} (GCS)", "gs://bucket", "raw/orders.parquet", OTHER, NOT_SCANNED),
    Form("HDFS", f"{SPEC} (HDFS)", "hdfs://namenode.example.com:8020", "/data/orders", OTHER, NOT_SCANNED),
    Form("DBFS (not the Hive warehouse)", f"{SPEC} (DBFS)", "dbfs", "/tmp/orders", OTHER, NOT_SCANNED),
    Form("Local file system", f"{SPEC} (Local file system)", "file", "/tmp/orders.csv", OTHER, NOT_SCANNED),
    Form(
        "Trino", f"{SPEC} (Trino); dbt-trino", "trino://trino.example.com:8080", "hive.sales.orders", OTHER, NOT_SCANNED
    ),
    Form(
        "Amazon Athena",
        f"{SPEC} (Athena)",
        "awsathena://athena.eu-west-1.amazonaws.com",
        "awsdatacatalog.db.t",
        OTHER,
        NOT_SCANNED,
    ),
    Form("Google Pub/Sub", f"{SPEC} (PubSub)", "pubsub", "topic:project:orders", OTHER, NOT_SCANNED),
    Form("In memory", f"{SPEC} (In memory)", "inmemory://", "df_1", OTHER, stores.TEMPORARY),
)


def coverage_rows(
    engine: MappingEngine, forms: tuple[Form, ...] = FORMS, rules: ResourceSetRules | None = None
) -> list[CoverageRow]:
    """Each form as the connector names it, in the example run (workspace WORKSPACE, metastore METASTORE)."""
    options = LineageOptions(workspace_metastores=((WORKSPACE, METASTORE),))
    resolver = DatasetResolver(engine, (), WORKSPACE, options, metastore_id=METASTORE)
    rules = rules or ResourceSetRules.default()
    rows: list[CoverageRow] = []
    for form in forms:
        dataset = resolver.resolve_name(form.namespace, form.name)
        if dataset.matched:
            rows.append(CoverageRow(form, dataset.qualified_name, dataset.type_name, SCANNER))
            continue
        candidates = dataset_candidates(dataset.named(resolver.metastore_id), rules)
        if candidates:
            first = candidates[0]
            status = SEARCH if first.search is not None else SCANNER
            type_name = first.type_name or "assetType " + " or ".join(first.search.asset_types if first.search else ())
            rows.append(CoverageRow(form, first.qualified_name, type_name, status))
        else:
            rows.append(CoverageRow(form, dataset.qualified_name, dataset.type_name, OTHER))
    return rows


def mismatches(rows: list[CoverageRow]) -> list[str]:
    """The forms whose computed status is not the documented one."""
    return [
        f"{r.form.namespace} + {r.form.name}: {r.status}, documented as {r.form.expected}"
        for r in rows
        if r.status != r.form.expected
    ]


def counts(rows: list[CoverageRow]) -> dict[str, int]:
    return {status: sum(1 for r in rows if r.status == status) for status in STATUSES}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(rows: list[CoverageRow]) -> str:
    """The table of docs/guides/producers-and-names.md, then the counts."""
    lines = [
        "| store | producer | namespace | name | qualifiedName | type | status | Purview's form |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        f = r.form
        lines.append(
            f"| {_cell(f.store)} | {_cell(f.producer)} | `{f.namespace}` | `{f.name}` | "
            f"`{r.qualified_name}` | `{r.type_name}` | {r.status} | {_cell(f.purview)} |"
        )
    total = counts(rows)
    lines += ["", "Counts: " + ", ".join(f"{status} {total[status]}" for status in STATUSES) + f" ({len(rows)} forms)."]
    return "\n".join(lines) + "\n"


GUIDE_START = "<!-- coverage table: generated by `qn-tester coverage`, do not edit by hand -->\n"
GUIDE_END = "<!-- end of coverage table -->"


def guide_with_table(page: str, table: str) -> str:
    """The guide page with `table` between its markers (ValueError when a marker is missing)."""
    if GUIDE_START not in page or GUIDE_END not in page.split(GUIDE_START, 1)[1]:
        raise ValueError("the page has no coverage table markers")
    before, rest = page.split(GUIDE_START, 1)
    return before + GUIDE_START + table + GUIDE_END + rest.split(GUIDE_END, 1)[1]
