"""What openlineage-sql does not report about a statement, read from its tokens: the `*` that copies every column of
a source (`SELECT *`, `SELECT t.*`, Delta's `MERGE ... UPDATE SET *` / `INSERT *`), the table aliases of FROM, JOIN,
USING and MERGE INTO, and the tables each common table expression reads (openlineage-sql names a column read through
`WITH recent AS (SELECT * FROM orders)` as `recent.amount`). Pure and linear: one left-to-right scan with a tokenizer
whose patterns cannot backtrack.

Only the stars of the outermost SELECT list count (the smallest parenthesis depth at which a SELECT appears): a `*`
inside a CTE or a subquery feeds a query whose own select list decides the output columns; in a MERGE only its
`UPDATE SET *` and `INSERT *` do. `count(*)` and `a * b` are not select items (a star is one only right after SELECT,
DISTINCT, ALL or a comma, or after `qualifier.`, and right before FROM, a comma, EXCEPT, `)`, `;` or the end).
"""

from __future__ import annotations

import re
from typing import Iterator

from .model import SqlStar, SqlTable

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>--[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/)?)
  | (?P<string>'(?:[^'\\]|\\.?)*'?|"(?:[^"\\]|\\.?)*"?)
  | (?P<quoted>`(?:[^`]|``)*`?)
  | (?P<word>\w+)
  | (?P<other>.)
""",
    re.VERBOSE | re.DOTALL,
)

_STAR_BEFORE = {"select", "distinct", "all", ","}
_STAR_AFTER = {"from", ",", "except", ")", ";", None}
_TABLE_AFTER = {"from", "join", "using", "into"}
_NOT_ALIAS = frozenset(
    """
    where join inner left right full cross outer on using group order having limit union intersect except minus
    window lateral natural select when set values partition tablesample anti semi pivot unpivot cluster distribute
    sort qualify insert update delete merge version timestamp for with as then
""".split()
)

Token = tuple[str, bool]  # (text, quoted identifier); keywords and bare identifiers are lower-cased


def tokens(sql: str) -> Iterator[Token]:
    for match in _TOKEN.finditer(sql):
        kind = match.lastgroup
        if kind in ("space", "comment"):
            continue
        text = match.group()
        if kind == "string":
            yield "'", False
        elif kind == "quoted":
            yield (text[1:-1] if len(text) > 1 and text.endswith("`") else text[1:]).replace("``", "`"), True
        elif kind == "word":
            yield text.lower(), False
        else:
            yield text, False


def read_statement(
    sql: str,
) -> tuple[tuple[SqlStar, ...], tuple[tuple[str, SqlTable], ...], tuple[tuple[str, tuple[SqlTable, ...]], ...]]:
    """The `*` items of the outermost select list (of MERGE's UPDATE SET / INSERT only, in a MERGE), the (alias,
    table) pairs, and the tables each common table expression (WITH name AS (...)) reads, in the order they appear."""
    items = list(tokens(sql))
    depth = 0
    depths = []
    for text, quoted in items:
        if text == "(" and not quoted:
            depth += 1
        depths.append(depth)
        if text == ")" and not quoted:
            depth = max(0, depth - 1)
    select_depths = [d for (text, quoted), d in zip(items, depths, strict=True) if text == "select" and not quoted]
    top = min(select_depths) if select_depths else None
    merge = any(
        _word(items, i) == "merge" and _word(items, i + 1) == "into" and depths[i] == 0 for i in range(len(items))
    )
    stars: list[SqlStar] = []
    for index, (text, quoted) in enumerate(items):
        if text != "*" or quoted:
            continue
        before = _word(items, index - 1)
        after = _word(items, index + 1)
        if (
            before == "set"
            and _word(items, index - 2) == "update"
            or before == "insert"
            and _word(items, index - 2) == "then"
        ):
            stars.append(SqlStar(None))
        elif merge or depths[index] != top or after not in _STAR_AFTER:
            continue
        elif before in _STAR_BEFORE:
            stars.append(SqlStar(None))
        elif (
            before == "."
            and index >= 3
            and _is_name(items[index - 2])
            and _word(items, index - 3) in (*_STAR_BEFORE, ".")
        ):
            stars.append(SqlStar(items[index - 2][0].lower()))
    references = list(_references(items, 0, len(items)))
    aliases = tuple((alias, table) for table, alias in references if alias)
    return tuple(stars), aliases, tuple(_common_table_expressions(items, depths))


def _word(items: list[Token], index: int) -> str | None:
    """The token at `index` for keyword comparisons (a quoted identifier is never a keyword); None past the ends."""
    if index < 0 or index >= len(items):
        return None
    text, quoted = items[index]
    return None if quoted else text


def _is_name(token: Token) -> bool:
    text, quoted = token
    return quoted or (bool(text) and (text[0].isalpha() or text[0] == "_") and text not in _NOT_ALIAS)


def _references(items: list[Token], start: int, end: int) -> Iterator[tuple[SqlTable, str | None]]:
    """The tables of `FROM a.b x`, `JOIN c AS y`, `USING d z`, `MERGE INTO e t` between `start` and `end`, each
    with its alias (None when it has none)."""
    index = start
    while index < end:
        if _word(items, index) not in _TABLE_AFTER:
            index += 1
            continue
        index += 1
        parts = []
        while index < end and _is_name(items[index]):
            parts.append(items[index][0] if items[index][1] else items[index][0].lower())
            if _word(items, index + 1) != ".":
                index += 1
                break
            index += 2
        if not parts:
            continue
        alias = None
        if _word(items, index) == "as":
            index += 1
        if index < end and _is_name(items[index]) and _word(items, index + 1) != "(":
            alias = items[index][0].lower()
            index += 1
        yield SqlTable(tuple(parts)), alias


def _closing(items: list[Token], depths: list[int], opening: int) -> int:
    """The index of the `)` that closes the `(` at `opening` (the end of the tokens when it is not closed)."""
    for index in range(opening + 1, len(items)):
        if items[index] == (")", False) and depths[index] == depths[opening]:
            return index
    return len(items)


def _common_table_expressions(items: list[Token], depths: list[int]) -> Iterator[tuple[str, tuple[SqlTable, ...]]]:
    """(name, tables its body reads) for each `WITH [RECURSIVE] name [(columns)] AS (body), ...`."""
    index = 0
    while index < len(items):
        if _word(items, index) != "with":
            index += 1
            continue
        index += 1
        if _word(items, index) == "recursive":
            index += 1
        while index < len(items) and _is_name(items[index]):
            name = items[index][0].lower()
            index += 1
            if _word(items, index) == "(":
                index = _closing(items, depths, index) + 1
            if _word(items, index) == "as":
                index += 1
            if _word(items, index) != "(":
                break
            end = _closing(items, depths, index)
            yield name, tuple(dict.fromkeys(table for table, _ in _references(items, index + 1, end)))
            index = end + 1
            if _word(items, index) != ",":
                break
            index += 1
