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
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

from olparser.jsontypes import JSON
from olparser.naming import MappingEngine
from olparser.resolution.tasks import TaskLookup
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.sql import ParseSql

from .adf import AdfPipeline, adf_pipeline
from .columns import ColumnLineage, column_lineage
from .context import RunContext, run_context
from .datasets import DatasetResolver, ResolvedDataset
from .edges import Name, is_temporary, is_temporary_name, lineage_facet_names, narrowed, temporary_names
from .entities import assign_guids, entity, key_of, object_id
from .governance import with_governance
from .identity import Orchestration, is_application_run, orchestration
from .inherited import orchestrator_of
from .lifecycle import is_lifecycle_only, kept_outputs
from .metadata import iso_time, system_metadata
from .options import LineageOptions
from .owners import ORCHESTRATED_PROCESS_TYPES, build_owner, producer_job_type
from .plan import COLUMN_TYPE, LineagePlan, UnmatchedDataset
from .processes import build_process
from .sql_columns import SQL_SOURCE, DerivedColumns, derive_column_lineage, has_column_lineage
from .streaming import PER_BATCH_METADATA, stream_run_id, window_start

NO_OUTPUTS = "the run has no outputs: nothing to write"
LIFECYCLE_ONLY_NOTE = "the run only drops, renames, truncates or alters tables: not a process"
APPLICATION_NOTE = "an application-level run (jobType APPLICATION): the parent of its jobs' runs, not a process"
COLUMN_LINEAGE_FACET = "facet"


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


def dataset_resolver(
    run: RunSnapshot, engine: MappingEngine, options: LineageOptions, ctx: RunContext | None = None
) -> DatasetResolver:
    """How the datasets of `run` are named: the rules with the run's mount points, workspace host and Unity Catalog
    metastore (`qn-tester --event` names an event's datasets with it, as the builder does)."""
    ctx = ctx or run_context(run, options)
    return naming_resolver(
        engine, options, mount_points=ctx.mount_points, workspace_host=ctx.workspace_host, workspace_id=ctx.workspace_id
    )


