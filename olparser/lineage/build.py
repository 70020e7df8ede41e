"""From a merged run to a LineagePlan: `build_lineage` (pure) and `should_write_lineage`.

A run without outputs writes nothing, not even its owner: application-level runs and read-only actions
(`display()`, `count()`) are most Spark runs, and each would cost a catalog call for no lineage. Static lineage
(a JobEvent) is written like a COMPLETE run; a DatasetEvent (no job) writes its dataset only.
An application-level run (`jobType.jobType: APPLICATION`) is the parent of its SQL jobs' runs, never a process.
A run that only drops, renames, truncates or alters tables and reads nothing (olparser/lineage/lifecycle.py) is not a
process either: it writes the datasets that still exist (a renamed table under its new name), no owner.

What a run can make the builder write is bounded: inputs × outputs (one process per output, each listing every
input) is at most `max_process_edges` — beyond it the first outputs and inputs (in name order) that fit are written
and the truncation is recorded on every process of the run (`lineageTruncated`) and in the plan's notes.

Each case is a planner of its own (olparser/lineage/planners.py, `PLANNERS`, in order); `build_lineage` runs them.
"""

from __future__ import annotations

from typing import Mapping

from olparser.naming import MappingEngine
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.sql import ParseSql

from .context import run_context
from .datasets import dataset_resolver, naming_resolver
from .edges import Name
from .identity import Orchestration
from .options import LineageOptions
from .plan import LineagePlan
from .planners import LIFECYCLE_ONLY_NOTE, PLANNERS, Draft

__all__ = [  # with the resolvers (datasets.py) and the lifecycle note (planners.py) that callers import from here
    "LIFECYCLE_ONLY_NOTE",
    "awaits_environment",
    "build_lineage",
    "dataset_resolver",
    "naming_resolver",
    "should_write_lineage",
]


def should_write_lineage(run: RunSnapshot, options: LineageOptions) -> bool:
    """Static lineage and COMPLETE runs always; FAIL and ABORT only with `lineage_on_failure`."""
    if run.run_id is None or run.event_type == "COMPLETE":
        return True
    return options.lineage_on_failure and run.event_type in ("FAIL", "ABORT")


def awaits_environment(run: RunSnapshot, options: LineageOptions) -> bool:
    """True for a Databricks run whose `environment-properties` facet (notebook path, job ids, mount points) has not
    arrived: openlineage-spark sends it on RUNNING, which a queue may deliver after the COMPLETE. Written now, the run
    would land under a generic Spark application, with its /mnt paths unresolved."""
    if run.run_id is None:
        return False
    ctx = run_context(run, options)
    return ctx.is_databricks and not ctx.environment


def build_lineage(
    run: RunSnapshot,
    engine: MappingEngine,
    options: LineageOptions,
    *,
    status: str | None = None,
    parse_sql: ParseSql | None = None,
    upstream: Mapping[Name, tuple[DatasetFacts, ...]] | None = None,
    inherited: Orchestration | None = None,
) -> LineagePlan:
    """The Atlas entities for one run: datasets, owner, one process per (job, output), column lineage.

    `status` is the processes' `lastRunStatus` (default: the run's state; the incomplete-runs timer passes
    INCOMPLETE). `parse_sql`, when given, derives the column lineage of outputs that have none from the run's `sql`
    job facet (`sql_columns`). Temporary datasets (`edges.is_temporary`) are never written: a temporary output has
    no process, a temporary input is replaced by `upstream`'s datasets for it (`edges.upstream_inputs`: what its
    writers read; none when unknown). Each process lists the inputs its output derives from (`edges.narrowed`).
    `inherited`: the parent and root its application run passed on (olparser/lineage/inherited.py), which name the
    Airflow task that ran a SQL job when its own facet does not.

    The planners of `PLANNERS` run in order on one draft; the first that settles the plan returns it (the last,
    `assembled`, always does)."""
    draft = Draft(run, engine, options, status, parse_sql, upstream or {}, inherited)
    for planner in PLANNERS:
        plan = planner(draft)
        if plan is not None:
            return plan
    raise AssertionError("the last planner, `assembled`, always returns the plan")
