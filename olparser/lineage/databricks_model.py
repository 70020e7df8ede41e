"""Purview's built-in Databricks model, as plain data: the types a Purview account ships for Azure Databricks lineage.

Microsoft's C# accelerator (Purview-ADB-Lineage-Solution-Accelerator) defined these types in its release 1.0.0 and
deleted them in commit 706c5bf ("Use Built-In Types and QualifiedNames") because Purview carries them itself; its
later releases write entities of these types. The connector writes Databricks lineage in them as they are:

- `databricks_workspace` (Asset) holds `databricks_notebook`s and `databricks_job`s (compositions
  `databricks_workspace_notebooks`, `databricks_workspace_jobs`);
- `databricks_runnable` (a Process) is what runs code: a `databricks_notebook` (run interactively) or a
  `databricks_job_task` — `databricks_notebook_task`, `_spark_jar_task`, `_python_task`, `_spark_submit_task`,
  `_python_wheel_task` — held by its `databricks_job` (composition `databricks_job_job_tasks`); a notebook task refers
  to its notebook (association `databricks_notebook_notebook_tasks`);
- `databricks_process` (a Process: `sparkPlan`, `columnMapping`) hangs under the runnable that ran it (composition
  `databricks_runnable_processes`: `runnable.processes`, `process.task`).

Where a catalog holds these types (every Purview account), they are used exactly as they are, never updated. Where it
lacks them (Apache Atlas, the embedded catalog before it shipped them), the connector defines them exactly as here,
without its ownership marker: they stay Purview's model. What the connector adds beside them (a Delta Live Tables
pipeline, the run metadata of its processes, references to orchestrators) lives in types of its own
(olparser/lineage/typedefs/databricks.json). `tests/unit/lineage/test_databricks_model.py` compares this module with
the accelerator's 1.0.0 definitions.
"""

from __future__ import annotations

from olparser.jsontypes import JSON

SERVICE_TYPE = "Databricks"

WORKSPACE = "databricks_workspace"
JOB = "databricks_job"
RUNNABLE = "databricks_runnable"
NOTEBOOK = "databricks_notebook"
JOB_TASK = "databricks_job_task"
NOTEBOOK_TASK = "databricks_notebook_task"
SPARK_JAR_TASK = "databricks_spark_jar_task"
PYTHON_TASK = "databricks_python_task"
SPARK_SUBMIT_TASK = "databricks_spark_submit_task"
PYTHON_WHEEL_TASK = "databricks_python_wheel_task"
PROCESS = "databricks_process"
TASK_TYPES = (NOTEBOOK_TASK, SPARK_JAR_TASK, PYTHON_TASK, SPARK_SUBMIT_TASK, PYTHON_WHEEL_TASK)

# relationship defs: (name, category, (end1 type, end1 attribute, container, cardinality), (end2 ...))
WORKSPACE_HIVE_METASTORE = "databricks_workspace_hive_metastore"
WORKSPACE_NOTEBOOKS = "databricks_workspace_notebooks"
WORKSPACE_JOBS = "databricks_workspace_jobs"
JOB_JOB_TASKS = "databricks_job_job_tasks"
NOTEBOOK_NOTEBOOK_TASKS = "databricks_notebook_notebook_tasks"
RUNNABLE_PROCESSES = "databricks_runnable_processes"

# The relationship attributes the connector sends on these types, and the relationship each one names
# (`relationshipType`: an attribute name may belong to several relationship defs).
RELATIONSHIP_OF = {
    (NOTEBOOK, "workspace"): WORKSPACE_NOTEBOOKS,
    (JOB, "workspace"): WORKSPACE_JOBS,
    (JOB_TASK, "job"): JOB_JOB_TASKS,
    (NOTEBOOK_TASK, "notebook"): NOTEBOOK_NOTEBOOK_TASKS,
    (PROCESS, "task"): RUNNABLE_PROCESSES,
}
# The attribute of a job task type that says what it runs: the job's existing task is matched on it
# (olparser/lineage/owners.py), as the accelerator filled it from the Jobs API.
TASK_TARGET_ATTRIBUTE = {
    NOTEBOOK_TASK: "notebookPath",
    PYTHON_TASK: "pythonFile",
    PYTHON_WHEEL_TASK: "wheel",
    SPARK_JAR_TASK: "jar",
}

_DERIVED_FROM_PROCESSES = {"derivedLineageSources": '["processes"]'}


def _attribute(name: str, type_name: str = "string") -> JSON:
    return {
        "name": name,
        "typeName": type_name,
        "isOptional": True,
        "cardinality": "SINGLE",
        "valuesMinCount": 0,
        "valuesMaxCount": 1,
        "isUnique": False,
        "isIndexable": False,
        "includeInNotification": False,
    }


