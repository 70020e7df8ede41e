"""Generated OpenLineage events shaped as real producers send them, for the tests, the benchmarks and trying the
connector out without a cluster (`databricks`: notebook runs as openlineage-spark emits them on Databricks)."""
