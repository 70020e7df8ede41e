"""Column lineage of one output: Purview's `columnMapping` and the full detail, from the `columnLineage` facet.

`columnMapping` is Purview's format, a JSON string with one object per (input dataset, output dataset) pair:
`[{"DatasetMapping": {"Source": in qn, "Sink": out qn}, "ColumnMapping": [{"Source": col, "Sink": col}]}]`, with
only DIRECT dependencies (an input field without `transformations`, as older producers send, is direct).
`columnLineageDetail` keeps everything (DIRECT and INDIRECT, subtypes, descriptions, masking, the deprecated
`transformationType`/`transformationDescription`, the facet's top-level `dataset[]`) as a JSON string.
Everything is sorted, so the same facet always gives the same text.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from .datasets import ResolvedDataset

ResolveName = Callable[[str, str], ResolvedDataset]


@dataclass(frozen=True)
class ColumnLineage:
    column_mapping: str
    detail: str
    sources: tuple[ResolvedDataset, ...]  # every dataset the facet names, sorted by (type, qualifiedName)


def column_lineage(facet: Any, output: ResolvedDataset, resolve: ResolveName) -> ColumnLineage | None:
    """The column lineage of `output` from its `columnLineage` facet, or None when there is no usable facet."""
    if not isinstance(facet, dict) or not isinstance(facet.get("fields"), dict):
        return None
    sources: dict[tuple[str, str], ResolvedDataset] = {}
    pairs: dict[str, set[tuple[str, str]]] = {}
    fields_detail = []
    for sink_column in sorted(facet["fields"]):
        spec = facet["fields"][sink_column]
        if not isinstance(spec, dict):
            continue
        inputs_detail = _input_fields(spec.get("inputFields"), resolve, sources)
        for detail in inputs_detail:
            if _is_direct(detail["transformations"]):
                pairs.setdefault(detail["qualifiedName"], set()).add((detail["field"], sink_column))
        entry: dict[str, Any] = {"field": sink_column, "inputFields": _sorted_details(inputs_detail)}
        for legacy in ("transformationDescription", "transformationType"):
            if isinstance(spec.get(legacy), str):
                entry[legacy] = spec[legacy]
        fields_detail.append(entry)
    dataset_detail = _sorted_details(_input_fields(facet.get("dataset"), resolve, sources))
    mapping = [{"DatasetMapping": {"Source": source, "Sink": output.qualified_name},
                "ColumnMapping": [{"Source": a, "Sink": b} for a, b in sorted(columns)]}
               for source, columns in sorted(pairs.items())]
    detail = {"dataset": dataset_detail, "fields": fields_detail}
    return ColumnLineage(column_mapping=_compact(mapping), detail=_compact(detail),
                         sources=tuple(sources[key] for key in sorted(sources)))


def _input_fields(items: Any, resolve: ResolveName,
                  sources: dict[tuple[str, str], ResolvedDataset]) -> list[dict[str, Any]]:
    """Each well-formed input field as sent (field, name, namespace, transformations) with the dataset it maps to
    (qualifiedName, typeName), keys sorted so that the detail serialises without sort_keys; the datasets are
    collected in `sources`."""
    details = []
    datasets: dict[tuple[str, str], ResolvedDataset] = {}
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        namespace, name, field = item.get("namespace"), item.get("name"), item.get("field")
        if not (isinstance(namespace, str) and isinstance(name, str) and isinstance(field, str)):
            continue
        transformations = _normalised(item.get("transformations"))
        dataset = datasets.get((namespace, name))
        if dataset is None:
            dataset = datasets[(namespace, name)] = resolve(namespace, name)
            sources.setdefault(dataset.key, dataset)
        details.append({"field": field, "name": name, "namespace": namespace,
                        "qualifiedName": dataset.qualified_name, "transformations": transformations,
                        "typeName": dataset.type_name})
    return details


def _normalised(transformations: Any) -> list[dict[str, Any]]:
    """The transformations with sorted keys (so that they serialise without sort_keys), in a stable order."""
    if not isinstance(transformations, list):
        return []
    normalised = [t if len(t) < 2 else dict(sorted(t.items())) for t in transformations if isinstance(t, dict)]
    if len(normalised) > 1:
        normalised.sort(key=repr)
    return normalised


def _is_direct(transformations: list[dict[str, Any]]) -> bool:
    if not transformations:
        return True
    for transformation in transformations:
        if transformation.get("type") == "DIRECT":
            return True
    return False


def _sorted_details(details: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Input fields without duplicates, sorted by dataset, field, then everything else."""
    if len(details) < 2:
        return details
    unique = {(d["qualifiedName"], d["field"], d["typeName"], d["namespace"], d["name"],
               repr(d["transformations"])): d for d in details}
    return [unique[key] for key in sorted(unique)]


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