def _entity_def(name: str, super_type: str, attributes: list[JSON], options: JSON | None = None) -> JSON:
    definition: JSON = {
        "category": "ENTITY",
        "name": name,
        "serviceType": SERVICE_TYPE,
        "typeVersion": "1.0",
        "superTypes": [super_type],
        "attributeDefs": attributes,
    }
    if options:
        definition["options"] = dict(options)
    return definition


def _end(type_name: str, name: str, cardinality: str, container: bool) -> JSON:
    return {"type": type_name, "name": name, "isContainer": container, "cardinality": cardinality}


def _relationship_def(name: str, category: str, end1: JSON, end2: JSON) -> JSON:
    return {
        "category": "RELATIONSHIP",
        "name": name,
        "serviceType": SERVICE_TYPE,
        "typeVersion": "1.0",
        "relationshipCategory": category,
        "propagateTags": "NONE",
        "endDef1": end1,
        "endDef2": end2,
    }


def _task_def(name: str, attributes: list[JSON]) -> JSON:
    return _entity_def(name, JOB_TASK, attributes, _DERIVED_FROM_PROCESSES)


def purview_databricks_typedefs() -> dict[str, list[JSON]]:
    """The model as a TypesDef, dependencies first (a fresh copy on each call)."""
    parameters = _attribute("parameters", "array<string>")
    entities = [
        _entity_def(WORKSPACE, "Asset", []),
        _entity_def(JOB, "Asset", [_attribute("jobId", "long"), _attribute("creatorUsersName")]),
        _entity_def(RUNNABLE, "Process", []),
        _entity_def(
            NOTEBOOK,
            RUNNABLE,
            [_attribute("clusterName"), _attribute("user"), _attribute("sparkVersion")],
            _DERIVED_FROM_PROCESSES,
        ),
        _entity_def(
            JOB_TASK, RUNNABLE, [_attribute("jobId", "long"), _attribute("clusterId"), _attribute("sparkVersion")]
        ),
        _task_def(NOTEBOOK_TASK, [_attribute("notebookPath"), _attribute("baseParameters", "map<string,string>")]),
        _task_def(
            SPARK_JAR_TASK,
            [_attribute("mainClassName"), _attribute("jarUri"), _attribute("jar"), dict(parameters)],
        ),
        _task_def(PYTHON_TASK, [_attribute("pythonFile"), dict(parameters)]),
        _task_def(SPARK_SUBMIT_TASK, [dict(parameters)]),
        _task_def(
            PYTHON_WHEEL_TASK,
            [_attribute("packageName"), _attribute("entryPoint"), _attribute("wheel"), dict(parameters)],
        ),
        _entity_def(
            PROCESS,
            "Process",
            [_attribute("sparkPlan"), _attribute("columnMapping")],
            {"defaultRenderedLineage": "task"},
        ),
    ]
    relationships = [
        _relationship_def(
            WORKSPACE_HIVE_METASTORE,
            "ASSOCIATION",
            _end(WORKSPACE, "hive_metastore", "SINGLE", False),
            _end("hive_server", "databricks_workspace", "SINGLE", False),
        ),
        _relationship_def(
            WORKSPACE_NOTEBOOKS,
            "COMPOSITION",
            _end(WORKSPACE, "notebooks", "SET", True),
            _end(NOTEBOOK, "workspace", "SINGLE", False),
        ),
        _relationship_def(
            WORKSPACE_JOBS, "COMPOSITION", _end(WORKSPACE, "jobs", "SET", True), _end(JOB, "workspace", "SINGLE", False)
        ),
        _relationship_def(
            JOB_JOB_TASKS, "COMPOSITION", _end(JOB, "job_tasks", "SET", True), _end(JOB_TASK, "job", "SINGLE", False)
        ),
        _relationship_def(
            NOTEBOOK_NOTEBOOK_TASKS,
            "ASSOCIATION",
            _end(NOTEBOOK, "notebook_tasks", "SET", False),
            _end(NOTEBOOK_TASK, "notebook", "SINGLE", False),
        ),
        _relationship_def(
            RUNNABLE_PROCESSES,
            "COMPOSITION",
            _end(RUNNABLE, "processes", "SET", True),
            _end(PROCESS, "task", "SINGLE", False),
        ),
    ]
    return {"entityDefs": entities, "relationshipDefs": relationships}


def model_type_names() -> frozenset[str]:
    """Every name the model defines (entity and relationship types)."""
    model = purview_databricks_typedefs()
    return frozenset(d["name"] for defs in model.values() for d in defs)
