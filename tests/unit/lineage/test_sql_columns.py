"""Column lineage derived from a run's `sql` job facet (when an output has no `columnLineage`), through the real
builder and the real SQL parser (openlineage-sql in its worker process): hand-written Spark SQL (CTAS, INSERT ...
SELECT with joins and aggregates, MERGE, CTEs, stars), the real `sql` facets of ../shared/openlineage, and what
happens when a statement cannot be parsed, is too long or names tables the run does not have."""

from __future__ import annotations

import json
import logging
from typing import Iterator

import pytest

from olparser.adapters.sql.process_parser import SqlParser
from olparser.lineage import LineageOptions, build_lineage
from olparser.lineage.sql_columns import sql_dialect
from olparser.runs.merge import merge_events
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.sql import ParsedSql
from tests.support.fake_engine import FakeEngine
from tests.support.shared_events import load_event, load_sequence

SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
HIVE = "hive://metastore:9083"
LAKE = "abfss://lake@acct.dfs.core.windows.net"
AMBIGUOUS = [
    {
        "description": "ambiguous: the statement does not say which table this column comes from; each "
        "candidate has an edge",
        "type": "DIRECT",
    }
]


@pytest.fixture(scope="module")
def parser() -> Iterator[SqlParser]:
    parser = SqlParser()
    yield parser
    parser.close()


def table(name: str, *columns: str) -> DatasetFacts:
    """A Hive table stored in the lake: its location is the dataset, the table its symlink (as Spark sends it)."""
    facets: dict = {"symlinks": {"identifiers": [{"namespace": HIVE, "name": name, "type": "TABLE"}]}}
    if columns:
        facets["schema"] = {"fields": [{"name": c, "type": "string"} for c in columns]}
    return DatasetFacts(namespace=LAKE, name="warehouse/" + name.replace(".", ".db/"), facets=facets)


def run_of(sql: str, inputs: list[DatasetFacts], outputs: list[DatasetFacts], **sql_facet: str) -> RunSnapshot:
    return RunSnapshot(
        run_id="r1",
        job_namespace="etl",
        job_name="app.job",
        event_type="COMPLETE",
        event_time="2024-05-01T10:00:00Z",
        producer=SPARK,
        job_facets={"sql": {"query": sql, **sql_facet}},
        inputs=tuple(inputs),
        outputs=tuple(outputs),
    )


def process(run: RunSnapshot, parse_sql) -> dict:
    return build_lineage(run, FakeEngine(), LineageOptions(), parse_sql=parse_sql).entities[-1]["attributes"]


def mapping(*pairs: tuple[str, str, list[tuple[str, str]]]) -> list[dict]:
    return [
        {
            "DatasetMapping": {"Source": f"{source}@metastore", "Sink": f"{sink}@metastore"},
            "ColumnMapping": [{"Source": a, "Sink": b} for a, b in columns],
        }
        for source, sink, columns in pairs
    ]


def test_ctas_with_a_join_and_an_aggregate(parser):
    run = run_of(
        "CREATE TABLE sales.daily AS SELECT o.order_date, sum(o.amount) AS total, c.region "
        "FROM sales.orders o JOIN sales.customers c ON o.customer_id = c.id GROUP BY o.order_date, c.region",
        [table("sales.orders", "order_date", "amount", "customer_id"), table("sales.customers", "id", "region")],
        [table("sales.daily", "order_date", "total", "region")],
    )
    attributes = process(run, parser)
    assert json.loads(attributes["columnMapping"]) == mapping(
        ("sales.customers", "sales.daily", [("region", "region")]),
        ("sales.orders", "sales.daily", [("amount", "total"), ("order_date", "order_date")]),
    )
    assert attributes["columnLineageSource"] == "sql"


def test_insert_select_with_joins_and_aggregates_puts_an_unqualified_column_where_the_schemas_say(parser):
    # openlineage-sql gives the unqualified `region` to the first table; only customers has it
    run = run_of(
        "INSERT INTO sales.summary SELECT region, count(*) AS orders, sum(amount) AS revenue "
        "FROM sales.orders JOIN sales.customers ON orders.customer_id = customers.id GROUP BY region",
        [table("sales.orders", "order_id", "customer_id", "amount"), table("sales.customers", "id", "region")],
        [table("sales.summary", "region", "orders", "revenue")],
    )
    assert json.loads(process(run, parser)["columnMapping"]) == mapping(
        ("sales.customers", "sales.summary", [("region", "region")]),
        ("sales.orders", "sales.summary", [("amount", "revenue")]),
    )


