"""Who runs the code: the entities that own a run's processes.

Databricks (a workspace host is known): `databricks_workspace` `databricks://{host}`; the notebook
`{workspace qn}/notebooks/{path}` when `spark.databricks.notebook.path` is set; for job runs
(`spark.databricks.job.id`) the job `{workspace qn}/jobs/{id}` and its task `{job qn}/tasks/{task key}`, typed from
`spark.databricks.job.type` (notebook, python, python_wheel, spark_jar; anything else: `databricks_job_task`). The
events carry no task key: it is the notebook path for notebook tasks, else the job type. Processes are
`databricks_process` under the task (relationship `task`) or else the notebook (relationship `notebook`).

Where only ids are known (Unity Catalog's lineage system tables, `ol2purview spark system-lineage`): a notebook by its
id (`spark.databricks.notebook.id`, as Databricks sets it) is `{workspace qn}/notebook-ids/{id}` (a path always starts
with a folder name such as Users or Shared, so the two forms never meet) and a notebook task's key is
`notebook-{id}`; a Delta Live Tables pipeline (`pipelines.id`, as DLT sets it) is `databricks_pipeline`
`{workspace qn}/pipelines/{id}`, owning its processes (relationship `pipeline`).

An Airflow task's run (the provider's `jobType` job facet: `integration: AIRFLOW`, `jobType: TASK`; job
`{dag_id}.{task_id}`, the DAG run its parent): `airflow_task` `airflow://{job namespace}/{dag_id}/tasks/{task_id}`
in its `airflow_dag` `airflow://{job namespace}/{dag_id}`, with `airflow_process` processes (relationship `task`).

Anything else (Synapse, HDInsight, Dataproc, plain PySpark, and Databricks runs whose workspace host is unknown):
`spark_application` `spark://{job namespace}/{application key}` (Databricks: `{workspace qn}/applications/...`)
with `spark_process` processes (relationship `application`). The application key is the job identity's
(olparser/lineage/identity.py): the parent run's job name (present on every event of the application), so all runs
of one application share the entity — except for Fabric and Synapse notebooks, whose application job names a
session: their key is the notebook (`notebooks/{artifact id}`, `notebooks/{notebook name}`), their name its
display name, so every session of one notebook shares the entity and its processes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .context import RunContext
from .entities import JSON, entity, object_id

TASK_TYPES = {
    "notebook": "databricks_notebook_task",
    "python": "databricks_python_task",
    "python_wheel": "databricks_python_wheel_task",
    "wheel": "databricks_python_wheel_task",
    "jar": "databricks_spark_jar_task",
    "spark_jar": "databricks_spark_jar_task",
}
GENERIC_TASK_TYPE = "databricks_job_task"
NOTEBOOK_ID_KEY = "spark.databricks.notebook.id"
PIPELINE_ID_KEY = "pipelines.id"
DATABRICKS_PROCESS = "databricks_process"
SPARK_PROCESS = "spark_process"
AIRFLOW_PROCESS = "airflow_process"
PROCESS_TYPES = frozenset({DATABRICKS_PROCESS, SPARK_PROCESS, AIRFLOW_PROCESS})


@dataclass(frozen=True)
class Owner:
    entities: tuple[JSON, ...]  # the owner and what it belongs to, dependencies first
    type_name: str
    qualified_name: str
    process_type: str
    process_relationship: str  # the process's relationship attribute that points at the owner

    def reference(self) -> JSON:
        return object_id(self.type_name, self.qualified_name)


def build_owner(job_namespace: str, ctx: RunContext, job_facets: Mapping[str, Any] | None = None) -> Owner:
    if is_airflow_task(job_facets or {}):
        return _airflow_owner(job_namespace, ctx)
    if ctx.workspace_host:
        return _databricks_owner(ctx)
    app_qn = f"spark://{job_namespace}/{ctx.app_key}"
    app = entity("spark_application", app_qn, {"name": ctx.app_display_name, "appName": ctx.app_key})
    return Owner((app,), "spark_application", app_qn, SPARK_PROCESS, "application")


def _databricks_owner(ctx: RunContext) -> Owner:
    host = ctx.workspace_host
    workspace_qn = f"databricks://{host}"
    workspace = entity("databricks_workspace", workspace_qn, {"name": host})
    workspace_ref = object_id("databricks_workspace", workspace_qn)
    chain = [workspace]
    notebook_path = ctx.env_text("spark.databricks.notebook.path")
    notebook_ref = None
    if notebook_path:
        notebook_qn = f"{workspace_qn}/notebooks/{notebook_path.strip('/')}"
        chain.append(entity("databricks_notebook", notebook_qn,
                            {"name": notebook_path.rstrip("/").rsplit("/", 1)[-1], "path": notebook_path},
                            {"workspace": workspace_ref}))
        notebook_ref = object_id("databricks_notebook", notebook_qn)
    notebook_id = ctx.env_text(NOTEBOOK_ID_KEY)
    if notebook_id and not notebook_path:
        notebook_qn = f"{workspace_qn}/notebook-ids/{notebook_id}"
        chain.append(entity("databricks_notebook", notebook_qn, {"name": f"notebook {notebook_id}",
                                                                 "notebookId": notebook_id},
                            {"workspace": workspace_ref}))
        notebook_ref = object_id("databricks_notebook", notebook_qn)
    job_id = ctx.env_text("spark.databricks.job.id")
    if job_id:
        job_qn = f"{workspace_qn}/jobs/{job_id}"
        chain.append(entity("databricks_job", job_qn, {"name": f"job {job_id}", "jobId": job_id},
                            {"workspace": workspace_ref}))
        job_type = (ctx.env_text("spark.databricks.job.type") or "").lower()
        task_type = TASK_TYPES.get(job_type, GENERIC_TASK_TYPE)
        task_key = notebook_path.strip("/") if notebook_path else (
            f"notebook-{notebook_id}" if notebook_id else job_type or "task")
        task_qn = f"{job_qn}/tasks/{task_key}"
        relationships: JSON = {"job": object_id("databricks_job", job_qn)}
        if notebook_ref and task_type == TASK_TYPES["notebook"]:
            relationships["notebook"] = notebook_ref
        chain.append(entity(task_type, task_qn, {"name": task_key.rsplit("/", 1)[-1], "taskKey": task_key,
                                                 "taskType": job_type}, relationships))
        return Owner(tuple(chain), task_type, task_qn, DATABRICKS_PROCESS, "task")
    pipeline_id = ctx.env_text(PIPELINE_ID_KEY)
    if pipeline_id:
        pipeline_qn = f"{workspace_qn}/pipelines/{pipeline_id}"
        chain.append(entity("databricks_pipeline", pipeline_qn, {"name": f"pipeline {pipeline_id}",
                                                                 "pipelineId": pipeline_id},
                            {"workspace": workspace_ref}))
        return Owner(tuple(chain), "databricks_pipeline", pipeline_qn, DATABRICKS_PROCESS, "pipeline")
    if notebook_ref:
        return Owner(tuple(chain), "databricks_notebook", notebook_ref["uniqueAttributes"]["qualifiedName"],
                     DATABRICKS_PROCESS, "notebook")
    app_qn = f"{workspace_qn}/applications/{ctx.app_key}"
    chain.append(entity("spark_application", app_qn, {"name": ctx.app_display_name, "appName": ctx.app_key}))
    return Owner(tuple(chain), "spark_application", app_qn, SPARK_PROCESS, "application")


def is_airflow_task(job_facets: Mapping[str, Any]) -> bool:
    """Whether the run is an Airflow task's: the `jobType` job facet the Airflow OpenLineage provider sends with
    every task event (`integration: AIRFLOW`, `jobType: TASK`)."""
    facet = job_facets.get("jobType")
    return isinstance(facet, dict) and str(facet.get("integration") or "").upper() == "AIRFLOW" \
        and str(facet.get("jobType") or "").upper() == "TASK"


def _airflow_owner(job_namespace: str, ctx: RunContext) -> Owner:
    """The Airflow provider names a task's job `{dag_id}.{task_id}` and gives it the DAG run as parent (job name
    `{dag_id}`): the DAG is the job identity's application (`ctx.app_key`), the task what follows it."""
    dag_id = ctx.app_key
    task_id = ctx.display_job_name or dag_id
    dag_qn = f"airflow://{job_namespace}/{dag_id}"
    task_qn = f"{dag_qn}/tasks/{task_id}"
    dag = entity("airflow_dag", dag_qn, {"name": dag_id, "dagId": dag_id})
    task = entity("airflow_task", task_qn, {"name": task_id, "taskId": task_id},
                  {"dag": object_id("airflow_dag", dag_qn)})
    return Owner((dag, task), "airflow_task", task_qn, AIRFLOW_PROCESS, "task")
