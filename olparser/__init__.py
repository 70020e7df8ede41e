"""ol2purview core: pure functions over plain data that turn OpenLineage events into Purview (Atlas v2) lineage.

Sub-packages, one concern each (see docs/design.md):
  naming     OpenLineage (namespace, name) -> Purview (qualifiedName, type), the rule engine
  contract   decoding and validating an HTTP body into an event, stripping heavy facets
  runs       merging the events of one run; run-state stores behind one interface
  lineage    building Atlas entities (datasets, Databricks owners, processes, column mappings)
  catalog    uploading entities to Purview or any Atlas endpoint (retries, batching, cache)
  delivery   queueing, claim check, poison handling
  pipeline   the runner that orders the steps
"""