def test_a_column_two_tables_could_give_has_an_edge_from_each_marked_ambiguous(parser):
    run = run_of(
        "INSERT INTO sales.t SELECT id FROM sales.a JOIN sales.b ON a.x = b.x JOIN sales.c ON c.x = b.x",
        [table("sales.a", "x"), table("sales.b", "x", "id"), table("sales.c", "x", "id")],
        [table("sales.t")],
    )
    attributes = process(run, parser)
    assert json.loads(attributes["columnMapping"]) == mapping(
        ("sales.b", "sales.t", [("id", "id")]), ("sales.c", "sales.t", [("id", "id")])
    )
    detail = json.loads(attributes["columnLineageDetail"])["fields"]
    assert [(f["field"], [(i["qualifiedName"], i["transformations"]) for i in f["inputFields"]]) for f in detail] == [
        ("id", [("sales.b@metastore", AMBIGUOUS), ("sales.c@metastore", AMBIGUOUS)])
    ]


def test_merge_with_update_set_star_and_insert_star_copies_the_source_columns_the_target_has(parser):
    run = run_of(
        "MERGE INTO sales.customers t USING sales.customer_updates s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
        [table("sales.customer_updates", "id", "region", "name", "loaded_at")],
        [table("sales.customers", "id", "region", "name", "created")],
    )
    assert json.loads(process(run, parser)["columnMapping"]) == mapping(
        ("sales.customer_updates", "sales.customers", [("id", "id"), ("name", "name"), ("region", "region")])
    )


def test_merge_with_explicit_assignments_gives_no_columns_openlineage_sql_does_not_analyse_them(parser):
    run = run_of(
        "MERGE INTO sales.customers t USING (SELECT * FROM sales.customer_updates WHERE day = 1) s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.region = s.region",
        [table("sales.customer_updates", "id", "region")],
        [table("sales.customers", "id", "region")],
    )
    attributes = process(run, parser)
    assert (attributes["columnMapping"], attributes["columnLineageSource"]) == ("[]", "")


def test_a_cte_over_a_star_reaches_its_table(parser):
    run = run_of(
        "WITH recent AS (SELECT * FROM sales.orders WHERE order_date > '2024-01-01') "
        "INSERT OVERWRITE TABLE sales.recent_totals "
        "SELECT customer_id, sum(amount) AS total FROM recent GROUP BY customer_id",
        [table("sales.orders")],
        [table("sales.recent_totals")],
    )
    assert json.loads(process(run, parser)["columnMapping"]) == mapping(
        ("sales.orders", "sales.recent_totals", [("amount", "total"), ("customer_id", "customer_id")])
    )


def test_chained_ctes_with_a_join(parser):
    run = run_of(
        "WITH o AS (SELECT customer_id, amount FROM sales.orders), "
        "j AS (SELECT c.region, o.amount FROM o JOIN sales.customers c ON o.customer_id = c.id) "
        "INSERT INTO sales.by_region SELECT region, sum(amount) AS total FROM j GROUP BY region",
        [table("sales.orders", "customer_id", "amount"), table("sales.customers", "id", "region")],
        [table("sales.by_region")],
    )
    assert json.loads(process(run, parser)["columnMapping"]) == mapping(
        ("sales.customers", "sales.by_region", [("region", "region")]),
        ("sales.orders", "sales.by_region", [("amount", "total")]),
    )


def test_select_star_without_schemas_is_the_virtual_column_star(parser):
    run = run_of("INSERT INTO sales.copy SELECT * FROM sales.orders", [table("sales.orders")], [table("sales.copy")])
    assert json.loads(process(run, parser)["columnMapping"]) == mapping(("sales.orders", "sales.copy", [("*", "*")]))


def test_tables_the_run_does_not_have_are_left_out_never_invented(parser):
    run = run_of(
        "INSERT INTO sales.t SELECT o.amount, x.y FROM sales.orders o JOIN staging.other x ON o.id = x.id",
        [table("sales.orders", "id", "amount")],
        [table("sales.t")],
    )
    attributes = process(run, parser)
    assert json.loads(attributes["columnMapping"]) == mapping(("sales.orders", "sales.t", [("amount", "amount")]))
    assert [i["uniqueAttributes"]["qualifiedName"] for i in attributes["inputs"]] == ["sales.orders@metastore"]


