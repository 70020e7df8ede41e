"""Who runs the code: the entities that own a run's processes.

Databricks (a workspace host is known), in Purview's built-in Databricks model (olparser/lineage/databricks_model.py)
and with the qualifiedNames the accelerator gave the same entities: `databricks_workspace` `databricks://{host}`; the
notebook `{workspace qn}/notebooks/{path without leading /}` when `spark.databricks.notebook.path` is set; for job runs
(`spark.databricks.job.id`) the job `{workspace qn}/jobs/{id}` (Data Factory runs: `.../jobs/ADF_{factory}_{pipeline}`)
and its task, typed from `spark.databricks.job.type` (notebook, python, python_wheel, spark_jar, spark_submit; anything
else: `databricks_job_task`): the job's existing task that runs the same code when the catalog holds one (resolution
finds it: `TaskLookup`), else `{job qn}/tasks/{notebook path}` (the events carry no task key). Notebooks and tasks are
`databricks_runnable`s: their `databricks_process`es hang under them (relationship `task`,
`databricks_runnable_processes`): under the task for a job run, under the notebook for an interactive run.

Where only ids are known (Unity Catalog's lineage system tables, `ol2purview spark system-lineage`): a notebook by its
id (`spark.databricks.notebook.id`, as Databricks sets it) is `{workspace qn}/notebook-ids/{id}` (a path always starts
with a folder name such as Users or Shared, so the two forms never meet) and a notebook task's key is
`notebook-{id}`; a Delta Live Tables pipeline (`pipelines.id`, as DLT sets it), which Purview does not model, is the
connector's `databricks_pipeline` `{workspace qn}/pipelines/{id}`, owning its processes (relationship `pipeline`).

An Airflow task's run (the provider's `jobType` job facet: `integration: AIRFLOW`, `jobType: TASK`; job
`{dag_id}.{task_id}`, the DAG run its parent): `airflow_task` `airflow://{job namespace}/{dag_id}/tasks/{task_id}`
in its `airflow_dag` `airflow://{job namespace}/{dag_id}`, with `airflow_process` processes (relationship `task`).

A dbt node's run (dbt-ol: `integration: DBT`, any `jobType` but the command's `JOB`; job `{unique_id}`, the
command's run `dbt-run-{project}` its parent): `dbt_model` `dbt://{job namespace}/{project}/{unique_id}` in its
`dbt_project` `dbt://{job namespace}/{project}` (the `dbt_run` run facet's `project_name`), with `dbt_process`
processes (relationship `model`). A Flink job's run (openlineage-flink: `integration: FLINK`): `flink_job`
`flink://{job namespace}/{job name}` with `flink_process` processes (relationship `job`).

A producer the connector has no model of (neither a `jobType` integration above nor Spark, e.g. a custom client or
an orchestrator without the facet): `openlineage_job` `openlineage://{job namespace}/{job name}` with
`openlineage_process` processes (relationship `job`), the job name whole (`_generic_owner`).

Any other Spark run (Synapse, HDInsight, Dataproc, plain PySpark, and Databricks runs whose workspace host is unknown):
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

from olparser.jsontypes import JSON
from olparser.resolution.tasks import TaskLookup

from . import databricks_model as dbx
from .adf import AdfPipeline, adf_pipeline
from .context import RunContext
from .entities import entity, object_id, related
from .identity import Orchestration, orchestration

TASK_TYPES = {
    "notebook": dbx.NOTEBOOK_TASK,
    "python": dbx.PYTHON_TASK,
    "python_wheel": dbx.PYTHON_WHEEL_TASK,
    "wheel": dbx.PYTHON_WHEEL_TASK,
    "jar": dbx.SPARK_JAR_TASK,
    "spark_jar": dbx.SPARK_JAR_TASK,
    "spark_submit": dbx.SPARK_SUBMIT_TASK,
}
GENERIC_TASK_TYPE = dbx.JOB_TASK
NOTEBOOK_ID_KEY = "spark.databricks.notebook.id"
PIPELINE_ID_KEY = "pipelines.id"
DATABRICKS_PROCESS = dbx.PROCESS
SPARK_PROCESS = "spark_process"
AIRFLOW_PROCESS = "airflow_process"
DBT_PROCESS = "dbt_process"
FLINK_PROCESS = "flink_process"
# the owner and process types of a producer the connector has no model of (typedefs/openlineage_jobs.json)
OPENLINEAGE_JOB, OPENLINEAGE_PROCESS = "openlineage_job", "openlineage_process"
PROCESS_TYPES = frozenset(
    {DATABRICKS_PROCESS, SPARK_PROCESS, AIRFLOW_PROCESS, DBT_PROCESS, FLINK_PROCESS, OPENLINEAGE_PROCESS}
)
MODELLED_INTEGRATIONS = frozenset({"SPARK", "AIRFLOW", "DBT", "FLINK"})  # jobType integrations with owners of their own


@dataclass(frozen=True)
class Owner:
    entities: tuple[JSON, ...]  # the owner and what it belongs to, dependencies first
    type_name: str
    qualified_name: str
    process_type: str
    process_relationship: str  # the process's relationship attribute that points at the owner
    task_lookup: TaskLookup | None = None  # a job run: its job's existing task may stand for the builder's own
    process_job: str | None = None  # the job name its processes carry, when not the run context's display name

    def reference(self) -> JSON:
        return object_id(self.type_name, self.qualified_name)


def build_owner(
    job_namespace: str,
    ctx: RunContext,
    job_facets: Mapping[str, Any] | None = None,
    run_facets: Mapping[str, Any] | None = None,
    job_name: str = "",
    producer: str = "",
) -> Owner:
    generic = _generic_owner(job_namespace, job_name, ctx, job_facets or {}, run_facets or {}, producer)
    if generic is not None:
        return generic
    integration, job_type = producer_job_type(job_facets or {})
    if integration == "AIRFLOW" and job_type == "TASK":
        return _airflow_owner(job_namespace, ctx)
    if integration == "DBT" and job_type not in ("", "JOB"):  # a node's run; JOB: the dbt command, its parent
        return _dbt_owner(job_namespace, ctx, run_facets or {})
    if integration == "FLINK":
        return _flink_owner(job_namespace, job_name or ctx.app_key)
    if ctx.workspace_host:
        return _databricks_owner(ctx, orchestration(job_name, run_facets or {}))
    app_qn = f"spark://{job_namespace}/{ctx.app_key}"
    app = entity("spark_application", app_qn, {"name": ctx.app_display_name, "appName": ctx.app_key})
    return Owner((app,), "spark_application", app_qn, SPARK_PROCESS, "application")


def _databricks_owner(ctx: RunContext, orchestration: Orchestration) -> Owner:
    """The runnable that ran a Databricks run, in Purview's built-in model (olparser/lineage/databricks_model.py),
    with the qualifiedNames the accelerator gave the same entities, so that its estate is written with, not beside."""
    host = ctx.workspace_host
    workspace_qn = f"databricks://{host}"
    workspace = entity(dbx.WORKSPACE, workspace_qn, {"name": host})
    workspace_ref = object_id(dbx.WORKSPACE, workspace_qn)
    chain = [workspace]
    notebook_path = ctx.env_text("spark.databricks.notebook.path")
    notebook_id = ctx.env_text(NOTEBOOK_ID_KEY)
    notebook_qn = None
    if notebook_path:
        notebook_qn = f"{workspace_qn}/notebooks/{notebook_path.strip('/')}"
        name = notebook_path.rstrip("/").rsplit("/", 1)[-1]
    elif notebook_id:
        notebook_qn, name = f"{workspace_qn}/notebook-ids/{notebook_id}", f"notebook {notebook_id}"
    if notebook_qn:
        chain.append(entity(dbx.NOTEBOOK, notebook_qn, {"name": name}, {"workspace": workspace_ref}))
    job_id = ctx.env_text("spark.databricks.job.id")
    if job_id:
        job_type = (ctx.env_text("spark.databricks.job.type") or "").lower()
        task_type = TASK_TYPES.get(job_type, GENERIC_TASK_TYPE)
        job, task, lookup = _job_and_task(
            workspace_qn, job_id, job_type, task_type, notebook_path, notebook_id, adf_pipeline(orchestration)
        )
        if notebook_qn and task_type == dbx.NOTEBOOK_TASK:
            task["relationshipAttributes"].update(
                {"notebook": related(task_type, "notebook", object_id(dbx.NOTEBOOK, notebook_qn))}
            )
        chain += [job, task]
        return Owner(tuple(chain), task_type, task["attributes"]["qualifiedName"], DATABRICKS_PROCESS, "task", lookup)
    pipeline_id = ctx.env_text(PIPELINE_ID_KEY)
    if pipeline_id:
        pipeline_qn = f"{workspace_qn}/pipelines/{pipeline_id}"
        chain.append(
            entity(
                "databricks_pipeline",
                pipeline_qn,
                {"name": f"pipeline {pipeline_id}", "pipelineId": pipeline_id},
                {"workspace": workspace_ref},
            )
        )
        return Owner(tuple(chain), "databricks_pipeline", pipeline_qn, DATABRICKS_PROCESS, "pipeline")
    if notebook_qn:
        return Owner(tuple(chain), dbx.NOTEBOOK, notebook_qn, DATABRICKS_PROCESS, "task")
    app_qn = f"{workspace_qn}/applications/{ctx.app_key}"
    chain.append(entity("spark_application", app_qn, {"name": ctx.app_display_name, "appName": ctx.app_key}))
    return Owner(tuple(chain), "spark_application", app_qn, SPARK_PROCESS, "application")


def _job_and_task(
    workspace_qn: str,
    job_id: str,
    job_type: str,
    task_type: str,
    notebook_path: str | None,
    notebook_id: str | None,
    pipeline: AdfPipeline | None,
) -> tuple[JSON, JSON, TaskLookup]:
    """The job and its task as the builder names them, and how to find the job's existing task instead.

    A job is `{workspace}/jobs/{job id}`; a run that Data Factory started (its parent names the pipeline:
    olparser/lineage/adf.py) belongs to `{workspace}/jobs/ADF_{factory}_{pipeline}`, as the accelerator named it
    (Data Factory submits a one-time run, a new job id every time). The events carry no task key (the accelerator
    read it from the Jobs API), so a task is `{job}/tasks/{notebook path}` (a notebook task; else
    `notebook-{id}`, else the job type) unless the job already holds a task that runs the same code: resolution
    (olparser/adapters/catalog/resolver.py) looks for it and links to it (`TaskLookup`, olparser/lineage/link.py)."""
    if pipeline is not None:
        job_key = f"ADF_{pipeline.factory}_{pipeline.pipeline}"
        job_attributes: JSON = {"name": job_key}
    else:
        job_key = job_id
        job_attributes = {"name": f"job {job_id}", "jobId": int(job_id) if job_id.isdigit() else None}
    job_qn = f"{workspace_qn}/jobs/{job_key}"
    job = entity(dbx.JOB, job_qn, job_attributes, {"workspace": object_id(dbx.WORKSPACE, workspace_qn)})
    task_key = (
        notebook_path.strip("/")
        if notebook_path
        else (f"notebook-{notebook_id}" if notebook_id else job_type or "task")
    )
    target_attribute = dbx.TASK_TARGET_ATTRIBUTE.get(task_type)
    target = notebook_path if task_type == dbx.NOTEBOOK_TASK else None
    attributes: JSON = {"name": task_key.rsplit("/", 1)[-1], "jobId": job_attributes.get("jobId")}
    if target_attribute and target:
        attributes[target_attribute] = target
    task = entity(task_type, f"{job_qn}/tasks/{task_key}", attributes, {"job": object_id(dbx.JOB, job_qn)})
    return job, task, TaskLookup(job_qn, task["attributes"]["qualifiedName"], task_type, target_attribute, target)


def _generic_owner(
    job_namespace: str,
    job_name: str,
    ctx: RunContext,
    job_facets: Mapping[str, Any],
    run_facets: Mapping[str, Any],
    producer: str,
) -> Owner | None:
    """A producer the connector has no model of: `openlineage_job` `openlineage://{job namespace}/{job name}` with
    `openlineage_process` processes (relationship `job`), named by the whole job name (only a producer whose naming
    says a job name is composite, such as openlineage-spark's `{application}.{action}`, is split). None for a run of a
    modelled producer: a `jobType` integration the connector models (Spark, Airflow, dbt, Flink), Spark's or
    Databricks' evidence (a producer URI of the Spark integration, Spark run facets, a workspace, Spark properties in
    the environment facet)."""
    integration = producer_job_type(job_facets)[0]
    if integration in MODELLED_INTEGRATIONS or _spark_evidence(ctx, run_facets, producer):
        return None
    name = job_name or ctx.app_key
    job_qn = f"openlineage://{job_namespace}/{name}"
    job = entity(
        OPENLINEAGE_JOB, job_qn, {"name": name, "jobNamespace": job_namespace, "jobName": name, "producer": producer}
    )
    return Owner((job,), OPENLINEAGE_JOB, job_qn, OPENLINEAGE_PROCESS, "job", process_job=name)


SPARK_PRODUCERS = ("/integration/spark", "openlineage-spark", "/integration/databricks")


def _spark_evidence(ctx: RunContext, run_facets: Mapping[str, Any], producer: str) -> bool:
    """Whether the run comes from Spark (openlineage-spark, Databricks, Synapse, Fabric, Glue...)."""
    if ctx.is_databricks or any(marker in producer for marker in SPARK_PRODUCERS):
        return True
    if any(str(name).startswith("spark") for name in run_facets):  # spark_properties, spark_applicationDetails...
        return True
    engine = run_facets.get("processing_engine")
    if isinstance(engine, dict) and str(engine.get("name") or "").lower() == "spark":
        return True
    return any(str(key).startswith("spark.") for key in ctx.environment)


def producer_job_type(job_facets: Mapping[str, Any]) -> tuple[str, str]:
    """(integration, jobType) of the `jobType` job facet (jobType 2-0-x), upper case; "" when not sent."""
    facet = job_facets.get("jobType")
    if not isinstance(facet, dict):
        return "", ""
    return str(facet.get("integration") or "").upper(), str(facet.get("jobType") or "").upper()


def _airflow_owner(job_namespace: str, ctx: RunContext) -> Owner:
    """The Airflow provider names a task's job `{dag_id}.{task_id}` and gives it the DAG run as parent (job name
    `{dag_id}`): the DAG is the job identity's application (`ctx.app_key`), the task what follows it."""
    dag_id = ctx.app_key
    entities = airflow_entities(job_namespace, dag_id, ctx.display_job_name or dag_id)
    return Owner(entities, "airflow_task", entities[1]["attributes"]["qualifiedName"], AIRFLOW_PROCESS, "task")


