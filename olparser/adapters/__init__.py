"""The adapters: everything in olparser that does I/O, behind the interfaces the pure core defines.

run_state          SQLite and Azure Table storage run-state stores (olparser/runs/store.py's interface)
history_stores     SQLite and Azure Table storage run-history stores (olparser/history/store.py's interface)
catalog            Purview / Atlas over HTTP: client, retries, batching, existence cache, uploader, resolver, types
delivery           queues (Azure Storage, or SQLite with group commit), claim-check blobs, poison, the event archive
sql                the SQL parser's worker processes (openlineage-sql), with deadlines and a cache
storage_account    queue, table and blob clients from a connection string or the app's managed identity
sqlite_file        opening SQLite files the same way everywhere (WAL, retries while another opener holds them)
rules_file         the rule file, re-read when it changes
function_handlers  the bodies of function_app.py's triggers
runtime            the only composition root: settings -> the objects above, once per process (building only)
operations         what the functions do with those objects: an event through the runner, the timers' ticks
"""