def test_columns_the_output_schema_lacks_are_left_out(parser):
    # INSERT with a column list: openlineage-sql names the outputs by the select list (x, y), not (a, b)
    run = run_of(
        "INSERT INTO sales.t (a, b) SELECT x, y FROM sales.s",
        [table("sales.s", "x", "y")],
        [table("sales.t", "a", "b", "y")],
    )
    assert json.loads(process(run, parser)["columnMapping"]) == mapping(("sales.s", "sales.t", [("y", "y")]))


def test_names_match_by_dataset_name_when_there_is_no_symlink(parser):
    jdbc = "sqlserver://db.example.com:1433"
    run = run_of(
        "INSERT INTO dbo.target SELECT id FROM dbo.source",
        [DatasetFacts(namespace=jdbc, name="sales.dbo.source")],
        [DatasetFacts(namespace=jdbc, name="sales.dbo.target")],
    )
    detail = json.loads(process(run, parser)["columnLineageDetail"])
    assert [
        (f["field"], [(i["namespace"], i["name"], i["field"]) for i in f["inputFields"]]) for f in detail["fields"]
    ] == [("id", [(jdbc, "sales.dbo.source", "id")])]


def test_a_statement_that_cannot_be_parsed_writes_the_table_lineage_without_columns(parser, caplog):
    run = run_of("INSERT INTO sales.t SELEC x FROM sales.s", [table("sales.s", "x")], [table("sales.t", "x")])
    with caplog.at_level(logging.WARNING, logger="olparser.adapters.sql.process_parser"):
        plan = build_lineage(run, FakeEngine(), LineageOptions(), parse_sql=parser)
    attributes = plan.entities[-1]["attributes"]
    assert (
        [i["uniqueAttributes"]["qualifiedName"] for i in attributes["inputs"]],
        attributes["columnMapping"],
        attributes["columnLineageSource"],
    ) == (["sales.s@metastore"], "[]", "")
    assert plan.notes == (
        "column lineage from SQL: the spark SQL parser could not read the statement (line 1, column 21)",
    )
    assert len(caplog.records) == 1


def test_an_oversize_query_writes_the_table_lineage_without_columns():
    parser = SqlParser(max_chars=65_536)
    query = "INSERT INTO sales.t SELECT " + " + ".join(["x"] * 30_000) + " AS x FROM sales.s"
    plan = build_lineage(
        run_of(query, [table("sales.s", "x")], [table("sales.t", "x")]),
        FakeEngine(),
        LineageOptions(),
        parse_sql=parser,
    )
    assert plan.entities[-1]["attributes"]["columnMapping"] == "[]"
    assert plan.notes == (
        "column lineage from SQL: the query has 120,042 characters, more than the limit of 65,536 "
        "(setting MAX_SQL_CHARS)",
    )
    assert parser.parses == 0


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, sql: str, dialect: str) -> ParsedSql:
        self.calls.append((sql, dialect))
        return ParsedSql()


def test_nothing_is_parsed_without_a_sql_facet_or_when_every_output_has_column_lineage():
    recorder = Recorder()
    plain = RunSnapshot(
        run_id="r1",
        job_namespace="etl",
        job_name="app.job",
        event_type="COMPLETE",
        event_time="2024-05-01T10:00:00Z",
        producer=SPARK,
        outputs=(table("sales.t"),),
    )
    build_lineage(plain, FakeEngine(), LineageOptions(), parse_sql=recorder)
    with_facet = table("sales.t")
    with_facet = DatasetFacts(
        with_facet.namespace,
        with_facet.name,
        {
            **with_facet.facets,
            "columnLineage": {
                "fields": {"x": {"inputFields": [{"namespace": LAKE, "name": "warehouse/sales.db/s", "field": "x"}]}}
            },
        },
    )
    attributes = process(
        run_of("INSERT INTO sales.t SELECT x FROM sales.s", [table("sales.s")], [with_facet]), recorder
    )
    assert recorder.calls == []
    assert attributes["columnLineageSource"] == "facet"