def airflow_entities(job_namespace: str, dag_id: str, task_id: str) -> tuple[JSON, JSON]:
    """The DAG and the task, as the task's own run writes them and as a run the task orchestrated references them."""
    dag_qn = f"airflow://{job_namespace}/{dag_id}"
    task_qn = f"{dag_qn}/tasks/{task_id}"
    dag = entity("airflow_dag", dag_qn, {"name": dag_id, "dagId": dag_id})
    task = entity(
        "airflow_task", task_qn, {"name": task_id, "taskId": task_id}, {"dag": object_id("airflow_dag", dag_qn)}
    )
    return dag, task


ORCHESTRATED_PROCESS_TYPES = frozenset(
    {SPARK_PROCESS, DATABRICKS_PROCESS, OPENLINEAGE_PROCESS}
)  # typedefs spark.json, databricks.json, openlineage_jobs.json: `orchestrator`, `adfPipeline`


def airflow_orchestrator(orchestration: Orchestration) -> tuple[JSON, JSON] | None:
    """The Airflow DAG and task that ran a run, from its ParentRunFacet alone (no lookup across runs, so the order
    of the runs does not matter): the Airflow provider passes the task as `spark.openlineage.parentJobName`
    (`{dag_id}.{task_id}`) and the DAG as `rootParentJobName` (`{dag_id}`), both in its namespace; openlineage-spark
    names them the application run's `parent` and `root`
    (`SparkApplicationExecutionContext.buildApplicationParentFacet`).
    A parent of that shape (same namespace, named `{root}.{task}`) is an Airflow task; anything else is not taken
    for one. A SQL job's parent is its application, its root the DAG: the task is not in its facet."""
    parent, root = orchestration.parent, orchestration.root
    if parent is None or root is None or parent.namespace != root.namespace:
        return None
    prefix = root.name + "."
    if not parent.name.startswith(prefix) or len(parent.name) == len(prefix):
        return None
    return airflow_entities(parent.namespace, root.name, parent.name[len(prefix) :])


