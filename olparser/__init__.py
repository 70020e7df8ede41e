"""ol2purview: OpenLineage events in, Purview (Atlas v2) lineage out. See docs/design.md for the data flow.

The pure core — plain functions over plain data, no I/O (a test reads the imports and holds it to that):
  contract    decoding and validating an HTTP body into an event, stripping heavy facets
  naming      OpenLineage (namespace, name) -> Purview (qualifiedName, type), the rule engine (the rules: config/OlToPurviewMappings.json,
              packaged into the wheel as naming/shipped at build time)
  runs        merging the events of one run; the ownership ledger; the run rules; the run-state store interface
  lineage     building Atlas entities (datasets, Databricks owners, processes, column mappings), linking a plan; the
              connector's Atlas types (lineage/typedefs, package data)
  resolution  the candidates of a dataset: the names Purview's scanners give it (resource sets, Unity Catalog, Fabric)
  sql         column lineage from a statement's tokens (the parser process is an adapter)
  history     the run history: records of every run, lineage in a time window; the history store interface
  settings    the app settings as one frozen dataclass
  jsontypes   the one JSON alias (dict[str, Any])

The orchestration, over the interfaces it is given (nothing in the core or the adapters imports it but the composition root):
  pipeline    the runner that orders the steps, the write procedure (writing), the re-link timer's work (relink)

The adapters, which do the I/O behind those interfaces: `olparser/adapters` (run-state and history stores, the
catalog client and uploader, queues, blobs, the archive, the SQL parser processes, the Azure Functions handlers and
the runtime that composes everything).
"""
