"""The Airflow DAG and task an orchestrated run names, and the parent facet that names them."""

from __future__ import annotations

from olparser.lineage.identity import JobRef

# ParentRunFacet 1-2-0 (shared/openlineage/spec/facets/ParentRunFacet.json): {run, job, root: {run, job}}. An Airflow
# task that starts a Spark job hands its identity to Spark (spark.openlineage.parentJobName = `{dag}.{task}`,
# rootParentJobName = the DAG); openlineage-spark then sends the application run as the parent of every SQL job and the
# DAG run as their root, and the task as the parent of the application run (SparkSQLExecutionContext /
# SparkApplicationExecutionContext.buildApplicationParentFacet).
APP = JobRef("adb-1.2#c", "databricks_shell", "0190f000-0000-7000-8000-00000000a000")


TASK = JobRef("airflow", "sales_daily.load_orders", "0190f000-0000-7000-8000-00000000b000")


DAG = JobRef("airflow", "sales_daily", "0190f000-0000-7000-8000-00000000c000")


def parent_facet(parent: JobRef, root: JobRef | None = None) -> dict:
    facet = {"run": {"runId": parent.run_id}, "job": {"namespace": parent.namespace, "name": parent.name}}
    if root is not None:
        facet["root"] = {"run": {"runId": root.run_id}, "job": {"namespace": root.namespace, "name": root.name}}
    return {"parent": facet}
