"""The SQL parser adapter on real worker processes: answers, refusals, deadlines, crashes, caching, concurrency, and
one log line per failed statement that names the setting and never holds the SQL."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator

import pytest

from olparser.adapters.sql import process_parser
from olparser.adapters.sql.process_parser import SqlParser
from olparser.sql import ParsedSql, SqlColumn, SqlColumnLineage, SqlParseFailure, SqlStar, SqlTable

# A `+` chain this long overflows openlineage-sql's stack: in-process, it would kill the caller (signal 11).
STACK_OVERFLOW = "INSERT INTO t SELECT " + "+".join(f"c{i}" for i in range(30_000)) + " AS z FROM x"
# A deadline no parse meets however fast the machine, and one every parse meets however loaded: which a parse gets
# is set, never raced against a clock.
NO_TIME, PLENTY = 0.0, 60.0


class CountedWorkers:
    """The parser processes a SqlParser starts, counted (each is a new `_Worker`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started = 0
        original = process_parser._Worker

        def start(startup_seconds: float) -> process_parser._Worker:
            self.started += 1
            return original(startup_seconds)

        monkeypatch.setattr(process_parser, "_Worker", start)


@pytest.fixture
def parser() -> Iterator[SqlParser]:
    parser = SqlParser(max_chars=1_000_000, timeout_seconds=PLENTY)
    yield parser
    parser.close()


def test_a_statement_comes_back_as_plain_data(parser):
    parsed = parser(
        "INSERT INTO db.out SELECT o.id, sum(o.amount) AS total, c.* FROM db.orders o "
        "JOIN db.customers c ON o.cid = c.id GROUP BY o.id",
        "spark",
    )
    orders, customers = SqlTable(("db", "orders")), SqlTable(("db", "customers"))
    assert parsed == ParsedSql(
        in_tables=(customers, orders),
        out_tables=(SqlTable(("db", "out")),),
        columns=(
            SqlColumnLineage(SqlColumn(None, "id"), (SqlColumn(orders, "id"),)),
            SqlColumnLineage(SqlColumn(None, "total"), (SqlColumn(orders, "amount"),)),
        ),
        stars=(SqlStar("c"),),
        aliases=(("o", orders), ("c", customers)),
    )


def test_a_statement_the_parser_cannot_read_is_a_failure_with_its_position(parser, caplog):
    with caplog.at_level(logging.WARNING, logger="olparser.adapters.sql.process_parser"):
        first = parser("INSERT INTO t SELEC secret_literal FROM x", "spark")
        again = parser("INSERT INTO t SELEC secret_literal FROM x", "spark")
    assert first == again == SqlParseFailure("the spark SQL parser could not read the statement (line 1, column 15)")
    assert [r.getMessage() for r in caplog.records] == [
        "column lineage from SQL: the spark SQL parser could not read the statement (line 1, column 15); "
        "the table lineage is written without columns"
    ]  # once per statement, and without its text
    assert parser.parses == 1


def test_an_oversize_query_is_refused_without_starting_a_parser(caplog):
    parser = SqlParser(max_chars=100)
    with caplog.at_level(logging.WARNING, logger="olparser.adapters.sql.process_parser"):
        result = parser("SELECT 1 AS " + "a" * 89, "spark")  # 101 characters
    assert result == SqlParseFailure("the query has 101 characters, more than the limit of 100 (setting MAX_SQL_CHARS)")
    assert (parser.parses, parser._started) == (0, 0)
    assert len(caplog.records) == 1 and "MAX_SQL_CHARS" in caplog.records[0].getMessage()


def test_a_parse_past_its_deadline_is_abandoned_and_the_next_statement_gets_a_new_parser(monkeypatch):
    workers = CountedWorkers(monkeypatch)
    parser = SqlParser(timeout_seconds=NO_TIME)  # the deadline has passed before the answer can be read
    try:
        assert parser("INSERT INTO t SELECT a FROM x", "spark") == SqlParseFailure(
            "parsing took longer than 0 s (setting SQL_PARSE_TIMEOUT_SECONDS)"
        )
        assert (workers.started, parser._started, parser.parses) == (1, 0, 1)  # that worker was killed
        parser.timeout_seconds = PLENTY
        assert parser("INSERT INTO t SELECT a FROM b", "spark").columns == (
            SqlColumnLineage(SqlColumn(None, "a"), (SqlColumn(SqlTable(("b",)), "a"),)),
        )
        assert (workers.started, parser._started, parser.parses) == (2, 1, 2)  # a new one answered
    finally:
        parser.close()


def test_a_parser_crash_costs_only_its_worker(parser):
    assert parser(STACK_OVERFLOW, "spark") == SqlParseFailure(
        "the SQL parser process ended (signal 11) while parsing the statement"
    )
    assert parser("INSERT INTO t SELECT a FROM b", "spark").out_tables == (SqlTable(("t",)),)


def test_results_are_cached_by_dialect_and_query(parser):
    query = "INSERT INTO t SELECT a FROM b"
    assert parser(query, "spark") == parser(query, "spark")
    parser(query, "generic")
    assert parser.parses == 2


def test_concurrent_callers_share_at_most_the_configured_workers():
    parser = SqlParser(workers=2, timeout_seconds=PLENTY)
    try:
        queries = [f"INSERT INTO t{i} SELECT a{i} FROM b{i}" for i in range(40)]
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda q: parser(q, "spark"), queries))
        assert [r.out_tables[0].name for r in results] == [f"t{i}" for i in range(40)]
        assert parser._started <= 2 and parser.parses == 40
    finally:
        parser.close()
