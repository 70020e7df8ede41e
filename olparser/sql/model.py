"""What a SQL parser tells the entity builder about one statement: plain, picklable data, no I/O.

`ParsedSql` is the parser's answer (openlineage-sql's tables and column lineage, in the order it gave them, plus the
`*` select items that openlineage-sql leaves out); `SqlParseFailure` says why there is none (a parse error, a query
over the size limit, a timeout, a crashed parser) in words that name the setting and carry no SQL text.
`ParseSql` is the function the builder is given, so that the builder stays pure and tests can pass their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True, order=True)
class SqlTable:
    """A table as the statement names it: one to three parts (`t`, `db.t`, `catalog.schema.t`), unquoted."""

    parts: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.parts[-1]

    def __str__(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True)
class SqlColumn:
    """A column and the table it belongs to (None when the parser could not tell)."""

    table: SqlTable | None
    name: str


@dataclass(frozen=True)
class SqlColumnLineage:
    """One output column and the input columns its value is computed from."""

    target: SqlColumn
    sources: tuple[SqlColumn, ...]


@dataclass(frozen=True)
class SqlStar:
    """A `*` that copies every column of its source to the target: a select item (`SELECT *`, `SELECT t.*`,
    qualified by `t`) or Delta's `MERGE ... UPDATE SET *` / `INSERT *`."""

    qualifier: str | None = None


@dataclass(frozen=True)
class ParsedSql:
    in_tables: tuple[SqlTable, ...] = ()
    out_tables: tuple[SqlTable, ...] = ()
    columns: tuple[SqlColumnLineage, ...] = ()
    stars: tuple[SqlStar, ...] = ()
    aliases: tuple[tuple[str, SqlTable], ...] = ()  # (alias, table) as the FROM, JOIN and USING clauses give them
    ctes: tuple[tuple[str, tuple[SqlTable, ...]], ...] = ()  # (name, the tables its body reads) of WITH name AS (...)

    def to_json(self) -> dict[str, Any]:
        return {
            "in": [list(t.parts) for t in self.in_tables],
            "out": [list(t.parts) for t in self.out_tables],
            "columns": [[_column_json(c.target), [_column_json(s) for s in c.sources]] for c in self.columns],
            "stars": [s.qualifier for s in self.stars],
            "aliases": [[alias, list(table.parts)] for alias, table in self.aliases],
            "ctes": [[name, [list(t.parts) for t in tables]] for name, tables in self.ctes],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ParsedSql":
        return cls(
            in_tables=tuple(SqlTable(tuple(p)) for p in data.get("in", ())),
            out_tables=tuple(SqlTable(tuple(p)) for p in data.get("out", ())),
            columns=tuple(
                SqlColumnLineage(_column(target), tuple(_column(s) for s in sources))
                for target, sources in data.get("columns", ())
            ),
            stars=tuple(SqlStar(q) for q in data.get("stars", ())),
            aliases=tuple((alias, SqlTable(tuple(parts))) for alias, parts in data.get("aliases", ())),
            ctes=tuple((name, tuple(SqlTable(tuple(p)) for p in tables)) for name, tables in data.get("ctes", ())),
        )


@dataclass(frozen=True)
class SqlParseFailure:
    """No lineage from this statement, and why (no SQL text: it may hold literals that are secrets)."""

    reason: str


ParseResult = ParsedSql | SqlParseFailure
ParseSql = Callable[[str, str], ParseResult]  # (query, dialect) -> result


def _column_json(column: SqlColumn) -> list[Any]:
    return [list(column.table.parts) if column.table else None, column.name]


def _column(data: list[Any]) -> SqlColumn:
    table, name = data
    return SqlColumn(SqlTable(tuple(table)) if table else None, name)