def _dbt_owner(job_namespace: str, ctx: RunContext, run_facets: Mapping[str, Any]) -> Owner:
    """dbt-ol names a node's job after its unique_id (`model.{project}.{name}`), the dbt command's run (job
    `dbt-run-{project}`) its parent, and sends the project in the `dbt_run` run facet (`project_name`)."""
    unique_id = ctx.display_job_name or ctx.app_key
    facet = run_facets.get("dbt_run")
    project = facet.get("project_name") if isinstance(facet, dict) else None
    if not isinstance(project, str) or not project.strip():
        parts = unique_id.split(".")
        project = parts[1] if len(parts) > 2 else ctx.app_key
    project = project.strip()
    project_qn = f"dbt://{job_namespace}/{project}"
    model_qn = f"{project_qn}/{unique_id}"
    project_entity = entity("dbt_project", project_qn, {"name": project, "projectName": project})
    model = entity(
        "dbt_model",
        model_qn,
        {"name": unique_id.rsplit(".", 1)[-1], "uniqueId": unique_id},
        {"project": object_id("dbt_project", project_qn)},
    )
    return Owner((project_entity, model), "dbt_model", model_qn, DBT_PROCESS, "model")


def _flink_owner(job_namespace: str, job_name: str) -> Owner:
    """openlineage-flink sends a job's runs under its job name (`jobType: {integration: FLINK, jobType: JOB}`)."""
    job_qn = f"flink://{job_namespace}/{job_name}"
    job = entity("flink_job", job_qn, {"name": job_name, "jobName": job_name})
    return Owner((job,), "flink_job", job_qn, FLINK_PROCESS, "job")
