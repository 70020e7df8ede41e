"""Which inputs each process lists: no false edges, and temporary datasets passed through (pure, no I/O).

**No false edges.** A run with several outputs used to give every output's process every input of the run. When an
output says which inputs it derives from, its process lists those inputs only:

- its `columnLineage` facet: the datasets of its `fields[*].inputFields` and of the dataset-wide `dataset` list
  (ColumnLineageDatasetFacet 1-2-0, spec/facets/ColumnLineageDatasetFacet.json of the OpenLineage repo), as the
  column lineage the process shows already reads them (`ColumnLineage.sources`);
- the experimental `lineage` facet (spec/facets/LineageFacet.json, OpenLineage `main` 2026-08): on the output
  dataset (`LineageDatasetFacet`: `inputs`, `fields[*].inputs`), or on the job (`LineageJobFacet`: the `entries` of
  type DATASET whose namespace and name are the output's). Only sources of type DATASET count; an entry whose
  `inputs` list is empty says explicitly "no tracked upstream source".

Inputs that no output's lineage names stay on every output (nothing says which output they feed); an output that
names nothing keeps every input, as before. Column mappings are not changed by this.

**Temporary datasets** (`is_temporary`): a dataset in the `inmemory` namespace (naming spec, "In memory") or whose
`datasetType` facet has `subType` TEMPORARY (spec/facets/DatasetTypeDatasetFacet.json; website/docs/spec/examples.md,
"Job-to-Job lineage": `datasetType` JOB_OUTPUT, `subType` TEMPORARY, "consumers ... can choose not to represent them
(and draw the lineage directly to the next task instead)") is never an entity. A run that reads one lists, in its
place, the inputs of the runs that wrote it under the same parent run (`temporary_scope`): what `upstream_inputs`
returns from the writers the run-state store remembers (`temporary_writes`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from olparser.runs.model import DatasetFacts, RunSnapshot

Name = tuple[str, str]  # (namespace, name)
TEMPORARY_NAMESPACE = "inmemory"
TEMPORARY_SUBTYPE = "TEMPORARY"
NO_NAMES: frozenset[Name] = frozenset()
MAX_TEMPORARY_DEPTH = 8  # temporary datasets read through temporary datasets: at most this many hops are followed


def is_temporary_name(namespace: str) -> bool:
    """True for the naming spec's in-memory namespace (`inmemory://`, as the spec writes it, or `inmemory`)."""
    return namespace == TEMPORARY_NAMESPACE or namespace.startswith(TEMPORARY_NAMESPACE + ":")


def is_temporary(facts: DatasetFacts) -> bool:
    """A temporary dataset: `inmemory` namespace, or a `datasetType` facet whose `subType` is TEMPORARY."""
    if is_temporary_name(facts.namespace):
        return True
    facet = facts.facets.get("datasetType")
    return (
        isinstance(facet, dict)
        and isinstance(facet.get("subType"), str)
        and facet["subType"].upper() == TEMPORARY_SUBTYPE
    )


def temporary_names(run: RunSnapshot) -> frozenset[Name]:
    """The (namespace, name) of the run's temporary inputs and outputs (the common case, none, costs one look at
    each dataset's namespace and facet names)."""
    found = [
        (d.namespace, d.name)
        for d in (*run.inputs, *run.outputs)
        if (d.namespace.startswith(TEMPORARY_NAMESPACE) or "datasetType" in d.facets) and is_temporary(d)
    ]
    return frozenset(found) if found else NO_NAMES


def temporary_scope(run: RunSnapshot) -> str | None:
    """Where a temporary dataset's name means the same dataset: the parent run (`parent` run facet,
    spec/facets/ParentRunFacet.json: `run.runId`), e.g. the Spark application of openlineage-spark's action runs,
    the DAG run of an Airflow task. None without a parent: a temporary dataset then passes nothing on."""
    parent = run.run_facets.get("parent")
    if not isinstance(parent, dict):
        return None
    parent_run = parent.get("run")
    run_id = parent_run.get("runId") if isinstance(parent_run, dict) else None
    return run_id if isinstance(run_id, str) and run_id else None


def temporary_writes(run: RunSnapshot) -> dict[Name, tuple[DatasetFacts, ...]]:
    """What the run passes on through each temporary dataset it writes: its inputs (temporary ones included, which
    `upstream_inputs` follows), narrowed by that output's declared sources when it declares any."""
    temporary_outputs = [d for d in run.outputs if is_temporary(d)]
    if not temporary_outputs:
        return {}
    declared = {(d.namespace, d.name): declared_names(d, run.job_facets) for d in run.outputs}
    mentioned = set().union(*(names for names in declared.values() if names is not None))
    writes = {}
    for output in temporary_outputs:
        names = declared[(output.namespace, output.name)]
        writes[(output.namespace, output.name)] = tuple(
            d
            for d in run.inputs
            if names is None or (d.namespace, d.name) in names or (d.namespace, d.name) not in mentioned
        )
    return writes


