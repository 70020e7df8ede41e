"""Which existing task of its job a Databricks job run belongs to. Pure: the builder says what it knows of the task
(`TaskLookup`, olparser/lineage/owners.py), the resolver reads the job and its tasks from the catalog
(olparser/adapters/catalog/resolver.py), `match_task` decides, and `link_plan` (olparser/lineage/link.py) writes the
run under the task found (`TaskMatch`).

The events of a job run carry the job id and what the task runs (the notebook path of a notebook task), never the
task's key, which the accelerator read from the Databricks Jobs API and put in the task's qualifiedName
(`{job}/tasks/{task_key}`). So a job already in the catalog — written by the accelerator, or by an earlier run — is
asked which of its tasks runs the same code, and the run is written under that task rather than beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from olparser.jsontypes import JSON


@dataclass(frozen=True)
class TaskLookup:
    """How to find the task a job run belongs to among its job's existing tasks: `task` is the task as the builder
    names it (`task_type`), kept when the job holds no task that runs the same code — the task whose `attribute`
    (notebookPath, pythonFile...) is `target`, or, when the events do not say what the task runs (`target` None),
    the job's only task of that type."""

    job: str  # the job's qualifiedName
    task: str
    task_type: str
    attribute: str | None
    target: str | None


@dataclass(frozen=True)
class TaskMatch:
    """The job's existing task a run belongs to (`TaskLookup`): its type, qualifiedName and name, and the job's
    name as the catalog holds it (None: the job has none, or the catalog does not hold the job)."""

    type_name: str
    qualified_name: str
    name: str | None
    job_name: str | None = None


def match_task(lookup: TaskLookup, job: JSON | None, tasks: list[JSON]) -> TaskMatch | None:
    """Pure: the task of `tasks` (the job's tasks as the catalog holds them, with their attributes) the run belongs
    to, or None (the builder's own task stands). The builder's own task when the job holds it; else the tasks that
    run the same code, the first by qualifiedName when several do (two tasks of one job running one notebook)."""
    job_name = _text((job or {}).get("attributes", {}).get("name"))
    active = [t for t in tasks if t.get("status", "ACTIVE") == "ACTIVE" and _qualified_name(t)]
    own = next((t for t in active if _qualified_name(t) == lookup.task), None)
    if own is not None:
        return TaskMatch(str(own.get("typeName") or lookup.task_type), lookup.task, _name(own), job_name)
    same_type = [t for t in active if t.get("typeName") == lookup.task_type]
    if lookup.attribute and lookup.target:
        wanted = lookup.target.strip("/")
        runs_it = [t for t in same_type if _attribute(t, lookup.attribute).strip("/") == wanted]
    else:
        runs_it = same_type if len(same_type) == 1 else []
    if not runs_it:
        return None if job_name is None else TaskMatch(lookup.task_type, lookup.task, None, job_name)
    found = min(runs_it, key=_qualified_name)
    return TaskMatch(lookup.task_type, _qualified_name(found), _name(found), job_name)


def _qualified_name(entity: JSON) -> str:
    return _text((entity.get("attributes") or {}).get("qualifiedName")) or ""


def _name(entity: JSON) -> str | None:
    return _text((entity.get("attributes") or {}).get("name"))


def _attribute(entity: JSON, name: str) -> str:
    return _text((entity.get("attributes") or {}).get(name)) or ""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
