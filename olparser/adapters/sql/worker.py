"""The SQL parser's own process: `python -m olparser.adapters.sql.worker`, started and fed by
`olparser.adapters.sql.process_parser`.

openlineage-sql is a Rust extension: a call cannot be interrupted from Python, and a deep enough expression overflows
its stack and kills the process (a 90 KB `a+a+...` chain does, measured). So it runs here, where a deadline can kill
it and a crash costs nothing but this process.

Protocol, one JSON document per line: it writes `{"ready": true}` once it has imported the parser, then answers every
request `{"sql": ..., "dialect": ...}` with `{"parsed": ParsedSql.to_json()}` or `{"error": "..."}`. It ends when its
input ends (its parent went away).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from olparser.sql.model import ParsedSql, SqlColumn, SqlColumnLineage, SqlTable
from olparser.sql.statements import read_statement

_POSITION = re.compile(r"at Line: (\d+), Column: (\d+)")


def _table(meta: Any) -> SqlTable | None:
    if meta is None:
        return None
    parts = tuple(p for p in (meta.database, meta.schema, meta.name) if p)
    return SqlTable(parts) if parts else None


def parse(sql: str, dialect: str) -> dict[str, Any]:
    import openlineage_sql

    result = openlineage_sql.parse([sql], dialect=dialect or None)
    if result.errors:
        position = _POSITION.search(result.errors[0].message or "")
        where = f" (line {position.group(1)}, column {position.group(2)})" if position else ""
        return {"error": f"the {dialect or 'generic'} SQL parser could not read the statement{where}"}
    columns = tuple(
        SqlColumnLineage(
            SqlColumn(_table(item.descendant.origin), item.descendant.name),
            tuple(SqlColumn(_table(source.origin), source.name) for source in item.lineage),
        )
        for item in result.column_lineage
    )
    stars, aliases, ctes = read_statement(sql)
    parsed = ParsedSql(
        in_tables=tuple(t for t in map(_table, result.in_tables) if t),
        out_tables=tuple(t for t in map(_table, result.out_tables) if t),
        columns=columns,
        stars=stars,
        aliases=aliases,
        ctes=ctes,
    )
    return {"parsed": parsed.to_json()}


def main() -> int:
    import openlineage_sql  # noqa: F401  (imported before saying ready, so that no deadline pays for it)

    out = sys.stdout
    out.write('{"ready": true}\n')
    out.flush()
    for line in sys.stdin:
        try:
            request = json.loads(line)
            answer = parse(request["sql"], request.get("dialect") or "")
        except Exception as exc:  # a bad request or an exception of the parser: the parent gets a reason
            answer = {"error": f"the SQL parser failed ({type(exc).__name__})"}
        out.write(json.dumps(answer, separators=(",", ":")) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