def upstream_inputs(
    run: RunSnapshot, lookup: Callable[[Iterable[Name]], Mapping[Name, Iterable[DatasetFacts]]]
) -> dict[Name, tuple[DatasetFacts, ...]]:
    """For each temporary input of `run`, the non-temporary datasets its writers read, following temporary datasets
    read by those writers (at most MAX_TEMPORARY_DEPTH hops; a cycle ends). `lookup(names)` answers the writers'
    inputs of each temporary name known (the run-state store, within the run's scope)."""
    wanted = sorted({(d.namespace, d.name) for d in run.inputs if is_temporary(d)})
    if not wanted:
        return {}
    sources: dict[Name, tuple[DatasetFacts, ...]] = {}
    known: dict[Name, tuple[DatasetFacts, ...]] = {}
    frontier = set(wanted)
    for _ in range(MAX_TEMPORARY_DEPTH):
        if not frontier:
            break
        found = lookup(sorted(frontier))
        for name in frontier:
            known[name] = tuple(found.get(name, ()))
        frontier = {(d.namespace, d.name) for facts in found.values() for d in facts if is_temporary(d)} - set(known)
    for name in wanted:
        result: dict[Name, DatasetFacts] = {}
        seen = {name}
        stack = [name]
        while stack:
            for facts in known.get(stack.pop(), ()):
                key = (facts.namespace, facts.name)
                if is_temporary(facts):
                    if key not in seen:
                        seen.add(key)
                        stack.append(key)
                else:
                    result.setdefault(key, facts)
        sources[name] = tuple(result[key] for key in sorted(result))
    return sources


def declared_names(output: DatasetFacts, job_facets: Mapping[str, Any]) -> frozenset[Name] | None:
    """The (namespace, name) of the datasets `output` says it derives from (its `columnLineage` facet, its `lineage`
    facet, its entry in the job's `lineage` facet), or None when it says nothing. Used where no resolved column
    lineage exists (the temporary outputs a run passes on); the builder reads the same facets (`declared_keys`)."""
    names: set[Name] = set()
    said = False
    facet = output.facets.get("columnLineage")
    if isinstance(facet, dict):
        fields = facet.get("fields")
        if isinstance(fields, dict):
            for spec in fields.values():
                if isinstance(spec, dict):
                    _add_names(spec.get("inputFields"), names, typed=False)
        _add_names(facet.get("dataset"), names, typed=False)
        said = bool(names)
    found = lineage_facet_names(output, job_facets)
    if found is not None:
        names |= found
        said = True
    return frozenset(names) if said else None


def lineage_facet_names(output: DatasetFacts, job_facets: Mapping[str, Any]) -> frozenset[Name] | None:
    """The sources the experimental `lineage` facets give `output` (its own `LineageDatasetFacet`, and its entries in
    the job's `LineageJobFacet`), or None when neither speaks of it. An entry with an `inputs` list speaks of it even
    when the list is empty ("no tracked upstream source"); a dataset facet or entry with neither `inputs` nor
    `fields` says nothing."""
    names: set[Name] = set()
    said = False
    own = output.facets.get("lineage")
    if isinstance(own, dict):
        said |= _add_entry(own, names)
    job = job_facets.get("lineage")
    entries = job.get("entries") if isinstance(job, dict) else None
    if isinstance(entries, list):
        for entry in entries:
            if (
                isinstance(entry, dict)
                and entry.get("type", "DATASET") == "DATASET"
                and entry.get("namespace") == output.namespace
                and entry.get("name") == output.name
            ):
                said |= _add_entry(entry, names)
    return frozenset(names) if said else None


def _add_entry(entry: Mapping[str, Any], names: set[Name]) -> bool:
    said = isinstance(entry.get("inputs"), list)
    _add_names(entry.get("inputs"), names, typed=True)
    fields = entry.get("fields")
    if isinstance(fields, dict):
        for spec in fields.values():
            if isinstance(spec, dict) and isinstance(spec.get("inputs"), list):
                said = True
                _add_names(spec["inputs"], names, typed=True)
    return said


def _add_names(items: Any, names: set[Name], *, typed: bool) -> None:
    """Add the (namespace, name) of each well-formed dataset reference; `typed`: the lineage facet's, where only
    `type` DATASET (its default here) names a dataset, JOB names a job."""
    if not isinstance(items, list):
        return
    for item in items:
        if not isinstance(item, dict) or (typed and item.get("type", "DATASET") != "DATASET"):
            continue
        namespace, name = item.get("namespace"), item.get("name")
        if isinstance(namespace, str) and isinstance(name, str):
            names.add((namespace, name))


def narrowed(inputs: list[Any], declared: list[frozenset[Any] | None]) -> list[list[Any]]:
    """Each output's inputs: those it declares (keys in its set), plus those no output declares; every input for
    an output that declares nothing (None). `inputs` are resolved datasets (`.key`), in the run's order."""
    if declared.count(None) == len(declared):
        return [inputs] * len(declared)
    mentioned = set().union(*(names for names in declared if names is not None))
    return [
        inputs if names is None else [d for d in inputs if d.key in names or d.key not in mentioned]
        for names in declared
    ]