@pytest.mark.parametrize(
    "facet, producer, expected",
    [
        ({"dialect": "Snowflake"}, SPARK, "snowflake"),
        ({}, SPARK, "spark"),
        ({}, "https://github.com/OpenLineage/OpenLineage/tree/1.9.0/integration/flink", "generic"),
        ({"dialect": " "}, "", "generic"),
    ],
)
def test_the_dialect_is_the_facets_else_spark_sql_for_spark(facet, producer, expected):
    assert sql_dialect(facet, producer) == expected


def sequence_run(run_id: str, strip_column_lineage: bool = False) -> RunSnapshot:
    events = [
        e
        for e in load_sequence("compat-tests__spark_dataproc_simple_producer_test_complete")
        if e["run"]["runId"] == run_id
    ]
    return merge_events(_without_column_lineage(events) if strip_column_lineage else events)


def _without_column_lineage(events: list[dict]) -> list[dict]:
    for event in events:
        for output in event.get("outputs") or ():
            (output.get("facets") or {}).pop("columnLineage", None)
    return events


def test_the_real_ctas_of_the_dataproc_sequence_derives_what_its_producer_sent(parser):
    """CREATE TABLE IF NOT EXISTS t2 AS SELECT * FROM t1: Spark's own facet says a <- a, b <- b (IDENTITY); with the
    facet taken out, the star expands to the same columns through the schemas."""
    from_producer = process(sequence_run("019299c5-73cf-7069-a70f-74eb8070b577"), parser)
    derived = process(sequence_run("019299c5-73cf-7069-a70f-74eb8070b577", strip_column_lineage=True), parser)
    expected = [
        {
            "DatasetMapping": {
                "Source": "default.t1@dataproc-producer-test-m",
                "Sink": "default.t2@dataproc-producer-test-m",
            },
            "ColumnMapping": [{"Source": "a", "Sink": "a"}, {"Source": "b", "Sink": "b"}],
        }
    ]
    assert (json.loads(from_producer["columnMapping"]), from_producer["columnLineageSource"]) == (expected, "facet")
    assert (json.loads(derived["columnMapping"]), derived["columnLineageSource"]) == (expected, "sql")


@pytest.mark.parametrize(
    "run_id",
    [
        "019299c5-6ff9-7864-8dd7-e8142a2b6047",  # the CTAS's create_hive_table_as_select run: t2 without inputs
        "019299c5-5488-7db5-a64e-11439fc53117",  # INSERT INTO t1 VALUES (1,2),(3,4);
        "019299c5-4f43-7e45-aa6f-c65164159854",  # CREATE TABLE IF NOT EXISTS t1 (a INT, b STRING);
    ],
)
def test_the_other_real_statements_of_the_sequence_read_no_dataset_of_the_run_so_derive_nothing(parser, run_id):
    attributes = process(sequence_run(run_id), parser)
    assert (attributes["columnMapping"], attributes["columnLineageSource"]) == ("[]", "")


def test_the_real_drop_table_of_the_sequence_is_not_a_process(parser):
    # DROP TABLE IF EXISTS t1: its output carries lifecycleStateChange DROP and it reads nothing (issue 35)
    plan = build_lineage(
        sequence_run("019299c5-364c-79a9-9d83-659761b84279"), FakeEngine(), LineageOptions(), parse_sql=parser
    )
    assert (plan.process_names(), plan.entities) == ((), ())


def test_the_real_insert_event_with_its_facet_removed(parser):
    event = _without_column_lineage([load_event("compat-tests_dataproc-simple-1.23.0__11_insert_START.json")])[0]
    event["eventType"] = "COMPLETE"
    attributes = process(merge_events([event]), parser)
    assert json.loads(attributes["columnMapping"])[0]["ColumnMapping"] == [
        {"Source": "a", "Sink": "a"},
        {"Source": "b", "Sink": "b"},
    ]


@pytest.mark.parametrize(
    "name, expected",
    [
        # INSERT INTO t1 VALUES (1,2),(3,4): no table is read, so no column has a source
        ("compat-tests_dataproc-simple-1.23.0__8_insert_RUNNING_outputStatistics.json", ("[]", "")),
        # SELECT * FROM test (a template of the serde tests): it writes no table, so no output is named by it
        ("serde__openlineage-event.json", ("[]", "")),
    ],
)
def test_the_other_real_events_with_a_sql_facet_derive_nothing(parser, name, expected):
    event = load_event(name)
    event["eventType"] = "COMPLETE"
    attributes = process(merge_events([event]), parser)
    assert (attributes["columnMapping"], attributes["columnLineageSource"]) == expected
