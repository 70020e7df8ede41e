"""SQL statements as lineage: what a statement reads and writes, column by column (used when a producer sends a
`sql` job facet and no `columnLineage`).

  model           plain data the builder receives: ParsedSql, SqlParseFailure, and ParseSql, the function type
  statements      pure: the `*` items and table aliases of a statement, from its tokens
The parser itself runs in worker processes: olparser/adapters/sql.
"""

from .model import ParsedSql, ParseResult, ParseSql, SqlColumn, SqlColumnLineage, SqlParseFailure, SqlStar, SqlTable

__all__ = [
    "ParseResult",
    "ParseSql",
    "ParsedSql",
    "SqlColumn",
    "SqlColumnLineage",
    "SqlParseFailure",
    "SqlStar",
    "SqlTable",
]
