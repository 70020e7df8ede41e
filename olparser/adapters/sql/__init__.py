"""The SQL parser as processes: `worker` runs openlineage-sql (a Rust extension) in its own process, fed by
`process_parser.SqlParser`, a ParseSql with a size limit, deadlines on every read, crash recovery and a cache."""
