"""ol2purview core: pure functions over plain data that turn OpenLineage events into Purview (Atlas v2) lineage.

Sub-packages, one concern each (see docs/design.md):
  naming     OpenLineage (namespace, name) -> Purview (qualifiedName, type), the rule engine
  contract   decoding and validating an HTTP body into an event, stripping heavy facets
  runs       merging the events of one run; run-state stores behind one interface
  lineage    building Atlas entities (datasets, Databricks owners, processes, column mappings), linking a plan
  resolution the candidates of a dataset: the names Purview's scanners give it (resource sets, Unity Catalog, Fabric)
  sql        column lineage from a run's SQL (openlineage-sql in worker processes)
  catalog    uploading entities to Purview or any Atlas endpoint (retries, batching, cache); resolving candidates
  history    the run history: records of every run, lineage in a time window
  delivery   queueing, claim check, poison handling, the event archive
  pipeline   the runner that orders the steps; relink: the re-link timer's work
"""
