"""Which relationship def each relationship attribute the connector sends belongs to. Pure data.

An attribute name can belong to several relationship defs of one entity type (Purview's `databricks_process.task`
and a same-named end that another connector defined, say), and Atlas then picks one by itself, refusing the write
when the referenced entity is not of that def's end type (400 ATLAS-400-00-045). So every relationship attribute the
connector sends names its `relationshipType` (`entities.entity` adds it from this table; a test checks the table
against the typedefs: olparser/lineage/typedefs/*.json and Purview's model, olparser/lineage/databricks_model.py).
"""

from __future__ import annotations

from . import databricks_model as dbx

RELATIONSHIP_TYPES: dict[tuple[str, str], str] = {
    # Purview's Databricks model
    **dbx.RELATIONSHIP_OF,
    **{(task, "job"): dbx.JOB_JOB_TASKS for task in dbx.TASK_TYPES},
    # the connector's own relationships on Purview's databricks_process and workspace (typedefs/databricks.json)
    ("databricks_pipeline", "workspace"): "databricks_workspace_pipelines",
    (dbx.PROCESS, "pipeline"): "databricks_pipeline_processes",
    (dbx.PROCESS, "orchestrator"): "airflow_task_databricks_processes",
    (dbx.PROCESS, "adfPipeline"): "adf_pipeline_databricks_processes",
    # spark.json
    ("spark_process", "application"): "spark_application_processes",
    ("spark_process", "orchestrator"): "airflow_task_spark_processes",
    ("spark_process", "adfPipeline"): "adf_pipeline_spark_processes",
    # openlineage_jobs.json (producers the connector has no model of)
    ("openlineage_process", "job"): "openlineage_job_processes",
    ("openlineage_process", "orchestrator"): "airflow_task_openlineage_processes",
    ("openlineage_process", "adfPipeline"): "adf_pipeline_openlineage_processes",
    # airflow.json, dbt.json, flink.json, openlineage_datasets.json
    ("airflow_task", "dag"): "airflow_dag_tasks",
    ("airflow_process", "task"): "airflow_task_processes",
    ("dbt_model", "project"): "dbt_project_models",
    ("dbt_process", "model"): "dbt_model_processes",
    ("flink_process", "job"): "flink_job_processes",
    ("openlineage_column", "dataset"): "openlineage_dataset_columns",
}


def relationship_type(type_name: str, attribute: str) -> str | None:
    """The relationship def of `type_name`'s relationship attribute `attribute`, or None when the connector does not
    know it (another tool's attribute: sent as given)."""
    return RELATIONSHIP_TYPES.get((type_name, attribute))
