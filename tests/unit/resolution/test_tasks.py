"""Which of its job's existing tasks a Databricks job run belongs to (olparser/resolution/tasks.py): the builder's own
task when the job holds it, else the task that runs the same code (the accelerator's, named after the Jobs API's task
key), else none (the builder's own form is written)."""

from __future__ import annotations

from olparser.resolution.tasks import TaskLookup, TaskMatch, match_task

JOB = "databricks://adb-1.2.azuredatabricks.net/jobs/881"
OURS = f"{JOB}/tasks/Shared/etl/ingest"
NOTEBOOK_TASK = "databricks_notebook_task"
LOOKUP = TaskLookup(JOB, OURS, NOTEBOOK_TASK, "notebookPath", "/Shared/etl/ingest")


def _task(key: str, type_name: str = NOTEBOOK_TASK, status: str = "ACTIVE", **attributes: str) -> dict:
    return {
        "typeName": type_name,
        "status": status,
        "attributes": {"qualifiedName": f"{JOB}/tasks/{key}", "name": key, **attributes},
    }


JOB_ENTITY = {"typeName": "databricks_job", "attributes": {"qualifiedName": JOB, "name": "Daily sales"}}


def test_the_accelerators_task_running_the_same_notebook_stands_for_the_run():
    tasks = [
        _task("load_customers", notebookPath="/Shared/etl/customers"),
        _task("ingest_orders", notebookPath="/Shared/etl/ingest/"),  # a trailing slash, as the Jobs API may give
    ]
    assert match_task(LOOKUP, JOB_ENTITY, tasks) == TaskMatch(
        NOTEBOOK_TASK, f"{JOB}/tasks/ingest_orders", "ingest_orders", "Daily sales"
    )


def test_the_builders_own_task_once_written_stays_the_task():
    tasks = [_task("Shared/etl/ingest", notebookPath="/Shared/etl/ingest"), _task("other", notebookPath="/x")]
    assert match_task(LOOKUP, JOB_ENTITY, tasks) == TaskMatch(NOTEBOOK_TASK, OURS, "Shared/etl/ingest", "Daily sales")


def test_two_tasks_running_one_notebook_the_first_by_qualified_name():
    tasks = [_task("b_second", notebookPath="/Shared/etl/ingest"), _task("a_first", notebookPath="/Shared/etl/ingest")]
    assert match_task(LOOKUP, JOB_ENTITY, tasks).qualified_name == f"{JOB}/tasks/a_first"


def test_deleted_tasks_and_tasks_of_another_type_do_not_count():
    tasks = [
        _task("gone", status="DELETED", notebookPath="/Shared/etl/ingest"),
        _task("py", type_name="databricks_python_task", pythonFile="/Shared/etl/ingest"),
    ]
    assert match_task(LOOKUP, JOB_ENTITY, tasks) == TaskMatch(NOTEBOOK_TASK, OURS, None, "Daily sales")


def test_a_job_the_catalog_lacks_leaves_the_builders_task():
    assert match_task(LOOKUP, None, []) is None


def test_what_the_events_do_not_say_is_matched_on_the_jobs_only_task_of_that_type():
    python = TaskLookup(JOB, f"{JOB}/tasks/python", "databricks_python_task", "pythonFile", None)
    one = [_task("etl_py", type_name="databricks_python_task", pythonFile="dbfs:/etl.py"), _task("nb")]
    assert match_task(python, JOB_ENTITY, one).qualified_name == f"{JOB}/tasks/etl_py"
    two = [*one, _task("etl2_py", type_name="databricks_python_task", pythonFile="dbfs:/etl2.py")]
    assert match_task(python, JOB_ENTITY, two) == TaskMatch("databricks_python_task", python.task, None, "Daily sales")
