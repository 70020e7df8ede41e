"""The orchestrator a SQL job inherits from its Spark application run (issue 35). Pure: plain data in and out.

openlineage-spark makes the application run (jobType APPLICATION) the parent of every SQL job's run
(`SparkSQLExecutionContext.buildApplicationParentFacet`: parent = the application run, root = the
`spark.openlineage.rootParentJob*` settings, else the `parentJob*` ones, else the application), and gives the
application run itself the parent and root it was handed (`SparkApplicationExecutionContext.buildApplicationParentFacet`:
parent = `spark.openlineage.parentJob*`, root = `rootParentJob*`). When Airflow ran the Databricks job, its provider
hands over the task (`{dag_id}.{task_id}`) as parent and the DAG (`{dag_id}`) as root: a SQL job's facet names its
application and the DAG, never the task, which only the application run's facet names.

So the task is found across runs, through what a run passes on to the runs it parents — the channel temporary
datasets use (olparser/lineage/edges.py; the run-state stores' `record_temporary` / `temporary_sources` live, the
reduced facts on Spark): the application run passes on its parent and root (`passed_orchestration`) under a name no
dataset has (`CHANNEL`), in the scope of its own run id; a SQL job whose parent is another run and whose root is a
third one (something ran its application: `inheriting_scope`) looks them up in the scope of its parent run id. Either
may come first: a SQL job written before its application's parent arrived is written again when it does (as a reader
of a temporary dataset is). A run that names an Airflow task in its own facet needs no lookup, and a plain Spark
application (its SQL jobs' root is the application itself) costs none.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from olparser.runs.model import RunSnapshot

from .identity import JobRef, Orchestration, is_application_run, orchestration
from .owners import airflow_orchestrator

Name = tuple[str, str]
CHANNEL: Name = ("ol2purview:orchestration", "application-parent")  # never a dataset: no namespace has this scheme


def passed_orchestration(run: RunSnapshot) -> tuple[str, bytes] | None:
    """(scope, what it passes on) for an application run whose parent facet names an Airflow task (`{root}.{task}`
    under the root `{root}`: `owners.airflow_orchestrator`): its parent and root, in the scope of its own run id;
    None for any other run."""
    if run.run_id is None or not is_application_run(run.job_facets):
        return None
    found = orchestration(run.job_name, run.run_facets)
    if airflow_orchestrator(found) is None:
        return None
    assert found.parent is not None and found.root is not None  # airflow_orchestrator needs both
    return run.run_id, orchestration_to_bytes(found)


def inheriting_scope(run: RunSnapshot) -> str | None:
    """The scope (its parent's run id) in which a run looks up the orchestrator its parent passes on: a run with
    outputs (the only ones that write a process), not an application run, whose own facet names no Airflow task, whose
    parent and root are two different runs (something ran its application). None: no lookup."""
    if not run.outputs or not run.job_name or is_application_run(run.job_facets):
        return None
    found = orchestration(run.job_name, run.run_facets)
    parent, root = found.parent, found.root
    if parent is None or root is None or not parent.run_id or parent.run_id == root.run_id:
        return None
    if airflow_orchestrator(found) is not None:
        return None
    return parent.run_id


def inherited_orchestration(passed: Iterable[bytes]) -> Orchestration | None:
    """What the parent run passed on (at most one writer: the parent run itself), as an Orchestration; None when
    nothing readable was passed on."""
    for data in passed:
        found = orchestration_from_bytes(data)
        if found is not None:
            return found
    return None


def orchestrator_of(run_by: Orchestration, inherited: Orchestration | None) -> tuple[Any, Any] | None:
    """The Airflow DAG and task that ran a run whose own parent and root are `run_by` (`identity.orchestration`):
    from its own facet, else from what its application passed on."""
    own = airflow_orchestrator(run_by)
    if own is not None or inherited is None:
        return own
    return airflow_orchestrator(inherited)


def orchestration_to_bytes(found: Orchestration) -> bytes:
    """The parent and root as compact JSON (`[[namespace, name, runId], [...]]`)."""
    refs = [[ref.namespace, ref.name, ref.run_id] if ref is not None else None for ref in (found.parent, found.root)]
    return json.dumps(refs, separators=(",", ":")).encode("utf-8")


def orchestration_from_bytes(data: bytes) -> Orchestration | None:
    """`orchestration_to_bytes` read back; None for anything else."""
    try:
        refs = json.loads(bytes(data).decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(refs, list) or len(refs) != 2:
        return None
    parent, root = (_ref(value) for value in refs)
    return Orchestration(parent, root, None) if parent is not None and root is not None else None


def lookup_passed(temporary: Mapping[tuple[str, str, str], list[bytes]], scope: str) -> Orchestration | None:
    """The orchestration passed on in `scope`, from the reduced facts of every run (the Spark paths)."""
    return inherited_orchestration(temporary.get((scope, *CHANNEL), ()))


def _ref(value: Any) -> JobRef | None:
    if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)) or not value[1]:
        return None
    return JobRef(*value)
