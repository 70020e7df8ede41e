"""`ol2purview spark`: OpenLineage history (exports, the event archive) into the catalog, on Spark or in one process;
and Unity Catalog's lineage system tables, on Spark.

  records    file bytes -> event bodies -> the live contract -> (run key, event JSON) or a refusal reason
  runs       a run's events -> merge_event -> build_lineage -> RunResult; newest run per process and per entity
  catalog    rate limit, what the catalog holds (unchanged / superseded), bulk writes of many runs, deletes
  job        the broadcast job (settings with inline rules, time range, rate) and steps both runners share
  sources    folders, files, globs, URLs, and the archive's day folders for a time range
  report     the table, CSV and JSON
  spark_job  the Spark (RDD) runner;  local  the single-process runner;  cli / main  the command line
  system_rows, system_job, system_cli, watermark
             `spark system-lineage`: Unity Catalog's lineage system tables as runs (pure), on Spark, its command line,
             and the watermark that makes it incremental
"""
