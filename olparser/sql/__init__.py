"""SQL statements as lineage: what a statement reads and writes, column by column (used when a producer sends a
`sql` job facet and no `columnLineage`).

  model           plain data the builder receives: ParsedSql, SqlParseFailure, and ParseSql, the function type
  statements      pure: the `*` items and table aliases of a statement, from its tokens
  worker          the parser's own process (openlineage-sql, a Rust extension)
  process_parser  the adapter: SqlParser, a ParseSql over worker processes with a size limit, deadlines and a cache
"""
from .model import ParsedSql, ParseResult, ParseSql, SqlColumn, SqlColumnLineage, SqlParseFailure, SqlStar, SqlTable

__all__ = ["ParseResult", "ParseSql", "ParsedSql", "SqlColumn", "SqlColumnLineage", "SqlParseFailure", "SqlStar",
           "SqlTable"]
