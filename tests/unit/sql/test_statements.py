"""The tokens openlineage-sql does not report on: `*` select items, aliases and common table expressions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olparser.sql import SqlStar, SqlTable
from olparser.sql.statements import read_statement
from tests.support.work_count import lines_run


def stars(sql: str) -> list[str | None]:
    return [star.qualifier for star in read_statement(sql)[0]]


@pytest.mark.parametrize(
    "sql, expected",
    [
        ("INSERT INTO t SELECT * FROM a", [None]),
        ("CREATE TABLE t AS SELECT DISTINCT * FROM a", [None]),
        ("INSERT INTO t SELECT id, * FROM a", [None]),
        ("INSERT INTO t SELECT x.* FROM a x JOIN b y ON x.id = y.id", ["x"]),
        ("INSERT INTO t SELECT db.a.* FROM db.a", ["a"]),
        ("CREATE TABLE t AS (SELECT * FROM a)", [None]),  # the outermost SELECT is in parentheses
        ("INSERT INTO t SELECT * EXCEPT (secret) FROM a", [None]),
        ("INSERT INTO t SELECT * FROM a UNION ALL SELECT * FROM b", [None, None]),
        ("INSERT INTO t SELECT count(*) AS n FROM a", []),
        ("INSERT INTO t SELECT price * quantity AS total FROM a", []),
        ("INSERT INTO t SELECT '*' AS star, \"*\" FROM a", []),
        ("INSERT INTO t SELECT a FROM x -- SELECT * FROM y\n", []),
        ("INSERT INTO t /* SELECT * FROM y */ SELECT a FROM x", []),
        ("WITH c AS (SELECT * FROM a) INSERT INTO t SELECT id FROM c", []),  # the CTE's star feeds `SELECT id`
        ("INSERT INTO t SELECT n FROM (SELECT * FROM a) s", []),
        (
            "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
            [None, None],
        ),
        ("MERGE INTO t USING (SELECT * FROM s) u ON t.id = u.id WHEN MATCHED THEN UPDATE SET t.v = u.v", []),
        ("INSERT INTO t VALUES (1, 2)", []),
        ("SELECT `*` FROM a", []),  # a column named *
    ],
)
def test_star_select_items_are_the_outermost_ones(sql, expected):
    assert stars(sql) == expected


def test_aliases_of_from_join_using_and_merge_into():
    _, aliases, _ = read_statement(
        "MERGE INTO Sales.Customers AS tgt USING (SELECT * FROM sales.updates u) src ON tgt.id = src.id "
        "WHEN MATCHED THEN UPDATE SET *"
    )
    assert aliases == (("tgt", SqlTable(("sales", "customers"))), ("u", SqlTable(("sales", "updates"))))
    _, aliases, _ = read_statement(
        "INSERT INTO t SELECT o.a FROM `my db`.orders o LEFT JOIN c ON o.id = c.id "
        "JOIN d AS dd ON dd.id = c.id WHERE o.a > 1"
    )
    assert aliases == (("o", SqlTable(("my db", "orders"))), ("dd", SqlTable(("d",))))


def test_common_table_expressions_and_the_tables_they_read():
    _, _, ctes = read_statement(
        "WITH RECURSIVE recent (id, amount) AS (SELECT * FROM sales.orders o WHERE o.day > 1), "
        "joined AS (SELECT r.id FROM recent r JOIN sales.customers c ON r.id = c.id) "
        "INSERT INTO t SELECT id FROM joined"
    )
    assert ctes == (
        ("recent", (SqlTable(("sales", "orders")),)),
        ("joined", (SqlTable(("recent",)), SqlTable(("sales", "customers")))),
    )


def test_unterminated_strings_comments_and_identifiers_end_the_statement():
    assert read_statement("INSERT INTO t SELECT * FROM a WHERE x = 'open") == ((SqlStar(None),), (), ())
    assert read_statement("SELECT * FROM a /* open")[0] == (SqlStar(None),)
    assert read_statement("SELECT * FROM `open")[1] == ()


def _lines_run(sql: str) -> int:
    """How many lines of the reader's own code run to read `sql` (a count of work: the same on a loaded machine)."""
    return max(lines_run(lambda: read_statement(sql), read_statement.__code__.co_filename), 1)


def test_reading_is_linear_in_the_statement():
    """The worst shapes for a scanner (nested parentheses, open quotes, many CTEs): 64 KiB takes about 4 times the
    work of 16 KiB (a quadratic reading would take 16 times), counted as the lines of the reader that run."""
    shapes = [
        "(" * 65_536,
        "'\\" * 32_768,
        "WITH " + ", ".join(f"c{i} AS (SELECT * FROM x)" for i in range(2_000)),
        "SELECT " + ", ".join("*" for _ in range(30_000)) + " FROM a",
    ]
    for sql in shapes:
        large, small = _lines_run(sql[:65_536]), _lines_run(sql[:16_384])
        assert large / small < 6, (sql[:20], large, small)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("SELECT*FROM(),.'`\"-/ abwithmergeinsetupdate\n")), max_size=200))
def test_any_text_is_read_without_error(sql):
    found_stars, aliases, ctes = read_statement(sql)
    assert all(isinstance(s, SqlStar) for s in found_stars)
    assert all(isinstance(t, SqlTable) and t.parts for _, t in aliases)
    assert all(isinstance(name, str) for name, _ in ctes)