def naming_resolver(
    engine: MappingEngine,
    options: LineageOptions,
    *,
    mount_points: Any = None,
    workspace_host: str | None = None,
    workspace_id: str | None = None,
    metastore: str | None = None,
) -> DatasetResolver:
    """How a dataset is named for a run with these settings: `mount_points` as the environment facet lists them, the
    workspace's host and id, its Unity Catalog metastore from DATABRICKS_METASTORE_IDS (`options`) unless `metastore`
    is given. The builder's (through `dataset_resolver`) and `qn-tester`'s one way of naming a dataset."""
    found = metastore or options.metastore_for(workspace_id, workspace_host)
    return DatasetResolver(engine, engine.mount_memo.read(mount_points), workspace_host, options, metastore_id=found)


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
    Airflow task that ran a SQL job when its own facet does not."""
    if is_application_run(run.job_facets):
        return LineagePlan(notes=(APPLICATION_NOTE,))
    temporary = temporary_names(run)
    if temporary:
        run = _without_temporary(run, upstream or {})
    lifecycle_only = is_lifecycle_only(run)
    if lifecycle_only:  # its datasets that still exist, no process (olparser/lineage/lifecycle.py)
        run = replace(run, outputs=kept_outputs(run))
    if not run.outputs:
        notes = (LIFECYCLE_ONLY_NOTE if lifecycle_only else NO_OUTPUTS,)
        if run.job_name and producer_job_type(run.job_facets) == ("AIRFLOW", "TASK"):
            # a task that only triggers other work (a Databricks job) reports no datasets: no process, but the
            # task and its DAG, which the runs it triggered reference (owners.airflow_orchestrator)
            owner = build_owner(
                run.job_namespace, run_context(run, options), run.job_facets, run.run_facets, run.job_name
            )
            return LineagePlan(entities=tuple(assign_guids([owner.entities])), notes=notes)
        return LineagePlan(notes=notes)
    derived = derive_column_lineage(run, parse_sql) if parse_sql is not None else None
    ctx = run_context(run, options)
    resolver = dataset_resolver(run, engine, options, ctx)
    run_inputs, run_outputs, truncation = _within_edge_limit(run, options.max_process_edges)
    inputs = [resolver.resolve(facts) for facts in run_inputs]
    outputs = [resolver.resolve(facts) for facts in run_outputs]
    by_location = {
        (facts.namespace, facts.name): resolved
        for facts, resolved in zip((*run_inputs, *run_outputs), (*inputs, *outputs), strict=True)
    }

    def resolve_field_dataset(namespace: str, name: str) -> ResolvedDataset:
        return by_location.get((namespace, name)) or resolver.resolve_name(namespace, name)

    def skip(namespace: str, name: str) -> bool:
        return is_temporary_name(namespace) or (namespace, name) in temporary

    datasets = [*inputs, *outputs]
    processes: list[JSON] = []
    owner_entities: tuple[JSON, ...] = ()
    governance_notes: tuple[str, ...] = ()
    pipeline: AdfPipeline | None = None
    task: TaskLookup | None = None
    if run.job_name and not lifecycle_only:
        owner = build_owner(run.job_namespace, ctx, run.job_facets, run.run_facets, run.job_name, run.producer)
        owner_entities, task = owner.entities, owner.task_lookup
        orchestrator = None
        run_by = orchestration(run.job_name, run.run_facets)  # once per run: the summary shows it too
        if owner.process_type in ORCHESTRATED_PROCESS_TYPES:
            airflow = orchestrator_of(run_by, inherited)
            if airflow is not None:  # the connector's own types: written as placeholders, the task's run fills in
                owner_entities = (*airflow, *owner_entities)
                orchestrator = object_id("airflow_task", airflow[1]["attributes"]["qualifiedName"])
            else:  # Microsoft's type: resolved like a dataset, referenced only when scanned (link.link_plan)
                pipeline = adf_pipeline(run_by)
        summary = system_metadata(run, ctx, run_by)
        window = window_start(run, options)
        last_run = None
        if window is not None:  # a micro-batch writes its window's plan: unchanged batches cost no catalog write
            last_run = (stream_run_id(run, options) or "", iso_time(window))
            summary = {k: v for k, v in summary.items() if k not in PER_BATCH_METADATA}
        lineages, declared = [], []
        several = len(outputs) > 1  # one output: every input is its own (what it declares, or named by none)
        for facts, output in zip(run_outputs, outputs, strict=True):
            facet, source = _column_lineage_facet(facts, derived)
            lineage = column_lineage(facet, output, resolve_field_dataset, skip if temporary else None)
            if lineage is not None:
                datasets.extend(lineage.sources)
            lineages.append((lineage, source))
            if several:
                declared.append(_declared_keys(facts, run, lineage, upstream or {}, resolve_field_dataset, skip))
        each_inputs = narrowed(inputs, declared) if several else [inputs] * len(outputs)
        for output, (lineage, source), output_inputs in zip(outputs, lineages, each_inputs, strict=True):
            processes.append(
                build_process(
                    run,
                    ctx,
                    owner,
                    output,
                    output_inputs,
                    lineage,
                    status=status or run.event_type,
                    truncation=truncation,
                    max_inputs=max(len(inputs), 1) if truncation else None,
                    lineage_source=source,
                    summary=summary,
                    last_run=last_run,
                    orchestrator=orchestrator,
                )
            )
        processes, owner_entities, governance_notes = with_governance(
            processes,
            owner_entities,
            (owner.type_name, owner.qualified_name),
            run.job_facets,
            dict(options.owner_contacts),
        )
    unique = _unique_datasets(datasets)
    in_order = [unique[key] for key in sorted(unique)]
    owned = [d for d in in_order if d.owned]
    external = [d for d in in_order if not d.owned]
    ordered = assign_guids(
        [
            [_dataset_entity(d) for d in external],
            owner_entities,
            [_dataset_entity(d) for d in owned],
            sorted((c for d in owned for c in _column_entities(d)), key=key_of),
            sorted(processes, key=key_of),
        ]
    )
    # the external datasets come first, each once (their keys are distinct), and no later entity has their key
    return LineagePlan(
        entities=tuple(ordered[len(external) :]),
        external_datasets=tuple(ordered[: len(external)]),
        unmatched=tuple(
            sorted(
                {
                    UnmatchedDataset(d.namespace, d.name, d.unmatched_reason)
                    for d in unique.values()
                    if d.unmatched_reason
                },
                key=lambda u: (u.namespace, u.name, u.reason),
            )
        ),
        notes=_notes(ctx)
        + governance_notes
        + ((LIFECYCLE_ONLY_NOTE,) if lifecycle_only else ())
        + ((truncation,) if truncation else ())
        + ((derived.note,) if derived and derived.note else ()),
        datasets=tuple(d.named(resolver.metastore_id) for d in in_order),
        pipeline=pipeline,
        task=task,
    )


def _without_temporary(run: RunSnapshot, upstream: Mapping[Name, tuple[DatasetFacts, ...]]) -> RunSnapshot:
    """The run without its temporary datasets: temporary outputs dropped, each temporary input replaced by the
    datasets `upstream` gives it (each dataset once, the run's own first; name order, as the merger keeps them)."""
    inputs = {(d.namespace, d.name): d for d in run.inputs if not is_temporary(d)}
    for facts in run.inputs:
        if is_temporary(facts):
            for source in upstream.get((facts.namespace, facts.name), ()):
                inputs.setdefault((source.namespace, source.name), source)
    return replace(
        run,
        inputs=tuple(inputs[key] for key in sorted(inputs)),
        outputs=tuple(d for d in run.outputs if not is_temporary(d)),
    )


def _declared_keys(
    facts: DatasetFacts,
    run: RunSnapshot,
    lineage: ColumnLineage | None,
    upstream: Mapping[Name, tuple[DatasetFacts, ...]],
    resolve: Callable[[str, str], ResolvedDataset],
    skip: Callable[[str, str], bool],
) -> frozenset[tuple[str, str]] | None:
    """The (type, qualifiedName) of the datasets an output says it derives from: its column lineage's sources (the
    temporary ones it names by what they pass on), and what the `lineage` facets name; None when nothing is said."""
    named = lineage_facet_names(facts, run.job_facets)
    if (lineage is None or not (lineage.sources or lineage.skipped)) and named is None:
        return None
    keys = {d.key for d in lineage.sources} if lineage is not None else set()
    temporary = set(lineage.skipped) if lineage is not None else set()
    for namespace, name in named or ():
        if skip(namespace, name):
            temporary.add((namespace, name))
        else:
            keys.add(resolve(namespace, name).key)
    for temporary_name in temporary:
        keys.update(resolve(d.namespace, d.name).key for d in upstream.get(temporary_name, ()))
    return frozenset(keys)


def _column_lineage_facet(facts: DatasetFacts, derived: DerivedColumns | None) -> tuple[object, str]:
    """The output's `columnLineage` facet and where it came from: `facet` (the producer's), `sql` (derived from the
    run's SQL because the producer sent none), or "" (none)."""
    facet = facts.facets.get("columnLineage")
    if has_column_lineage(facet):
        return facet, COLUMN_LINEAGE_FACET
    found = derived.facets.get((facts.namespace, facts.name)) if derived else None
    return (found, SQL_SOURCE) if found else (facet, "")


def _within_edge_limit(
    run: RunSnapshot, max_edges: int
) -> tuple[tuple[DatasetFacts, ...], tuple[DatasetFacts, ...], str]:
    """The run's inputs and outputs cut so that inputs × outputs stays within `max_edges` (name order kept), and
    what was cut, as a sentence ("" when nothing was)."""
    inputs, outputs = run.inputs, run.outputs
    notes = []
    if run.truncated:
        notes.append(
            f"more than {run.truncated} inputs or outputs were sent; the first {run.truncated} of each "
            "(in name order) are kept (MAX_DATASETS_PER_RUN)"
        )
    if len(inputs) * len(outputs) > max_edges:
        kept_inputs = inputs[:max_edges]
        kept_outputs = outputs[: max(1, max_edges // max(1, len(kept_inputs)))]
        notes.append(
            f"{len(kept_outputs)} of {len(outputs)} outputs and {len(kept_inputs)} of {len(inputs)} inputs "
            f"are written: inputs × outputs is limited to {max_edges} per run (MAX_PROCESS_EDGES_PER_RUN)"
        )
        inputs, outputs = kept_inputs, kept_outputs
    return inputs, outputs, "; ".join(notes)


def _unique_datasets(datasets: list[ResolvedDataset]) -> dict[tuple[str, str], ResolvedDataset]:
    """One dataset per (type, qualifiedName): the first of the most informed (with columns, then a location)."""
    unique: dict[tuple[str, str], ResolvedDataset] = {}
    for dataset in datasets:
        known = unique.get(dataset.key)
        if known is None or (known is not dataset and _informed(dataset) > _informed(known)):
            unique[dataset.key] = dataset
    return unique


def _informed(dataset: ResolvedDataset) -> tuple[bool, bool]:
    return bool(dataset.columns), bool(dataset.location or dataset.table)


def _dataset_entity(dataset: ResolvedDataset) -> JSON:
    if not dataset.owned:
        return entity(dataset.type_name, dataset.qualified_name, {"name": dataset.display_name})
    return entity(
        dataset.type_name,
        dataset.qualified_name,
        {
            "name": dataset.display_name,
            "openlineageNamespace": dataset.namespace,
            "openlineageName": dataset.name,
            "storageLocation": dataset.location or "",
        },
    )


def _column_entities(dataset: ResolvedDataset) -> list[JSON]:
    return [
        entity(
            COLUMN_TYPE,
            f"{dataset.qualified_name}#{column.name}",
            {
                "name": column.name,
                "dataType": column.data_type or "",
                "description": column.description or "",
                "position": position,
            },
            {"dataset": object_id(*dataset.key)},
        )
        for position, column in enumerate(dataset.columns)
    ]


def _notes(ctx: RunContext) -> tuple[str, ...]:
    if ctx.is_databricks and not ctx.workspace_host:
        return (
            "Databricks run without a workspace host: recorded as a Spark application. Set "
            "spark.openlineage.namespace to <workspace id>.<shard>#<cluster id>, or map the workspace id in "
            "DATABRICKS_WORKSPACE_HOSTS.",
        )
    return ()
