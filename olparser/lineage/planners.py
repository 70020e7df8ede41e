"""The planners `build_lineage` runs, one per case, in the order of `PLANNERS`: pure functions over one `Draft`.

A planner reads what the planners before it found in the draft and records what it finds; it returns the run's
`LineagePlan` when it settles it (an application run, a run left without outputs), None to go on. The last planner,
`assembled`, always returns the plan. Each case has its own planner, so a case is read, tested and changed in one
place (tests/unit/lineage/test_planners.py), and the order of the cases is this list:

1. `application_runs`: an application-level run is the parent of its jobs' runs, never a process: notes only.
2. `temporary_datasets`: temporary outputs are dropped, a temporary input is replaced by what its writers read.
3. `lifecycle_only`: a run that only drops, renames, truncates or alters tables writes the datasets that still exist.
4. `runs_without_outputs`: nothing to write but notes; an Airflow task that only triggers other work writes its owner.
5. `sql_column_lineage`: the column lineage of outputs without any, from the run's `sql` job facet.
6. `edge_limit`: inputs × outputs bounded by `max_process_edges`, the cut recorded.
7. `named_datasets`: the run's context, and its inputs and outputs named through the rules.
8. `owner`: who runs the code (olparser/lineage/owners.py), and what the run's processes say of the run.
9. `orchestrator`: the Airflow task that ran it (written as placeholders), else the Data Factory pipeline.
10. `streaming_window`: a micro-batch writes its window's plan.
11. `column_lineages`: each output's column lineage, whose source datasets are written too.
12. `several_outputs`: each of several outputs lists only the inputs it derives from.
13. `processes`: one process per output.
14. `governance`: contacts, description and labels, the 2 MB guard.
15. `assembled`: the datasets (each once, the most informed), owner, columns and processes in their order, guids.

Planners 8 to 14 write nothing for a run without a job name or a lifecycle-only run (`Draft.owner` stays None).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

from olparser.jsontypes import JSON
from olparser.naming import MappingEngine
from olparser.resolution.tasks import TaskLookup
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.sql import ParseSql

from .adf import AdfPipeline, adf_pipeline
from .columns import ColumnLineage, column_lineage
from .context import RunContext, run_context
from .datasets import DatasetResolver, ResolvedDataset, dataset_resolver
from .edges import Name, is_temporary, is_temporary_name, lineage_facet_names, narrowed, temporary_names
from .entities import assign_guids, entity, key_of, object_id
from .governance import with_governance
from .identity import Orchestration, is_application_run, orchestration
from .inherited import orchestrator_of
from .lifecycle import is_lifecycle_only, kept_outputs
from .metadata import iso_time, system_metadata
from .options import LineageOptions
from .owners import ORCHESTRATED_PROCESS_TYPES, Owner, build_owner, producer_job_type
from .plan import COLUMN_TYPE, LineagePlan, UnmatchedDataset
from .processes import build_process
from .sql_columns import SQL_SOURCE, DerivedColumns, derive_column_lineage, has_column_lineage
from .streaming import PER_BATCH_METADATA, stream_run_id, window_start

NO_OUTPUTS = "the run has no outputs: nothing to write"
LIFECYCLE_ONLY_NOTE = "the run only drops, renames, truncates or alters tables: not a process"
APPLICATION_NOTE = "an application-level run (jobType APPLICATION): the parent of its jobs' runs, not a process"
COLUMN_LINEAGE_FACET = "facet"
NO_HOST_NOTE = (
    "Databricks run without a workspace host: recorded as a Spark application. Set "
    "spark.openlineage.namespace to <workspace id>.<shard>#<cluster id>, or map the workspace id in "
    "DATABRICKS_WORKSPACE_HOSTS."
)


@dataclass(frozen=True)
class NamedRun:
    """The run's context and datasets as `named_datasets` finds them: `inputs` and `outputs` named in the order of
    `run_inputs` and `run_outputs` (the run's, cut by `edge_limit`), `by_location` each by its (namespace, name)."""

    ctx: RunContext
    resolver: DatasetResolver
    inputs: list[ResolvedDataset]
    outputs: list[ResolvedDataset]
    by_location: dict[Name, ResolvedDataset]


@dataclass(slots=True)
class Draft:
    """One run's plan while the planners build it: `build_lineage`'s arguments, then what each planner finds."""

    run: RunSnapshot
    engine: MappingEngine
    options: LineageOptions
    status: str | None = None
    parse_sql: ParseSql | None = None
    upstream: Mapping[Name, tuple[DatasetFacts, ...]] = field(default_factory=dict)
    inherited: Orchestration | None = None
    temporary: frozenset[Name] = frozenset()  # temporary_datasets
    lifecycle_only: bool = False  # lifecycle_only
    derived: DerivedColumns | None = None  # sql_column_lineage
    run_inputs: tuple[DatasetFacts, ...] = ()  # edge_limit
    run_outputs: tuple[DatasetFacts, ...] = ()
    truncation: str = ""
    named: NamedRun | None = None  # named_datasets
    datasets: list[ResolvedDataset] = field(default_factory=list)  # every dataset to write (repeats allowed)
    owner: Owner | None = None  # owner
    owner_entities: tuple[JSON, ...] = ()
    task: TaskLookup | None = None
    run_by: Orchestration | None = None
    summary: JSON | None = None
    orchestrator: JSON | None = None  # orchestrator
    pipeline: AdfPipeline | None = None
    last_run: tuple[str, str] | None = None  # streaming_window
    lineages: list[tuple[ColumnLineage | None, str]] = field(default_factory=list)  # column_lineage: (lineage, source)
    output_inputs: list[list[ResolvedDataset]] = field(default_factory=list)  # several_outputs
    processes: list[JSON] = field(default_factory=list)  # processes
    governance_notes: tuple[str, ...] = ()  # governance

    @property
    def names(self) -> NamedRun:
        """What `named_datasets` found (the planners after it read it)."""
        if self.named is None:
            raise RuntimeError("the run's datasets are named by `named_datasets`, a planner that has not run")
        return self.named

    def resolve_field_dataset(self, namespace: str, name: str) -> ResolvedDataset:
        """A dataset a column lineage names: the run's own when it is one, else named now."""
        return self.names.by_location.get((namespace, name)) or self.names.resolver.resolve_name(namespace, name)

    def skip(self, namespace: str, name: str) -> bool:
        """True for a temporary dataset (no column of it is written)."""
        return is_temporary_name(namespace) or (namespace, name) in self.temporary


Planner = Callable[[Draft], "LineagePlan | None"]


def application_runs(draft: Draft) -> LineagePlan | None:
    if is_application_run(draft.run.job_facets):
        return LineagePlan(notes=(APPLICATION_NOTE,))
    return None


def temporary_datasets(draft: Draft) -> LineagePlan | None:
    """The run without its temporary datasets: temporary outputs dropped, each temporary input replaced by the
    datasets `upstream` gives it (each dataset once, the run's own first; name order, as the merger keeps them)."""
    draft.temporary = temporary = temporary_names(draft.run)
    if temporary:
        run = draft.run
        inputs = {(d.namespace, d.name): d for d in run.inputs if not is_temporary(d)}
        for facts in run.inputs:
            if is_temporary(facts):
                for source in draft.upstream.get((facts.namespace, facts.name), ()):
                    inputs.setdefault((source.namespace, source.name), source)
        draft.run = replace(
            run,
            inputs=tuple(inputs[key] for key in sorted(inputs)),
            outputs=tuple(d for d in run.outputs if not is_temporary(d)),
        )
    return None


def lifecycle_only(draft: Draft) -> LineagePlan | None:
    """Its datasets that still exist, no process (olparser/lineage/lifecycle.py)."""
    draft.lifecycle_only = is_lifecycle_only(draft.run)
    if draft.lifecycle_only:
        draft.run = replace(draft.run, outputs=kept_outputs(draft.run))
    return None


def runs_without_outputs(draft: Draft) -> LineagePlan | None:
    """Notes only; a task that only triggers other work (a Databricks job) reports no datasets: no process, but the
    task and its DAG, which the runs it triggered reference (owners.airflow_orchestrator)."""
    run = draft.run
    if run.outputs:
        return None
    notes = (LIFECYCLE_ONLY_NOTE if draft.lifecycle_only else NO_OUTPUTS,)
    if run.job_name and producer_job_type(run.job_facets) == ("AIRFLOW", "TASK"):
        ctx = run_context(run, draft.options)
        found = build_owner(run.job_namespace, ctx, run.job_facets, run.run_facets, run.job_name)
        return LineagePlan(entities=tuple(assign_guids([found.entities])), notes=notes)
    return LineagePlan(notes=notes)


def sql_column_lineage(draft: Draft) -> LineagePlan | None:
    if draft.parse_sql is not None:
        draft.derived = derive_column_lineage(draft.run, draft.parse_sql)
    return None


def edge_limit(draft: Draft) -> LineagePlan | None:
    """The run's inputs and outputs cut so that inputs × outputs stays within `max_process_edges` (name order kept),
    and what was cut, as a sentence ("" when nothing was)."""
    run, max_edges = draft.run, draft.options.max_process_edges
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
    draft.run_inputs, draft.run_outputs, draft.truncation = inputs, outputs, "; ".join(notes)
    return None


def named_datasets(draft: Draft) -> LineagePlan | None:
    ctx = run_context(draft.run, draft.options)
    resolver = dataset_resolver(draft.run, draft.engine, draft.options, ctx)
    inputs = [resolver.resolve(facts) for facts in draft.run_inputs]
    outputs = [resolver.resolve(facts) for facts in draft.run_outputs]
    by_location = {
        (facts.namespace, facts.name): resolved
        for facts, resolved in zip((*draft.run_inputs, *draft.run_outputs), (*inputs, *outputs), strict=True)
    }
    draft.named = NamedRun(ctx, resolver, inputs, outputs, by_location)
    draft.datasets = [*inputs, *outputs]
    return None


def owner(draft: Draft) -> LineagePlan | None:
    run = draft.run
    if not run.job_name or draft.lifecycle_only:
        return None
    ctx = draft.names.ctx
    found = build_owner(run.job_namespace, ctx, run.job_facets, run.run_facets, run.job_name, run.producer)
    draft.owner, draft.owner_entities, draft.task = found, found.entities, found.task_lookup
    draft.run_by = orchestration(run.job_name, run.run_facets)  # once per run: the summary shows it too
    draft.summary = system_metadata(run, ctx, draft.run_by)
    return None


def orchestrator(draft: Draft) -> LineagePlan | None:
    """The connector's own Airflow types are written as placeholders (the task's run fills them in); Microsoft's
    Data Factory pipeline is resolved like a dataset, referenced only when scanned (link.link_plan)."""
    if draft.owner is None or draft.owner.process_type not in ORCHESTRATED_PROCESS_TYPES:
        return None
    assert draft.run_by is not None  # set with the owner
    airflow = orchestrator_of(draft.run_by, draft.inherited)
    if airflow is not None:
        draft.owner_entities = (*airflow, *draft.owner_entities)
        draft.orchestrator = object_id("airflow_task", airflow[1]["attributes"]["qualifiedName"])
    else:
        draft.pipeline = adf_pipeline(draft.run_by)
    return None


def streaming_window(draft: Draft) -> LineagePlan | None:
    """A micro-batch writes its window's plan: unchanged batches cost no catalog write (olparser/lineage/streaming.py)."""
    if draft.owner is None:
        return None
    window = window_start(draft.run, draft.options)
    if window is not None:
        draft.last_run = (stream_run_id(draft.run, draft.options) or "", iso_time(window))
        draft.summary = {k: v for k, v in (draft.summary or {}).items() if k not in PER_BATCH_METADATA}
    return None


def column_lineage_of(facts: DatasetFacts, derived: DerivedColumns | None) -> tuple[object, str]:
    """The output's `columnLineage` facet and where it came from: `facet` (the producer's), `sql` (derived from the
    run's SQL because the producer sent none), or "" (none)."""
    facet = facts.facets.get("columnLineage")
    if has_column_lineage(facet):
        return facet, COLUMN_LINEAGE_FACET
    found = derived.facets.get((facts.namespace, facts.name)) if derived else None
    return (found, SQL_SOURCE) if found else (facet, "")


def column_lineages(draft: Draft) -> LineagePlan | None:
    """Each output's column lineage (temporary sources left out) and where it came from; its sources are written."""
    if draft.owner is None:
        return None
    skip = draft.skip if draft.temporary else None
    for facts, output in zip(draft.run_outputs, draft.names.outputs, strict=True):
        facet, source = column_lineage_of(facts, draft.derived)
        lineage = column_lineage(facet, output, draft.resolve_field_dataset, skip)
        if lineage is not None:
            draft.datasets.extend(lineage.sources)
        draft.lineages.append((lineage, source))
    return None


def several_outputs(draft: Draft) -> LineagePlan | None:
    """One output: every input is its own. Several: each lists the inputs it declares (column lineage, `lineage`
    facets) and those no output declares (`edges.narrowed`)."""
    if draft.owner is None:
        return None
    inputs, outputs = draft.names.inputs, draft.names.outputs
    if len(outputs) <= 1:
        draft.output_inputs = [inputs] * len(outputs)
        return None
    declared = [
        declared_keys(facts, draft, lineage)
        for facts, (lineage, _) in zip(draft.run_outputs, draft.lineages, strict=True)
    ]
    draft.output_inputs = narrowed(inputs, declared)
    return None


def declared_keys(
    facts: DatasetFacts, draft: Draft, lineage: ColumnLineage | None
) -> frozenset[tuple[str, str]] | None:
    """The (type, qualifiedName) of the datasets an output says it derives from: its column lineage's sources (the
    temporary ones it names by what they pass on), and what the `lineage` facets name; None when nothing is said."""
    named = lineage_facet_names(facts, draft.run.job_facets)
    if (lineage is None or not (lineage.sources or lineage.skipped)) and named is None:
        return None
    keys = {d.key for d in lineage.sources} if lineage is not None else set()
    temporary = set(lineage.skipped) if lineage is not None else set()
    for namespace, name in named or ():
        if draft.skip(namespace, name):
            temporary.add((namespace, name))
        else:
            keys.add(draft.resolve_field_dataset(namespace, name).key)
    for temporary_name in temporary:
        keys.update(
            draft.resolve_field_dataset(d.namespace, d.name).key for d in draft.upstream.get(temporary_name, ())
        )
    return frozenset(keys)


def processes(draft: Draft) -> LineagePlan | None:
    if draft.owner is None:
        return None
    names, truncation = draft.names, draft.truncation
    for output, (lineage, source), output_inputs in zip(
        names.outputs, draft.lineages, draft.output_inputs, strict=True
    ):
        draft.processes.append(
            build_process(
                draft.run,
                names.ctx,
                draft.owner,
                output,
                output_inputs,
                lineage,
                status=draft.status or draft.run.event_type,
                truncation=truncation,
                max_inputs=max(len(names.inputs), 1) if truncation else None,
                lineage_source=source,
                summary=draft.summary,
                last_run=draft.last_run,
                orchestrator=draft.orchestrator,
            )
        )
    return None


def governance(draft: Draft) -> LineagePlan | None:
    if draft.owner is None:
        return None
    draft.processes, draft.owner_entities, draft.governance_notes = with_governance(
        draft.processes,
        draft.owner_entities,
        (draft.owner.type_name, draft.owner.qualified_name),
        draft.run.job_facets,
        dict(draft.options.owner_contacts),
    )
    return None


def assembled(draft: Draft) -> LineagePlan:
    """The plan: external datasets first, each once (their keys are distinct, and no later entity has their key),
    then the owner, the connector's datasets, their columns and the processes; the notes in a fixed order."""
    unique = unique_datasets(draft.datasets)
    in_order = [unique[key] for key in sorted(unique)]
    owned = [d for d in in_order if d.owned]
    external = [d for d in in_order if not d.owned]
    ordered = assign_guids(
        [
            [dataset_entity(d) for d in external],
            draft.owner_entities,
            [dataset_entity(d) for d in owned],
            sorted((c for d in owned for c in column_entities(d)), key=key_of),
            sorted(draft.processes, key=key_of),
        ]
    )
    names, derived = draft.names, draft.derived
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
        notes=((NO_HOST_NOTE,) if names.ctx.is_databricks and not names.ctx.workspace_host else ())
        + draft.governance_notes
        + ((LIFECYCLE_ONLY_NOTE,) if draft.lifecycle_only else ())
        + ((draft.truncation,) if draft.truncation else ())
        + ((derived.note,) if derived and derived.note else ()),
        datasets=tuple(d.named(names.resolver.metastore_id) for d in in_order),
        pipeline=draft.pipeline,
        task=draft.task,
    )


# The cases in their order (the module docstring says what each does); `assembled` comes last and always answers.
PLANNERS: tuple[Planner, ...] = (
    application_runs,
    temporary_datasets,
    lifecycle_only,
    runs_without_outputs,
    sql_column_lineage,
    edge_limit,
    named_datasets,
    owner,
    orchestrator,
    streaming_window,
    column_lineages,
    several_outputs,
    processes,
    governance,
    assembled,
)


def unique_datasets(datasets: list[ResolvedDataset]) -> dict[tuple[str, str], ResolvedDataset]:
    """One dataset per (type, qualifiedName): the first of the most informed (with columns, then a location)."""
    unique: dict[tuple[str, str], ResolvedDataset] = {}
    for dataset in datasets:
        known = unique.get(dataset.key)
        if known is None or (known is not dataset and _informed(dataset) > _informed(known)):
            unique[dataset.key] = dataset
    return unique


def _informed(dataset: ResolvedDataset) -> tuple[bool, bool]:
    return bool(dataset.columns), bool(dataset.location or dataset.table)


def dataset_entity(dataset: ResolvedDataset) -> JSON:
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


def column_entities(dataset: ResolvedDataset) -> list[JSON]:
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
